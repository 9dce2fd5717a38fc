//! Issue 48 items 1–4: a preview fetched from another clone runs nothing it records
//! (a command preview's argv, a forged `details.fmt`) on `refresh`, `refresh --all`,
//! `apply --refresh` or MCP `resolve` with `refresh: true` until the user trusts it;
//! a recorded folder outside the repository is refused; an MCP server without
//! `--allow-run` runs no program on any path. Built as the attacks were: a second
//! clone stages (or forges with git plumbing) and the first fetches `refs/astedit/*`.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;

use serde_json::json;
use serde_json::Value;

use crate::mcp::Server;
use crate::util::TestRepo;

/// The first clone: two Python files, committed.
fn first() -> TestRepo {
    let a = TestRepo::new();
    a.write("a.py", "x = old(1)\n\n\ny = 2\n");
    a.write("b.txt", "one\n");
    a.commit_all("init");
    a
}

/// A second clone of `a` (the teammate or CI shard whose previews `a` fetches).
fn second(a: &TestRepo) -> TestRepo {
    let b = TestRepo::new();
    b.git(&["remote", "add", "origin", &a.path().display().to_string()]);
    b.git(&["fetch", "-q", "origin"]);
    b.git(&["reset", "-q", "--hard", "origin/main"]);
    b
}

/// `a` fetches every preview ref of `b`, as a collector or a teammate would.
fn fetch_previews(a: &TestRepo, b: &TestRepo) {
    a.git(&[
        "fetch",
        "-q",
        &b.path().display().to_string(),
        "refs/astedit/*:refs/astedit/*",
    ]);
}

/// A shell line that appends to b.txt and leaves a marker file at `marker`.
fn marking(marker: &Path) -> String {
    format!("echo two >> b.txt; touch '{}'", marker.display())
}

/// Stages a `run` preview in `b` whose command writes `marker`; returns its id (the
/// marker its staging left is removed).
fn stage_run(b: &TestRepo, marker: &Path) -> String {
    let out = b.run(&["--json", "run", "--", "sh", "-c", &marking(marker)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::remove_file(marker).expect("staging ran the command");
    out.json()["id"].as_str().expect("id").to_string()
}

/// The attack's setup: a second clone stages a `run` preview whose command leaves a
/// marker file, and the first clone fetches it.
struct Fetched {
    a: TestRepo,
    b: TestRepo,
    /// Holds the marker's folder.
    _dir: tempfile::TempDir,
    marker: std::path::PathBuf,
    id: String,
}

fn fetched_run_preview() -> Fetched {
    let a = first();
    let b = second(&a);
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let id = stage_run(&b, &marker);
    fetch_previews(&a, &b);
    Fetched {
        a,
        b,
        _dir: dir,
        marker,
        id,
    }
}

/// The full commit id a preview ref names.
fn commit_of(t: &TestRepo, id: &str) -> String {
    t.git(&["rev-parse", &format!("refs/astedit/{id}")])
        .trim()
        .to_string()
}

/// Re-forges preview `id` of `t` with git plumbing: its metadata changed by `edit`,
/// the commit written again and its ref moved to the new id. Returns the new id.
pub(crate) fn forge(t: &TestRepo, id: &str, edit: impl FnOnce(&mut Value)) -> String {
    let commit = commit_of(t, id);
    let raw = t.git(&["cat-file", "commit", &commit]);
    const BEGIN: &str = "--- astedit-meta v1 ---\n";
    const END: &str = "\n--- end astedit-meta ---";
    let start = raw.find(BEGIN).expect("metadata") + BEGIN.len();
    let end = start + raw[start..].find(END).expect("end of metadata");
    let mut envelope: Value = serde_json::from_str(&raw[start..end]).expect("json");
    edit(&mut envelope["meta"]);
    let forged = format!(
        "{}{}{}",
        &raw[..start],
        serde_json::to_string_pretty(&envelope).expect("json"),
        &raw[end..]
    );
    let mut cmd = Command::new("git");
    t.env(&mut cmd);
    let mut child = cmd
        .current_dir(t.path())
        .args(["hash-object", "-t", "commit", "-w", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git hash-object");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(forged.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("hash-object");
    let new = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_string();
    let new_id = new[..12].to_string();
    t.git(&["update-ref", "-d", &format!("refs/astedit/{id}")]);
    t.git(&["update-ref", &format!("refs/astedit/{new_id}"), &new]);
    new_id
}

/// The refusal every refresh path gives an untrusted preview that would run a
/// program: exit 4, `untrusted-preview`, the exact argv in the message.
#[track_caller]
fn assert_untrusted(out: &crate::util::Output, id: &str) -> Value {
    assert_eq!(out.code, 4, "{}{}", out.stdout, out.stderr);
    let v = out.json();
    assert_eq!(v["error"]["code"], "untrusted-preview", "{v}");
    assert_eq!(v["error"]["details"]["id"], id, "{v}");
    let hint = v["error"]["hint"].as_str().unwrap_or_default();
    assert!(hint.contains(&format!("git astedit trust {id}")), "{hint}");
    v
}

/// `a` holds the fetched refs and nothing else of astedit's: nothing was staged.
#[track_caller]
fn assert_nothing_staged(a: &TestRepo, fetched: &[&str]) {
    let mut want: Vec<String> = fetched
        .iter()
        .map(|id| format!("refs/astedit/{id}"))
        .collect();
    want.sort();
    assert_eq!(a.astedit_refs(), want);
}

#[test]
fn a_fetched_run_preview_runs_nothing_on_any_refresh_until_trusted() {
    let Fetched {
        a,
        b: _b,
        _dir,
        marker,
        id,
    } = fetched_run_preview();
    // Current (nothing changed): the command used to run before "current" was said.
    assert_untrusted(&a.run(&["--json", "refresh", &id]), &id);
    assert!(
        !marker.exists(),
        "the refresh of a current preview ran the command"
    );
    // The work tree moved on (b.txt), so every path would have to re-run the command.
    a.write("b.txt", "zero\none\n");

    // refresh, refresh --all: refused before the command starts.
    for args in [vec!["refresh", &id], vec!["refresh", "--all", &id]] {
        let mut argv = vec!["--json"];
        argv.extend(args.iter().copied());
        let v = assert_untrusted(&a.run(&argv), &id);
        assert_eq!(
            v["error"]["details"]["runs"]["argv"],
            json!(["sh", "-c", marking(&marker)]),
            "the exact argv: {v}"
        );
        assert_eq!(v["error"]["details"]["runs"]["folder"], "", "{v}");
        assert!(!marker.exists(), "{args:?} ran the command");
        assert_nothing_staged(&a, &[&id]);
    }
    // The text names the argv as it would run, and the folder.
    let text = a.run(&["refresh", &id]);
    assert_eq!(text.code, 4, "{}", text.stderr);
    assert!(
        text.stderr.contains("command: sh -c 'echo two"),
        "{}",
        text.stderr
    );
    assert!(
        text.stderr.contains("in folder: the top of the repository"),
        "{}",
        text.stderr
    );
    // apply --refresh of the stale preview: refused, nothing written.
    let v = assert_untrusted(&a.run(&["--json", "apply", "--refresh", &id]), &id);
    assert!(!marker.exists(), "apply --refresh ran the command: {v}");
    assert_eq!(a.read_string("b.txt"), "zero\none\n");
    assert_nothing_staged(&a, &[&id]);
    // MCP resolve with refresh, on a server that may run programs: refused too.
    let mut s = Server::start_args(&a, &["--allow-run"]);
    s.handshake("2025-06-18", "agent");
    let r = s.call(
        "resolve",
        json!({"action": "apply", "id": id, "refresh": true, "reason": "collect"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        crate::mcp::error_json(&r)["error"]["code"],
        "untrusted-preview",
        "{r}"
    );
    drop(s);
    assert!(!marker.exists(), "MCP resolve refresh ran the command");
    assert_nothing_staged(&a, &[&id]);

    // Listed, shown (with the argv it would run) and untrusted in the JSON.
    let listed = a.run(&["--json", "list"]).json();
    crate::contract::validate(&a, "list", &listed);
    assert_eq!(listed["previews"][0]["origin"], "untrusted", "{listed}");
    let shown = a.run(&["show", &id]);
    assert!(
        shown.stdout.contains("command: sh -c 'echo two"),
        "{}",
        shown.stdout
    );

    // Trusted once read: the refresh runs it, and its successor is trusted in turn.
    let t = a.run(&["--json", "trust", &id, "--yes"]);
    assert_eq!(t.code, 0, "{}", t.stderr);
    crate::contract::validate(&a, "trust", &t.json());
    assert_eq!(t.json()["recorded"], true);
    assert_eq!(t.json()["runs"]["argv"][0], "sh");
    let done = a.run(&["--json", "refresh", &id]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(marker.exists(), "the trusted preview's command ran");
    let successor = done.json()["successor"]
        .as_str()
        .expect("successor")
        .to_string();
    let shown = a.run(&["--json", "show", &successor]).json();
    assert_eq!(shown["preview"]["origin"], "made-here", "{shown}");
}

#[test]
fn trust_without_a_terminal_needs_yes_and_a_reforged_preview_asks_again() {
    let Fetched {
        a,
        b: _b,
        _dir: dir,
        marker,
        id,
    } = fetched_run_preview();
    // Not a terminal, no --yes: it prints what runs, records nothing.
    let out = a.run(&["trust", &id]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("command: sh -c 'echo two"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("trust {id} --yes")),
        "{}",
        out.stderr
    );
    a.write("b.txt", "zero\none\n");
    assert_untrusted(&a.run(&["--json", "refresh", &id]), &id);
    // Trusted, then the same preview re-forged with another command: a new id, untrusted.
    assert_eq!(a.run(&["trust", &id, "--yes"]).code, 0);
    let other = dir.path().join("other");
    let forged = forge(&a, &id, |meta| {
        meta["details"]["refresh"]["argv"] = json!(["touch", other.display().to_string()]);
    });
    assert_ne!(forged, id);
    let v = assert_untrusted(&a.run(&["--json", "refresh", &forged]), &forged);
    assert_eq!(v["error"]["details"]["runs"]["argv"][0], "touch", "{v}");
    assert!(!other.exists() && !marker.exists());
    // A record whose digest is not what the preview runs (written for another
    // content under its id) trusts nothing.
    let commit = commit_of(&a, &forged);
    let record = a.path().join(".git/astedit/trusted").join(&commit);
    std::fs::write(
        &record,
        r#"{"how":"trusted","who":"x","digest":"sha256:00","at":0}"#,
    )
    .expect("write");
    assert_untrusted(&a.run(&["--json", "refresh", &forged]), &forged);
    assert!(!other.exists());
}

#[test]
fn a_forged_formatter_on_an_edit_preview_does_not_run_until_trusted() {
    let a = first();
    let b = second(&a);
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("formatted");
    let staged = b.run(&["--json", "edit", "-p", "old($A)", "-r", "new($A)", "a.py"]);
    assert_eq!(staged.code, 0, "{}", staged.stderr);
    let id = staged.json()["id"].as_str().expect("id").to_string();
    // The formatter is added by hand: `sh -c 'touch MARKER; cat'` keeps the text.
    let fmt = format!("python: sh -c \"touch {}; cat\"", marker.display());
    let forged = forge(&b, &id, |meta| {
        meta["details"]["fmt"] = json!([fmt]);
    });
    fetch_previews(&a, &b);
    // a.py changed away from the preview's change: the path is re-run, so formatted.
    a.write("a.py", "x = old(1)\n\n\ny = 3\n");
    let v = assert_untrusted(&a.run(&["--json", "refresh", &forged]), &forged);
    // As a refresh reads it: the language by its name, the command as recorded.
    let read = fmt.replacen("python", "Python", 1);
    assert_eq!(
        v["error"]["details"]["runs"]["formatters"],
        json!([read]),
        "{v}"
    );
    assert_untrusted(&a.run(&["--json", "refresh", "--all", &forged]), &forged);
    assert_untrusted(&a.run(&["--json", "apply", "--refresh", &forged]), &forged);
    assert!(!marker.exists(), "the forged formatter ran");
    assert_nothing_staged(&a, &[&forged]);
    // `show` prints the formatter it would run.
    let shown = a.run(&["show", &forged]);
    assert!(
        shown.stdout.contains("formatter: Python: sh -c"),
        "{}",
        shown.stdout
    );
    // Trusted: it runs once the formatter itself is allowed too, as any command a
    // repository or preview names (consent.rs): the refusal gives its digest.
    assert_eq!(a.run(&["trust", &forged, "--yes"]).code, 0);
    let refused = a.run(&["--json", "refresh", &forged]);
    assert_eq!(refused.code, 4, "{}", refused.stdout);
    let v = refused.json();
    assert_eq!(v["error"]["code"], "command-not-allowed", "{v}");
    assert!(!marker.exists(), "the trusted formatter ran unallowed");
    let digest = v["error"]["details"]["commands"][0]["digest"]
        .as_str()
        .expect("digest");
    assert_eq!(a.run(&["allow", digest]).code, 0);
    let done = a.run(&["--json", "refresh", &forged]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(marker.exists(), "the trusted formatter ran");
}

#[test]
fn an_untrusted_preview_that_runs_nothing_still_refreshes_and_applies() {
    let a = first();
    let b = second(&a);
    let staged = b.run(&["--json", "edit", "-p", "old($A)", "-r", "new($A)", "a.py"]);
    let id = staged.json()["id"].as_str().expect("id").to_string();
    fetch_previews(&a, &b);
    let shown = a.run(&["--json", "show", &id]).json();
    assert_eq!(shown["preview"]["origin"], "untrusted", "{shown}");
    a.write("a.py", "x = old(1)\n\n\ny = 3\n");
    let done = a.run(&["--json", "refresh", &id]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let successor = done.json()["successor"]
        .as_str()
        .expect("successor")
        .to_string();
    // A refresh made here does not make a fetched preview trusted.
    let shown = a.run(&["--json", "show", &successor]).json();
    assert_eq!(shown["preview"]["origin"], "untrusted", "{shown}");
    let applied = a.run(&["apply", &successor]);
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    assert_eq!(a.read_string("a.py"), "x = new(1)\n\n\ny = 3\n");
}

#[test]
fn a_recorded_folder_outside_the_repository_is_refused_even_when_trusted() {
    let Fetched {
        a,
        b,
        _dir,
        marker,
        id,
    } = fetched_run_preview();
    let forged = forge(&b, &id, |meta| {
        meta["details"]["refresh"]["prefix"] = json!("../../..");
    });
    fetch_previews(&a, &b);
    assert_eq!(a.run(&["trust", &forged, "--yes"]).code, 0);
    a.write("b.txt", "zero\none\n");
    for argv in [
        vec!["--json", "refresh", &forged],
        vec!["--json", "apply", "--refresh", &forged],
    ] {
        let out = a.run(&argv);
        assert_eq!(out.code, 4, "{}", out.stderr);
        let v = out.json();
        assert_eq!(v["error"]["code"], "uncontained-path", "{v}");
        assert_eq!(v["error"]["details"]["path"], "../../..", "{v}");
        assert!(
            !marker.exists(),
            "{argv:?} ran the command outside the repository"
        );
    }
    // A pathspec that climbs out, on a preview that runs nothing: refused the same.
    let staged = b.run(&["--json", "edit", "-p", "old($A)", "-r", "new($A)", "a.py"]);
    let edit = staged.json()["id"].as_str().expect("id").to_string();
    let climbing = forge(&b, &edit, |meta| {
        meta["details"]["refresh"]["pathspecs"] = json!(["../../../etc"]);
    });
    fetch_previews(&a, &b);
    let out = a.run(&["--json", "refresh", "--all", &climbing]);
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert_eq!(out.json()["error"]["code"], "uncontained-path");
}

#[test]
fn mcp_without_allow_run_runs_no_program_on_any_path() {
    let a = first();
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    // A preview made here, trusted: only --allow-run is missing.
    let out = a.run(&["--json", "run", "--", "sh", "-c", &marking(&marker)]);
    let id = out.json()["id"].as_str().expect("id").to_string();
    std::fs::remove_file(&marker).expect("staging ran the command");
    a.write("b.txt", "zero\none\n");
    a.write(
        "astedit.toml",
        format!(
            "[fmt]\npython = \"sh -c 'touch {}; cat'\"\n",
            marker.display()
        ),
    );
    let mut s = Server::start(&a);
    s.handshake("2025-06-18", "agent");
    let refused = |r: &Value| {
        assert_eq!(r["isError"], true, "{r}");
        assert_eq!(
            crate::mcp::error_json(r)["error"]["code"],
            "run-not-allowed",
            "{r}"
        );
    };
    refused(&s.call(
        "resolve",
        json!({"action": "apply", "id": id, "refresh": true, "reason": "r"}),
    ));
    refused(&s.call(
        "resolve",
        json!({"action": "apply", "id": id, "reason": "r",
               "verify": format!("touch '{}'", marker.display())}),
    ));
    refused(&s.call(
        "ast_edit",
        json!({"ops": [{"pattern": "old($A)", "rewrite": "new($A)"}], "paths": ["a.py"],
               "fmt": true, "reason": "r"}),
    ));
    drop(s);
    assert!(!marker.exists(), "a program ran without --allow-run");
    assert_nothing_staged(&a, &[&id]);
    // With --allow-run, the same refresh runs (the preview was made here).
    let mut s = Server::start_args(&a, &["--allow-run"]);
    s.handshake("2025-06-18", "agent");
    let r = s.call(
        "resolve",
        json!({"action": "apply", "id": id, "refresh": true, "reason": "r"}),
    );
    drop(s);
    assert!(marker.exists(), "{r}");
}

#[test]
fn the_trust_record_is_local_and_pruned_by_discard_and_gc() {
    let a = first();
    let staged = a.run(&["--json", "edit", "-p", "old($A)", "-r", "new($A)", "a.py"]);
    let id = staged.json()["id"].as_str().expect("id").to_string();
    let records = a.path().join(".git/astedit/trusted");
    let record = records.join(commit_of(&a, &id));
    assert!(record.is_file(), "staging here records the preview");
    // Another clone fetching it gets the preview, never the record.
    let b = second(&a);
    fetch_previews(&b, &a);
    let shown = b.run(&["--json", "show", &id]).json();
    assert_eq!(shown["preview"]["origin"], "untrusted", "{shown}");
    assert!(!b.path().join(".git/astedit/trusted").exists());
    // Discard forgets it.
    assert_eq!(a.run(&["discard", &id]).code, 0);
    assert!(!record.exists(), "discard forgets the record");
    // gc forgets a record whose commit is neither pending nor journalled.
    let stray = records.join("0123456789012345678901234567890123456789");
    std::fs::write(&stray, r#"{"how":"made-here","who":"x","at":0}"#).expect("write");
    let kept = a.run(&["--json", "edit", "-p", "old($A)", "-r", "new($A)", "a.py"]);
    let kept = commit_of(&a, kept.json()["id"].as_str().expect("id"));
    assert_eq!(a.run(&["gc"]).code, 0);
    assert!(!stray.exists(), "gc forgets a record of nothing");
    assert!(
        records.join(kept).is_file(),
        "gc keeps a pending preview's record"
    );
}

#[test]
fn a_review_split_of_a_fetched_run_preview_is_refused() {
    let Fetched {
        a,
        b: _b,
        _dir,
        marker,
        id,
    } = fetched_run_preview();
    assert_eq!(a.run(&["review", &id, "--accept", "all"]).code, 0);
    // The parts would be made here, hence trusted, with the fetched argv.
    let out = a.run(&["--json", "review", &id, "--split"]);
    assert_untrusted(&out, &id);
    assert_nothing_staged(&a, &[&id]);
    // Trusted first, it splits.
    assert_eq!(a.run(&["trust", &id, "--yes"]).code, 0);
    let out = a.run(&["--json", "review", &id, "--split"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(!marker.exists());
}

#[test]
fn a_split_of_a_fetched_run_preview_is_not_signed_here() {
    let a = first();
    let b = second(&a);
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let line = format!("echo z >> a.py; {}", marking(&marker));
    let out = b.run(&["--json", "run", "--", "sh", "-c", &line]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::remove_file(&marker).expect("staging ran the command");
    let id = out.json()["id"].as_str().expect("id").to_string();
    fetch_previews(&a, &b);
    // The collector signs what it stages, with a key its allowed signers hold.
    let key = crate::signing::keygen(a.home(), "collector");
    let allowed = a.home().join("allowed_signers");
    let line = format!("ci@example.com {}\n", crate::signing::public(&key));
    std::fs::write(&allowed, line).expect("write");
    a.git(&["config", "gpg.format", "ssh"]);
    a.git(&["config", "user.signingKey", &key.to_string_lossy()]);
    a.git(&[
        "config",
        "gpg.ssh.allowedSignersFile",
        &allowed.to_string_lossy(),
    ]);
    a.git(&["config", "astedit.signPreviews", "true"]);
    // A partial apply leaves the rest pending as a new preview with the same argv.
    let out = a.run(&["--json", "apply", &id, "--", "b.txt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let remainder = out.json()["split"]["remainder"]
        .as_str()
        .expect("remainder")
        .to_string();
    let shown = a.run(&["--json", "show", &remainder]).json();
    assert_eq!(shown["preview"]["origin"], "untrusted", "{shown}");
    assert_eq!(
        shown["preview"]["signature"]["status"], "unsigned",
        "{shown}"
    );
    a.write("a.py", "x = old(1)\n\n\ny = 3\n");
    assert_untrusted(&a.run(&["--json", "refresh", &remainder]), &remainder);
    assert!(!marker.exists(), "the split laundered the fetched command");
}
