//! Snapshot tests (insta, as jj does): the whole invocation of every command, text and
//! `--json`, on one fixed fixture repository, the MCP server's tool results for the
//! same flows, and `--help` of every command. They hold the output byte for byte
//! while the house is rebuilt (issue 28): a change of output is its own commit.
//!
//! The environment is hermetic and pinned (identity and dates,
//! `tests/integration/util.rs`), and each flow runs in order in its own fresh
//! repository. Blob ids and the fixture's commits are therefore stable.
//!
//! Redacted, because they are truly unstable:
//! * preview ids and commits (by [`Ids`], not a filter): a preview commit's message
//!   holds the wall-clock staging time in nanoseconds (`staged_at_ns`,
//!   `crates/txn/src/txn/store/mod.rs` `write_commits`), so its id differs on every run
//!   even with pinned dates. Each preview is named by the order it enters the journal:
//!   `[P1]` for its 12-digit id, `[P1-commit]` for the full commit; a pull request's
//!   branch commit on the remote is `[PR1-commit]`;
//! * the temporary folders (insta filters, see [`settings`]): the repository, the
//!   stand-in `gh`'s folder and its bare remote → `[REPO]`, `[GH]`, `[REMOTE]`;
//! * RFC 3339 times → `[TIME]`: preview and journal times are the system clock's
//!   (not the pinned committer date). `gc` runs with `--expire now` and nothing
//!   pending, so what it prunes does not depend on the clock either (see `cli_flow`).
//!
//! Updating: `INSTA_UPDATE=always cargo test --test integration snapshots::` rewrites
//! the `.snap` files under `tests/integration/snapshots/` (or `cargo insta review`
//! with cargo-insta); review the diff and commit it with its reason. With `CI=true`
//! (or `INSTA_UPDATE=no`) a mismatch fails and nothing is written.

use serde_json::json;
use serde_json::Value;

use crate::mcp::GhStub;
use crate::mcp::Server;
use crate::util::Output;
use crate::util::TestRepo;

/// Rust and JavaScript files, and codemod rules for `scan`, committed.
fn fixture() -> TestRepo {
    let t = TestRepo::new();
    t.write(
        "src/a.rs",
        "fn main() {\n    foo(1);\n    foo(foo(2));\n}\n",
    );
    t.write("src/b.rs", "fn b() { foo(3); }\n");
    t.write("src/c.rs", "pub const LIMIT: u32 = 10;\n");
    t.write(
        "web/app.js",
        "let y = ((a));\nif (x == 1) { f(((b))) }\nif (x == null) {}\n",
    );
    t.write("web/ok.js", "const ok = 1;\n");
    t.write("astedit.toml", RULES);
    t.commit_all("init");
    t
}

const RULES: &str = r#"
[[rules]]
id = "strict-equality"
language = "javascript"
severity = "error"
message = "use === instead of =="
rule.pattern = "$A == $B"
constraints.B.not.kind = "null"
fix = "$A === $B"

[[rules]]
id = "redundant-parens"
language = "javascript"
severity = "warning"
message = "redundant parentheses around $X"
rule.pattern = "($X)"
constraints.X.kind = "identifier"
fix = "$X"
"#;

/// A patch of `src/c.rs`, disjoint from the rename's files.
const PATCH: &str = "*** Begin Patch\n*** Update File: src/c.rs\n@@\n-pub const LIMIT: u32 = 10;\n+pub const LIMIT: u32 = 20;\n*** End Patch\n";

/// Stable names for the unstable object ids of a run (see the module docs).
#[derive(Default)]
struct Ids {
    /// Full commit id → its name (`P1`, `PR1`), in the order learned.
    names: Vec<(String, String)>,
}

impl Ids {
    fn add(&mut self, commit: &str, prefix: &str) {
        if commit.len() == 40 && !self.names.iter().any(|(c, _)| c == commit) {
            let n = self
                .names
                .iter()
                .filter(|(_, name)| {
                    name.starts_with(prefix)
                        && name[prefix.len()..].bytes().all(|b| b.is_ascii_digit())
                })
                .count()
                + 1;
            self.names
                .push((commit.to_string(), format!("{prefix}{n}")));
        }
    }

    /// Learns the previews the journal has seen (oldest first), the pending ones, and
    /// the branches on the stand-in remote.
    fn learn(&mut self, t: &TestRepo, remote: &std::path::Path) {
        // The journal's own chain (first parents), oldest first.
        let log = t.git_output(&[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%B%x00",
            "refs/astedit-journal",
        ]);
        for entry in log.stdout.split('\0').map(str::trim) {
            for line in entry.lines().filter(|l| l.starts_with('{')) {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    if let Some(c) = v["commit"].as_str() {
                        self.add(c, "P");
                    }
                }
            }
        }
        let refs = t.git(&["for-each-ref", "--format=%(objectname)", "refs/astedit/"]);
        for c in refs.lines() {
            self.add(c, "P");
        }
        let gd = format!("--git-dir={}", remote.display());
        let heads = t.git_output(&[
            &gd,
            "for-each-ref",
            "--format=%(objectname)",
            "refs/heads/astedit/",
        ]);
        for c in heads.stdout.lines() {
            self.add(c, "PR");
        }
    }

    /// Replaces every learned id (full, then its 12-digit prefix) by its name.
    fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (commit, name) in &self.names {
            out = out.replace(commit.as_str(), &format!("[{name}-commit]"));
            out = out.replace(&commit[..12], &format!("[{name}]"));
        }
        out
    }
}

/// Regex-escapes a literal path for an insta filter.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if !(c.is_alphanumeric() || c == '/' || c == '_' || c == '-') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The insta settings of these tests: snapshots named by the test alone, the
/// temporary folders redacted (each also as its canonical path).
fn settings(folders: &[(&std::path::Path, &str)]) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    let mut pairs: Vec<(String, &str)> = Vec::new();
    for (p, name) in folders {
        pairs.push((p.to_string_lossy().into_owned(), name));
        if let Ok(c) = p.canonicalize() {
            pairs.push((c.to_string_lossy().into_owned(), name));
        }
    }
    // Longest first, so a folder inside another is named before its parent.
    pairs.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    for (p, name) in pairs {
        s.add_filter(&escape(&p), name);
    }
    // Wall-clock times: a preview's staging time and the journal's event times are
    // the system clock's, not the pinned committer date (they are not part of any
    // object id, so the ids stay stable).
    s.add_filter(
        r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b",
        "[TIME]",
    );
    s
}

/// The whole invocation, as jj renders it: the command, stdout, stderr after a
/// divider, and the exit status.
fn render(args: &[&str], out: &Output) -> String {
    let mut s = format!("$ git astedit {}\n", args.join(" "));
    s.push_str(&out.stdout);
    if !out.stdout.is_empty() && !out.stdout.ends_with('\n') {
        s.push_str("[no newline]\n");
    }
    if !out.stderr.is_empty() {
        s.push_str("------- stderr -------\n");
        s.push_str(&out.stderr);
        if !out.stderr.ends_with('\n') {
            s.push_str("[no newline]\n");
        }
    }
    s.push_str(&format!("[exit status: {}]\n", out.code));
    s
}

/// One flow of commands, all text or all `--json`, on one repository.
struct Flow<'a> {
    t: &'a TestRepo,
    remote: &'a std::path::Path,
    ids: Ids,
    json: bool,
    name: &'static str,
    step: usize,
}

impl Flow<'_> {
    fn args<'b>(&self, args: &[&'b str]) -> Vec<&'b str> {
        let mut all = Vec::new();
        if self.json {
            all.push("--json");
        }
        all.extend_from_slice(args);
        all
    }

    /// Runs and snapshots one step.
    fn shot(&mut self, label: &str, args: &[&str]) -> Output {
        self.shot_with(label, args, &[], None)
    }

    fn shot_with(
        &mut self,
        label: &str,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<&[u8]>,
    ) -> Output {
        let all = self.args(args);
        let out = self.t.run_with(".", &all, env, stdin);
        self.record(label, &all, &out);
        out
    }

    fn record(&mut self, label: &str, all: &[&str], out: &Output) {
        self.step += 1;
        let name = format!("{}_{:02}_{label}", self.name, self.step);
        self.ids.learn(self.t, self.remote);
        insta::assert_snapshot!(name, self.ids.redact(&render(all, out)));
    }

    /// The newest pending preview's id (not snapshotted).
    fn newest(&self) -> String {
        let v = self.t.run(&["--json", "list"]).json();
        v["previews"][0]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no pending preview: {v}"))
            .to_string()
    }
}

/// Every command once (and its errors), text or `--json`.
fn cli_flow(json: bool) {
    let t = fixture();
    let gh = GhStub::new(&t);
    let mut f = Flow {
        t: &t,
        remote: gh.remote.path(),
        ids: Ids::default(),
        json,
        name: if json { "cli_json" } else { "cli_text" },
        step: 0,
    };
    let settings = settings(&[
        (t.path(), "[REPO]"),
        (gh.dir.path(), "[GH]"),
        (gh.remote.path(), "[REMOTE]"),
    ]);
    let _guard = settings.bind_to_scope();

    f.shot("grep", &["grep", "-p", "foo($A)"]);
    f.shot("grep_nothing", &["grep", "-p", "nothere($A)"]);
    f.shot("grep_bad_pattern", &["grep", "-p", "foo("]);
    f.shot("list_empty", &["list"]);
    f.shot("show_none", &["show"]);

    f.shot(
        "edit",
        &[
            "edit",
            "-p",
            "foo($A)",
            "-r",
            "bar($A)",
            "--reason",
            "rename foo",
        ],
    );
    let rename = f.newest();
    f.shot_with(
        "patch",
        &["patch", "--reason", "raise the limit"],
        &[],
        Some(PATCH.as_bytes()),
    );
    let patch = f.newest();
    f.shot("list", &["list"]);
    f.shot("show", &["show", &rename]);
    f.shot("show_stat", &["show", "--stat", &rename]);
    f.shot("show_unknown_id", &["show", "deadbeef"]);
    f.shot("apply_unknown_id", &["apply", "deadbeef"]);

    f.shot(
        "merge",
        &["merge", "--keep", "--reason", "both", &rename, &patch],
    );
    let merged = f.newest();
    f.shot("discard", &["discard", &merged]);

    f.shot("apply", &["apply", &rename]);
    f.shot("apply_again", &["apply", &rename]);
    let env = gh_env(&gh);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    f.shot_with("pr", &["pr", &rename], &env, None);
    f.shot("log", &["log"]);
    f.shot("undo", &["undo", &rename]);

    // Stale: the work tree moved under the patch's file.
    t.write(
        "src/c.rs",
        "// edited meanwhile\npub const LIMIT: u32 = 10;\n",
    );
    f.shot("apply_stale", &["apply", &patch]);
    f.shot("refresh", &["refresh", &patch]);
    let refreshed = f.newest();
    f.shot("show_refreshed", &["show", &refreshed]);
    f.shot("discard_refreshed", &["discard", &refreshed]);
    t.git(&["checkout", "--", "src/c.rs"]);

    f.shot("scan", &["scan"]);
    f.shot("scan_check", &["scan", "--check"]);
    f.shot("scan_github", &["scan", "--format", "github"]);
    f.shot("scan_sarif", &["scan", "--format", "sarif"]);
    f.shot("scan_stage", &["scan", "--stage", "--reason", "rules"]);
    let scanned = f.newest();
    f.shot("scan_bad_rule", &["scan", "--rule-id", "no-such-rule"]);

    f.shot("hook_install", &["hook", "install"]);
    f.shot("recover_status", &["recover", "--status"]);
    // Nothing pending before `gc --expire now`, so the snapshot has no expired ids
    // (preview ids are not stable).
    f.shot("discard_scanned", &["discard", &scanned]);
    f.shot("discard_undone", &["discard", &rename]);
    f.shot("log_final", &["log"]);
    f.shot("gc", &["gc", "--expire", "now"]);
    f.shot("list_after_gc", &["list"]);
    f.shot("schema", &["schema"]);
    f.shot("schema_grep", &["schema", "grep"]);
    f.shot("schema_unknown", &["schema", "nosuchcommand"]);
}

/// The commands and cases the first flow leaves out: `--apply` forms, `resolve`, undo
/// without an id, `log` options, bad and unplaceable patches, `pr` refusals, `refresh
/// --all`, `scan --apply`/`--cached`, a second hook install, `recover` with nothing to
/// do, `gc` by default, colour, completions and the manual, outside a repository.
fn cli_more_flow(json: bool) {
    let t = fixture();
    let gh = GhStub::new(&t);
    let outside = tempfile::tempdir().expect("tempdir");
    // A PATH with git and nothing else: `pr` finds no `gh` on any machine.
    let bare_path = tempfile::tempdir().expect("tempdir");
    let which = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .expect("sh");
    let git_bin = String::from_utf8_lossy(&which.stdout).trim().to_string();
    std::os::unix::fs::symlink(&git_bin, bare_path.path().join("git")).expect("symlink git");
    let mut f = Flow {
        t: &t,
        remote: gh.remote.path(),
        ids: Ids::default(),
        json,
        name: if json {
            "cli_more_json"
        } else {
            "cli_more_text"
        },
        step: 0,
    };
    let settings = settings(&[
        (t.path(), "[REPO]"),
        (gh.dir.path(), "[GH]"),
        (gh.remote.path(), "[REMOTE]"),
        (outside.path(), "[OUTSIDE]"),
        (bare_path.path(), "[BIN]"),
    ]);
    let _guard = settings.bind_to_scope();

    // Outside any repository.
    let args = f.args(&["grep", "-p", "foo($A)"]);
    let mut cmd = t.command(".", &args);
    cmd.current_dir(outside.path());
    // No GIT_CEILING_DIRECTORIES: with one, the message names the ceiling's height
    // (how deep the temporary folder lies). This assumes the temporary folder is in
    // no repository, as tempfile's $TMPDIR is on any ordinary machine.
    let out = crate::util::run_command(cmd);
    f.record("not_a_repository", &args, &out);

    f.shot(
        "edit_apply",
        &[
            "edit", "-p", "foo($A)", "-r", "bar($A)", "--apply", "src/b.rs",
        ],
    );
    f.shot("undo_newest", &["undo"]);
    f.shot("undo_unknown_id", &["undo", "deadbeef"]);
    f.shot("edit", &["edit", "-p", "foo($A)", "-r", "qux($A)"]);
    let first = f.newest();
    f.shot("resolve_discard", &["resolve", "discard", &first]);
    f.shot("edit_again", &["edit", "-p", "foo($A)", "-r", "qux($A)"]);
    let second = f.newest();
    f.shot("resolve_apply", &["resolve", "apply", &second]);
    f.shot("log_max_count", &["log", "-n", "2"]);
    f.shot("log_of_id", &["log", &first]);
    f.shot("undo", &["undo", &second]);
    f.shot("show_undone", &["show", &second]);
    f.shot("discard_undone", &["discard", &second]);

    f.shot_with("patch_garbage", &["patch"], &[], Some(b"not a patch\n"));
    f.shot_with(
        "patch_no_match",
        &["patch"],
        &[],
        Some(b"*** Begin Patch\n*** Update File: src/c.rs\n@@\n-no such line\n+other\n*** End Patch\n"),
    );
    f.shot_with(
        "patch_apply",
        &["patch", "--apply"],
        &[],
        Some(PATCH.as_bytes()),
    );
    let applied = f
        .ids
        .names
        .last()
        .map(|(c, _)| c[..12].to_string())
        .expect("an id");
    let bare = bare_path.path().to_string_lossy().into_owned();
    f.shot_with(
        "pr_without_gh",
        &["pr", &applied],
        &[("PATH", bare.as_str())],
        None,
    );
    f.shot("edit_pending", &["edit", "-p", "foo($A)", "-r", "bar($A)"]);
    let pending = f.newest();
    let env = gh_env(&gh);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    f.shot_with("pr_of_pending", &["pr", &pending], &env, None);
    f.shot_with(
        "pr_unknown_remote",
        &["pr", "--remote", "nowhere", &applied],
        &env,
        None,
    );
    t.write("src/a.rs", "fn main() {\n    foo(1);\n}\n");
    f.shot("refresh_all", &["refresh", "--all"]);
    t.git(&["checkout", "--", "src/a.rs"]);
    f.shot("refresh_all_again", &["refresh", "--all"]);

    f.shot("color_grep", &["--color=always", "grep", "-p", "foo($A)"]);
    let newest = f.newest();
    f.shot("color_show", &["--color=always", "show", &newest]);
    f.shot("color_log", &["--color=always", "log", "-n", "3"]);

    f.shot("scan_apply", &["scan", "--apply", "--reason", "rules"]);
    t.write("web/new.js", "if (p == q) {}\n");
    t.git(&["add", "web/new.js"]);
    f.shot("scan_check_cached", &["scan", "--check", "--cached"]);
    f.shot("hook_install", &["hook", "install"]);
    f.shot("hook_install_again", &["hook", "install"]);
    f.shot("recover_finish", &["recover", "--finish"]);
    f.shot("recover_abandon", &["recover", "--abandon"]);
    f.shot("gc_default", &["gc"]);
    f.shot("gc_bad_age", &["gc", "--expire", "soon"]);
    f.shot("completions_bash", &["completions", "bash"]);
    f.shot("man", &["man"]);
}

#[test]
fn cli_more_text() {
    cli_more_flow(false);
}

#[test]
fn cli_more_json() {
    cli_more_flow(true);
}

fn gh_env(gh: &GhStub) -> [(&'static str, String); 2] {
    [
        ("PATH", gh.path_env()),
        ("GH_STUB_DIR", gh.dir.path().to_string_lossy().into_owned()),
    ]
}

#[test]
fn cli_text() {
    cli_flow(false);
}

#[test]
fn cli_json() {
    cli_flow(true);
}

/// The subcommands a `--help` lists under `Commands:` (`help` left out).
fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line == "Commands:" {
            inside = true;
        } else if inside {
            if !line.starts_with("  ") {
                inside = false;
            } else if !line.starts_with("   ") {
                match line.split_whitespace().next() {
                    Some("help") | None => {}
                    Some(name) => out.push(name.to_string()),
                }
            }
        }
    }
    out
}

/// `--help` of the binary and of every command and subcommand, found from the
/// `Commands:` lists (so a new command gets a snapshot without editing this test).
#[test]
fn help_of_every_command() {
    let t = TestRepo::new();
    let settings = settings(&[(t.path(), "[REPO]")]);
    let _guard = settings.bind_to_scope();
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    while let Some(cmd) = queue.pop() {
        let mut args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        args.push("--help");
        let out = t.run(&args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let name = if cmd.is_empty() {
            "help".to_string()
        } else {
            format!("help_{}", cmd.join("_"))
        };
        insta::assert_snapshot!(name, render(&args, &out));
        seen += 1;
        for sub in subcommands(&out.stdout).into_iter().rev() {
            let mut next = cmd.clone();
            next.push(sub);
            queue.push(next);
        }
    }
    assert!(seen > 20, "{seen} help pages");
}

/// The MCP server's tool results for the same flow.
#[test]
fn mcp_tools() {
    let t = fixture();
    let gh = GhStub::new(&t);
    let env = gh_env(&gh);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let settings = settings(&[
        (t.path(), "[REPO]"),
        (gh.dir.path(), "[GH]"),
        (gh.remote.path(), "[REMOTE]"),
    ]);
    let _guard = settings.bind_to_scope();
    let mut s = Server::start_with(&t, ".", &env);
    let mut step = 0;
    let mut ids = Ids::default();
    let remote = gh.remote.path().to_path_buf();
    let mut shot = |label: &str, v: &Value| {
        step += 1;
        let text = serde_json::to_string_pretty(v).expect("JSON");
        ids.learn(&t, &remote);
        insta::assert_snapshot!(format!("mcp_{step:02}_{label}"), ids.redact(&text));
    };
    let init = s.handshake("2025-06-18", "snapshot-agent");
    shot("initialize", &init);
    let tools = s.request("tools/list", json!({}));
    shot("tools_list", &tools);

    let mut call = |s: &mut Server, label: &str, tool: &str, args: Value| -> Value {
        let result = s.call(tool, args.clone());
        shot(
            label,
            &json!({"tool": tool, "arguments": args, "result": result}),
        );
        result
    };
    call(&mut s, "grep", "ast_grep", json!({"pattern": "foo($A)"}));
    call(
        &mut s,
        "grep_capped",
        "ast_grep",
        json!({"pattern": "foo($A)", "max_results": 1}),
    );
    call(
        &mut s,
        "grep_bad_pattern",
        "ast_grep",
        json!({"pattern": "foo("}),
    );
    let edit = call(
        &mut s,
        "edit",
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "reason": "rename foo"}),
    );
    let rename = edit["structuredContent"]["id"]
        .as_str()
        .expect("preview id")
        .to_string();
    let staged = call(
        &mut s,
        "apply_patch",
        "apply_patch",
        json!({"patch": PATCH, "reason": "raise the limit"}),
    );
    let patch = staged["structuredContent"]["id"]
        .as_str()
        .expect("preview id")
        .to_string();
    call(&mut s, "previews_list", "previews", json!({}));
    call(
        &mut s,
        "previews_show",
        "previews",
        json!({"action": "show", "id": &rename, "max_diff_lines": 3}),
    );
    call(
        &mut s,
        "previews_unknown_id",
        "previews",
        json!({"action": "show", "id": "deadbeef"}),
    );
    call(
        &mut s,
        "resolve_apply",
        "resolve",
        json!({"action": "apply", "id": &rename, "reason": "tests pass"}),
    );
    call(&mut s, "pr", "pr", json!({"id": &rename}));
    call(
        &mut s,
        "undo",
        "undo",
        json!({"id": &rename, "reason": "changed my mind"}),
    );
    t.write(
        "src/c.rs",
        "// edited meanwhile\npub const LIMIT: u32 = 10;\n",
    );
    call(
        &mut s,
        "resolve_stale",
        "resolve",
        json!({"action": "apply", "id": &patch}),
    );
    t.git(&["checkout", "--", "src/c.rs"]);
    call(
        &mut s,
        "ast_apply_discard",
        "ast_apply",
        json!({"action": "discard", "id": &patch, "reason": "not now"}),
    );
    call(
        &mut s,
        "resolve_unknown_id",
        "resolve",
        json!({"action": "apply", "id": "deadbeef"}),
    );
    call(
        &mut s,
        "edit_apply",
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "baz($A)"}], "paths": ["src/b.rs"], "apply": true}),
    );
    s.finish();
}
