//! Integration tests: the result cache (`--no-cache`, `--cache-dir`, `gc`). The
//! differential tests run every grep, scan and edit case without the cache, with it
//! cold, warm, and with its buckets corrupted and truncated, and compare the bytes.

use std::path::Path;
use std::path::PathBuf;

use crate::util::Output;
use crate::util::TestRepo;

const RULES: &str = r#"
[[rules]]
id = "strict-equality"
language = "javascript"
severity = "error"
message = "use === instead of =="
rule.pattern = "$A == $B"
fix = "$A === $B"
files = ["src/**"]

[[rules]]
id = "redundant-parens"
language = "javascript"
severity = "warning"
message = "redundant parentheses around $X"
rule.pattern = "($X)"
constraints.X.kind = "identifier"
fix = "$X"

[[rules]]
id = "no-print"
language = "python"
severity = "hint"
message = "print of $$$A"
rule.pattern = "print($$$A)"
"#;

/// A repository with files in three languages, committed, plus an untracked file and
/// an uncommitted change (both hashed, not taken from the index).
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("astedit.toml", RULES);
    repo.write(
        "src/a.js",
        "let y = ((a));\nif (x == 1) { f(((b))) }\nconsole.log(x);\n",
    );
    repo.write("src/b.js", "if (a == b) { console.log(a, b) }\n");
    repo.write("lib/c.js", "let z = (q);\nconsole.log(z == 2);\n");
    repo.write(
        "lib/same.js",
        "let y = ((a));\nif (x == 1) { f(((b))) }\nconsole.log(x);\n",
    );
    repo.write("tool.py", "def f():\n    print(1, 2)\n    return print\n");
    repo.write("plain.py", "x = 1\n");
    repo.write("main.rs", "fn main() {\n    let v = foo().unwrap();\n}\n");
    repo.write("data.bin.js", b"\0\x01binary".as_slice());
    repo.commit_all("init");
    age(&repo);
    repo.write("untracked.py", "print('new')\n");
    repo.write("lib/c.js", "let z = (q);\nconsole.log(z == 3);\n");
    repo
}

/// Moves every file's mtime a minute back and refreshes the index, so that the index
/// entries are not racy and their ids name the files unread (the path a warm run on a
/// real tree takes).
pub fn age(repo: &TestRepo) {
    let files = repo.git(&["ls-files", "-z"]);
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for f in files.split('\0').filter(|f| !f.is_empty()) {
        let file = std::fs::File::options()
            .write(true)
            .open(repo.path().join(f))
            .expect("open");
        file.set_modified(past).expect("set mtime");
    }
    // The index is rewritten with fresh stat data and a newer timestamp.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    repo.git(&["update-index", "--really-refresh"]);
    repo.git(&["status", "--porcelain"]);
}

const GREPS: &[&[&str]] = &[
    &["grep", "-p", "console.log($$$A)"],
    &["grep", "-p", "console.log($$$A)", "-C", "1"],
    &["grep", "-p", "console.log($$$A)", "-A", "1", "--json"],
    &["grep", "-p", "print($$$A)"],
    &["grep", "-p", "print($$$A)", "--json"],
    &["grep", "-p", "$A.unwrap()", "--json"],
    &["grep", "-p", "$A == $B", "-l", "js", "src"],
    &["grep", "-p", "($X)", "--max-count", "2"],
];

const SCANS: &[&[&str]] = &[
    &["scan"],
    &["scan", "--json"],
    &["scan", "--format", "sarif"],
    &["scan", "--check"],
    &["scan", "--check", "--json"],
    &["scan", "--rule-id", "redundant-parens"],
    &["scan", "--error", "src"],
    &["scan", "--cached"],
];

/// Runs `args` with the cache in `dir` (`None`: `--no-cache`).
fn run(repo: &TestRepo, dir: Option<&Path>, args: &[&str]) -> Output {
    let mut full: Vec<String> = match dir {
        Some(d) => vec!["--cache-dir".into(), d.display().to_string()],
        None => vec!["--no-cache".into()],
    };
    full.extend(args.iter().map(|a| a.to_string()));
    let full: Vec<&str> = full.iter().map(String::as_str).collect();
    repo.run(&full)
}

fn same(a: &Output, b: &Output, what: &str, args: &[&str]) {
    assert_eq!(a.code, b.code, "{what}: exit of {args:?}\n{}", b.stderr);
    assert_eq!(a.stdout, b.stdout, "{what}: stdout of {args:?}");
    assert_eq!(a.stderr, b.stderr, "{what}: stderr of {args:?}");
}

fn buckets(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'));
    out.sort();
    out
}

/// Damages every bucket: `how` gets the bytes and returns what is written back.
fn damage(dir: &Path, how: impl Fn(Vec<u8>) -> Vec<u8>) {
    let all = buckets(dir);
    assert!(!all.is_empty(), "no bucket to damage in {}", dir.display());
    for b in all {
        let bytes = std::fs::read(&b).expect("read bucket");
        std::fs::write(&b, how(bytes)).expect("write bucket");
    }
}

/// A way to damage a bucket's bytes.
type Damage = fn(Vec<u8>) -> Vec<u8>;

/// Every case: without cache, cold, warm, then after each kind of damage (twice:
/// the damaged run, then the run after it rewrote the bucket). `git_knows`: git keeps
/// an untracked cache, so the listing asks its `status` what changed.
fn differential(cases: &[&[&str]], git_knows: bool) {
    let repo = repo();
    if git_knows {
        repo.git(&["config", "core.untrackedCache", "true"]);
        repo.git(&["update-index", "--untracked-cache"]);
    }
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    for args in cases {
        let cold = run(&repo, None, args);
        assert!(cold.code <= 1, "{args:?}: {}", cold.stderr);
        same(&cold, &run(&repo, Some(&dir), args), "cold cache", args);
        same(&cold, &run(&repo, Some(&dir), args), "warm cache", args);
        let damages: [(&str, Damage); 4] = [
            ("payload byte flipped", |mut b| {
                for i in (8..b.len().saturating_sub(100)).step_by(7) {
                    b[i] ^= 0x5a;
                }
                b
            }),
            ("truncated", |b| b[..b.len() / 2].to_vec()),
            ("tail cut", |b| b[..b.len().saturating_sub(1)].to_vec()),
            ("emptied", |_| Vec::new()),
        ];
        for (what, how) in damages {
            damage(&dir, how);
            same(&cold, &run(&repo, Some(&dir), args), what, args);
            same(&cold, &run(&repo, Some(&dir), args), "rewritten", args);
        }
    }
    // A change after the warm runs: results follow the new content.
    repo.write("src/b.js", "if (a == c) { console.log(((a))) }\n");
    repo.write("tool.py", "def f():\n    print(3)\n");
    for args in cases {
        let cold = run(&repo, None, args);
        same(&cold, &run(&repo, Some(&dir), args), "after an edit", args);
    }
    // An edited rule: a scan neither reuses the old plan of the rules nor their
    // results, and a warm run of the new rules gives the same again.
    repo.write(
        "astedit.toml",
        RULES.replace("redundant parentheses around $X", "parens around $X"),
    );
    for args in cases {
        let cold = run(&repo, None, args);
        same(
            &cold,
            &run(&repo, Some(&dir), args),
            "after a rule edit",
            args,
        );
        same(
            &cold,
            &run(&repo, Some(&dir), args),
            "warm after a rule edit",
            args,
        );
    }
}

#[test]
fn grep_is_the_same_without_cold_warm_and_damaged_cache() {
    differential(GREPS, false);
}

#[test]
fn grep_through_git_status_is_the_same_without_cold_warm_and_damaged_cache() {
    differential(GREPS, true);
}

#[test]
fn scan_is_the_same_without_cold_warm_and_damaged_cache() {
    differential(SCANS, false);
}

#[test]
fn scan_through_git_status_is_the_same_without_cold_warm_and_damaged_cache() {
    differential(SCANS, true);
}

/// The staged preview's diff and summary, for comparing edits.
fn edit_result(repo: &TestRepo, dir: Option<&Path>, args: &[&str]) -> (i32, String, String) {
    let out = run(repo, dir, args);
    let show = repo.run(&["show", "--stat"]);
    let diff = repo.run(&["show"]);
    repo.run(&["discard"]);
    // Without the id and time line.
    let body = |s: String| s.split_once('\n').map(|(_, b)| b.to_string()).unwrap_or(s);
    (
        out.code,
        body(show.stdout + &show.stderr),
        body(diff.stdout),
    )
}

#[test]
fn edit_is_the_same_without_cold_warm_and_damaged_cache() {
    edit_differential(false);
}

#[test]
fn edit_through_git_status_is_the_same_without_cold_warm_and_damaged_cache() {
    edit_differential(true);
}

/// `git_knows`: git keeps an untracked cache, so the listing asks its `status`.
fn edit_differential(git_knows: bool) {
    let repo = repo();
    if git_knows {
        repo.git(&["config", "core.untrackedCache", "true"]);
        repo.git(&["update-index", "--untracked-cache"]);
    }
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    let cases: &[&[&str]] = &[
        &["edit", "-p", "console.log($$$A)", "-r", "log($$$A)"],
        &["edit", "-p", "print($$$A)", "-r", "log($$$A)"],
        &["edit", "-p", "$A == $B", "-r", "$A === $B", "src"],
        &["edit", "-p", "nothing($A)", "-r", "x"],
    ];
    for args in cases {
        let cold = edit_result(&repo, None, args);
        assert_eq!(cold, edit_result(&repo, Some(&dir), args), "cold {args:?}");
        assert_eq!(cold, edit_result(&repo, Some(&dir), args), "warm {args:?}");
        damage(&dir, |mut b| {
            let n = b.len();
            b[n / 2] ^= 1;
            b
        });
        assert_eq!(
            cold,
            edit_result(&repo, Some(&dir), args),
            "damaged {args:?}"
        );
    }
    // A file the ops left unchanged changes: the cached "unchanged" is not reused.
    repo.write("plain.py", "print(2)\n");
    let args: &[&str] = &["edit", "-p", "print($$$A)", "-r", "log($$$A)"];
    let cold = edit_result(&repo, None, args);
    assert!(cold.2.contains("plain.py"), "{}", cold.2);
    assert_eq!(cold, edit_result(&repo, Some(&dir), args));
}

/// Where git keeps an untracked cache, a cached `grep` or `edit` without pathspecs asks
/// `git status` what changed (as `scan` does); with pathspecs, without the cache, or
/// while a person picks the edits (`-i`), it walks.
#[test]
fn grep_and_edit_through_the_cache_ask_git_status() {
    let repo = repo();
    repo.git(&["config", "core.untrackedCache", "true"]);
    repo.git(&["update-index", "--untracked-cache"]);
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c").display().to_string();
    let trace = cache.path().join("trace");
    let asked = |args: &[&str]| -> bool {
        let _ = std::fs::remove_file(&trace);
        let env = [("GIT_TRACE", trace.to_str().expect("utf-8"))];
        let out = repo.run_with(".", args, &env, Some(b"q\n"));
        assert!(out.code <= 1, "{args:?}: {}", out.stderr);
        let text = std::fs::read_to_string(&trace).unwrap_or_default();
        let ran = text.contains("git status --porcelain=v2 -z");
        if args.contains(&"edit") {
            repo.run(&["discard"]);
        }
        ran
    };
    let grep = ["grep", "-p", "print($$$A)"];
    let edit = ["edit", "-p", "print($$$A)", "-r", "log($$$A)"];
    for args in [&grep[..], &edit[..]] {
        let cached: Vec<&str> = ["--cache-dir", dir.as_str()]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        assert!(asked(&cached), "{args:?} did not ask git");
        let mut some = cached.clone();
        some.push("tool.py");
        assert!(!asked(&some), "{args:?} with a pathspec asked git");
        let off: Vec<&str> = ["--no-cache"]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        assert!(!asked(&off), "{args:?} without the cache asked git");
    }
    let mut picking: Vec<&str> = vec!["--cache-dir", dir.as_str()];
    picking.extend(edit);
    picking.push("-i");
    assert!(!asked(&picking), "edit -i asked git");
}

#[test]
fn a_tracked_file_changed_within_the_index_second_is_hashed_not_trusted() {
    let repo = TestRepo::new();
    repo.write("a.py", "print(1)\n");
    repo.commit_all("init");
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    let args: &[&str] = &["grep", "-p", "print($$$A)"];
    assert_eq!(run(&repo, Some(&dir), args).stdout, "a.py:1:1: print(1)\n");
    // Same size, same second as the index: racy, so read and hashed.
    repo.write("a.py", "print(2)\n");
    assert_eq!(run(&repo, Some(&dir), args).stdout, "a.py:1:1: print(2)\n");
}

#[test]
fn the_default_cache_is_under_the_git_dir_and_no_cache_writes_nothing() {
    let repo = repo();
    let cache = repo.path().join(".git/astedit/cache");
    repo.run(&["--no-cache", "grep", "-p", "print($$$A)"])
        .assert_code(0);
    assert!(!cache.exists());
    repo.run(&["grep", "-p", "print($$$A)"]).assert_code(0);
    repo.run(&["scan"]);
    // The grep's results, the scan's, and the scan's plan of its rules.
    assert_eq!(buckets(&cache).len(), 3, "{:?}", buckets(&cache));
    // `gc` keeps the current buckets and drops another version's.
    std::fs::write(cache.join("v0.0.0-old"), b"x").expect("write");
    let gc = repo.run(&["gc", "--json"]);
    gc.assert_code(0);
    assert_eq!(buckets(&cache).len(), 3, "{:?}", buckets(&cache));
    assert_eq!(gc.json()["cache"]["removed"], 1, "{}", gc.stdout);
}

#[test]
fn racing_processes_share_a_cache_and_all_print_the_cold_result() {
    let repo = repo();
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    let cases: Vec<&[&str]> = GREPS.iter().chain(SCANS.iter()).copied().collect();
    let cold: Vec<Output> = cases.iter().map(|a| run(&repo, None, a)).collect();
    for round in 0..3 {
        let children: Vec<_> = (0..6)
            .map(|k| {
                let args = cases[(k + round) % cases.len()];
                let mut full = vec!["--cache-dir", dir.to_str().expect("utf-8")];
                full.extend_from_slice(args);
                let child = repo
                    .command(".", &full)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn");
                ((k + round) % cases.len(), child)
            })
            .collect();
        for (i, child) in children {
            let out = child.wait_with_output().expect("wait");
            let got = Output {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            };
            same(&cold[i], &got, "racing", cases[i]);
        }
    }
    // No temporary file is left behind, and the survivors read back intact.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    for (i, args) in cases.iter().enumerate() {
        same(
            &cold[i],
            &run(&repo, Some(&dir), args),
            "after the race",
            args,
        );
    }
}

/// An ast-grep project (rule files in a folder): a warm scan after one file changed
/// compiles only that file's rules, read from their own rule file, and gives what a
/// scan without the cache gives; so does one after a rule file changed.
#[test]
fn a_warm_project_scan_after_an_edit_is_the_same_as_without_cache() {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/py.yml",
        "id: no-print\nlanguage: python\nseverity: warning\nmessage: print\nrule: {pattern: print($$$A)}\n",
    );
    repo.write(
        "rules/js.yml",
        "id: no-log\nlanguage: javascript\nseverity: error\nmessage: log $A\nrule: {pattern: console.log($A)}\nfix: log($A)\n---\nid: eq\nlanguage: javascript\nrule: {pattern: $A == $B}\n",
    );
    repo.write("a.py", "print(1)\n");
    repo.write("b.py", "x = 1\n");
    repo.write("c.js", "console.log(a == b)\n");
    repo.commit_all("init");
    age(&repo);
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    let cases: &[&[&str]] = &[
        &["scan", "--json"],
        &["scan", "--check"],
        &["scan", "--warning=eq"],
    ];
    for args in cases {
        let cold = run(&repo, None, args);
        same(&cold, &run(&repo, Some(&dir), args), "cold", args);
        same(&cold, &run(&repo, Some(&dir), args), "warm", args);
    }
    repo.write("b.py", "print(2)\n");
    repo.write("c.js", "console.log(a == c)\n");
    for args in cases {
        let cold = run(&repo, None, args);
        same(&cold, &run(&repo, Some(&dir), args), "after an edit", args);
    }
    repo.write(
        "rules/py.yml",
        "id: no-print\nlanguage: python\nseverity: error\nmessage: print\nrule: {pattern: print($$$A)}\n",
    );
    for args in cases {
        let cold = run(&repo, None, args);
        same(
            &cold,
            &run(&repo, Some(&dir), args),
            "after a rule edit",
            args,
        );
    }
}

/// A warm scan that finds one file's entry broken after the look-up (here: a byte of
/// its findings flipped, so its checksum fails on the read) starts again with every
/// rule compiled. The files whose findings were already printed are not printed twice:
/// the output equals a cold run's, each finding once.
#[test]
fn a_streamed_scan_started_again_prints_each_finding_once() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-log\"\nlanguage = \"javascript\"\nseverity = \"warning\"\n\
         message = \"log $A\"\nrule.pattern = \"console.log($A)\"\n",
    );
    // Many files before the one whose entry breaks, so that theirs are out first.
    for i in 0..40 {
        repo.write(
            &format!("a{i:02}.js"),
            format!("console.log(\"early_{i}\");\n"),
        );
    }
    repo.write("zz.js", "console.log(\"BROKEN_MARK\");\n");
    repo.commit_all("init");
    age(&repo);
    let cold = repo.run(&["--no-cache", "scan"]);
    cold.assert_code(0);
    assert_eq!(cold.stdout.matches("early_").count(), 40, "{}", cold.stdout);
    // Fill the cache, then break the last file's entry. The memo of the whole answer
    // goes, so that the scan looks each file up.
    repo.run(&["scan"]).assert_code(0);
    let dir = repo.path().join(".git/astedit/cache");
    let mut broken = 0;
    for bucket in std::fs::read_dir(&dir).expect("cache folder") {
        let path = bucket.expect("entry").path();
        if path.to_string_lossy().contains("-memo-") {
            std::fs::remove_file(&path).expect("remove the memo");
            continue;
        }
        let mut bytes = std::fs::read(&path).expect("read bucket");
        let needle = b"BROKEN_MARK";
        if let Some(at) = bytes.windows(needle.len()).position(|w| w == needle) {
            bytes[at] = b'X';
            std::fs::write(&path, bytes).expect("write bucket");
            broken += 1;
        }
    }
    assert_eq!(broken, 1, "one bucket holds the file's findings");
    let warm = repo.run(&["scan"]);
    warm.assert_code(0);
    assert_eq!(warm.stdout, cold.stdout);
}

/// Where the attributes that name a smudge filter come from (issue 35 item 4).
#[derive(Debug, Clone, Copy)]
enum Attributes {
    /// A `.gitattributes` in the work tree that git does not track.
    Untracked,
    /// The default global file, `~/.config/git/attributes`.
    HomeConfig,
    /// `$XDG_CONFIG_HOME/git/attributes`.
    XdgConfigHome,
}

/// Runs `args` (git-astedit, or git when `git`) with `env` added.
fn run_env(repo: &TestRepo, git: bool, env: &[(String, String)], args: &[&str]) -> Output {
    let mut cmd = if git {
        let mut cmd = std::process::Command::new("git");
        repo.env(&mut cmd);
        cmd.current_dir(repo.path()).args(args);
        cmd
    } else {
        repo.command(".", args)
    };
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    crate::util::run_command(cmd)
}

/// A checkout whose files went through a smudge filter, named by attributes from
/// `source`, after a cache was warmed on the unfiltered files: the index's stat data
/// match the smudged files (not racy), but the blob ids name other bytes. Every cached
/// grep, scan and edit must answer for the bytes on disk, as `--no-cache` does.
fn filtered_checkout_is_not_answered_from_the_blob(source: Attributes) {
    let repo = repo();
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    let edits: &[&[&str]] = &[
        &["edit", "-p", "console.log($$$A)", "-r", "log($$$A)"],
        &["edit", "-p", "print($$$A)", "-r", "log($$$A)"],
        &["edit", "-p", "$A == $B", "-r", "$A === $B", "src"],
    ];
    let cases: Vec<&[&str]> = GREPS.iter().chain(SCANS.iter()).copied().collect();
    for args in &cases {
        run(&repo, Some(&dir), args);
    }
    for args in edits {
        edit_result(&repo, Some(&dir), args);
    }
    // A reversible filter: the blobs hold `console`, `print` and `==`; the checkout
    // `konsole`, `pront` and `!=`.
    let xdg = repo.home().join("xdg");
    let mut env: Vec<(String, String)> = Vec::new();
    repo.git(&[
        "config",
        "filter.evil.smudge",
        "sed -e s/console/konsole/ -e s/print/pront/ -e s/==/!=/",
    ]);
    repo.git(&[
        "config",
        "filter.evil.clean",
        "sed -e s/konsole/console/ -e s/pront/print/ -e s/!=/==/",
    ]);
    let rules = "*.js filter=evil\n*.py filter=evil\n";
    let file = match source {
        Attributes::Untracked => repo.path().join(".gitattributes"),
        Attributes::HomeConfig => repo.home().join(".config/git/attributes"),
        Attributes::XdgConfigHome => {
            env.push(("XDG_CONFIG_HOME".into(), xdg.display().to_string()));
            xdg.join("git/attributes")
        }
    };
    std::fs::create_dir_all(file.parent().expect("folder")).expect("mkdir");
    std::fs::write(&file, rules).expect("write attributes");
    let files = ["src/a.js", "src/b.js", "lib/same.js", "tool.py"];
    for f in files {
        std::fs::remove_file(repo.path().join(f)).expect("rm");
    }
    let mut checkout = vec!["checkout", "--"];
    checkout.extend(files);
    run_env(&repo, true, &env, &checkout).assert_code(0);
    assert!(
        repo.read_string("src/a.js").contains("konsole"),
        "{source:?}: the filter did not run"
    );
    // Old modification times, recorded in the index (the clean filter gives the blob
    // back, so git takes the files as unchanged).
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for f in files {
        std::fs::File::options()
            .write(true)
            .open(repo.path().join(f))
            .expect("open")
            .set_modified(past)
            .expect("set mtime");
    }
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // (lib/c.js, changed in the work tree, "needs update": exit 1.)
    let refresh = run_env(&repo, true, &env, &["update-index", "--really-refresh"]);
    for f in files {
        assert!(!refresh.stdout.contains(f), "{}", refresh.stdout);
    }
    let status = run_env(&repo, true, &env, &["status", "--porcelain"]);
    assert!(!status.stdout.contains("src/a.js"), "{}", status.stdout);
    let with = |dir: Option<&Path>, args: &[&str]| {
        let mut full: Vec<String> = match dir {
            Some(d) => vec!["--cache-dir".into(), d.display().to_string()],
            None => vec!["--no-cache".into()],
        };
        full.extend(args.iter().map(|a| a.to_string()));
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        run_env(&repo, false, &env, &full)
    };
    for args in &cases {
        let cold = with(None, args);
        assert!(cold.code <= 1, "{args:?}: {}", cold.stderr);
        same(&cold, &with(Some(&dir), args), &format!("{source:?}"), args);
    }
    for args in edits {
        let result = |dir: Option<&Path>| {
            let out = with(dir, args);
            let show = run_env(&repo, false, &env, &["show"]);
            run_env(&repo, false, &env, &["discard"]);
            (
                out.code,
                out.stderr,
                show.stdout.lines().skip(1).collect::<Vec<_>>().join("\n"),
            )
        };
        assert_eq!(result(None), result(Some(&dir)), "{source:?} {args:?}");
    }
}

#[test]
fn an_untracked_gitattributes_filter_is_not_answered_from_the_cache() {
    filtered_checkout_is_not_answered_from_the_blob(Attributes::Untracked);
}

#[test]
fn a_global_attributes_filter_is_not_answered_from_the_cache() {
    filtered_checkout_is_not_answered_from_the_blob(Attributes::HomeConfig);
    filtered_checkout_is_not_answered_from_the_blob(Attributes::XdgConfigHome);
}
