//! Integration tests: `scan --baseline REV` (findings new since a commit, matched by a
//! line-free key that survives moves, re-indenting and renames).

use crate::util::Output;
use crate::util::TestRepo;

/// An error rule and a warning rule with a fix, on Python.
const RULES: &str = r#"
[[rules]]
id = "no-eval"
language = "python"
severity = "error"
message = "eval of $X"
rule.pattern = "eval($X)"
"#;

const PRINT_RULE: &str = r#"
[[rules]]
id = "no-print"
language = "python"
severity = "warning"
message = "print call"
rule.pattern = "print($$$A)"
fix = "log($$$A)"
"#;

/// A repository whose first commit has `a.py` and `b.py`, one eval each.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("astedit.toml", RULES);
    repo.write("a.py", "def f(x):\n    return eval(x)\n");
    repo.write(
        "b.py",
        "import sys\n\ny = sys.argv[1]\neval(y)\nsys.exit(0)\n",
    );
    repo.commit_all("base");
    repo
}

/// `(rule, path, baseline)` of each finding of a JSON report.
fn states(v: &serde_json::Value, key: &str) -> Vec<(String, String, String)> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_string(),
                f["path"].as_str().unwrap_or_default().to_string(),
                f["baseline"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn triple(rule: &str, path: &str, state: &str) -> (String, String, String) {
    (rule.into(), path.into(), state.into())
}

/// The report's `baseline` counts: (new, unchanged, absent).
fn counts(v: &serde_json::Value) -> (u64, u64, u64) {
    let b = &v["baseline"];
    (
        b["new"].as_u64().unwrap_or(99),
        b["unchanged"].as_u64().unwrap_or(99),
        b["absent"].as_u64().unwrap_or(99),
    )
}

fn json(repo: &TestRepo, args: &[&str]) -> (Output, serde_json::Value) {
    let mut all = vec!["--json", "scan"];
    all.extend_from_slice(args);
    let out = repo.run(&all);
    let v = out.json();
    (out, v)
}

#[test]
fn moved_reindented_and_renamed_findings_are_unchanged() {
    let repo = repo();
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    // Lines added above, the code moved down into a class and re-indented (its call
    // split over two lines), and b.py renamed and edited.
    repo.write(
        "a.py",
        "import os\n\n\nclass C:\n    def g(self):\n        pass\n\n    def f(self, x):\n        return eval(\n            x)\n",
    );
    repo.git(&["mv", "b.py", "c.py"]);
    repo.write(
        "c.py",
        "import sys\n\n\ny = sys.argv[1]\nif y:\n    eval(y)\nsys.exit(0)\n",
    );
    let out = repo.run(&["scan", "--baseline", "HEAD"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "", "{}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    let short = &base[..12];
    assert_eq!(
        last,
        format!("Against HEAD ({short}): 0 new, 2 unchanged, 0 fixed.")
    );

    let (out, v) = json(&repo, &["--baseline", "HEAD"]);
    out.assert_code(0);
    assert_eq!(
        states(&v, "findings"),
        [
            triple("no-eval", "a.py", "unchanged"),
            triple("no-eval", "c.py", "unchanged")
        ]
    );
    assert_eq!(counts(&v), (0, 2, 0));
    assert_eq!(v["baseline"]["rev"], "HEAD");
    assert_eq!(v["baseline"]["commit"], base.as_str());
    assert_eq!(v["absent"], serde_json::json!([]));
    assert_eq!(v["error_count"], 0);
    // Without --baseline nothing is marked and both errors count.
    let (out, v) = json(&repo, &[]);
    out.assert_code(1);
    assert!(
        v.get("baseline").is_none() && v.get("absent").is_none(),
        "{v}"
    );
    assert!(v["findings"][0].get("baseline").is_none(), "{v}");
}

#[test]
fn a_new_finding_in_a_moved_file_is_new_and_a_fixed_one_absent() {
    let repo = repo();
    repo.git(&["mv", "a.py", "pkg_a.py"]);
    // The old eval stays (moved down), a second one is new; b.py's is fixed.
    repo.write(
        "pkg_a.py",
        "import json\n\ndef f(x):\n    return eval(x)\n\ndef h(z):\n    return eval(z)\n",
    );
    repo.write("b.py", "int(y)\n");
    let out = repo.run(&["scan", "--baseline", "HEAD"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "pkg_a.py:7:12: error[no-eval]: eval of z\n");
    assert!(
        out.stderr
            .trim_end()
            .ends_with(": 1 new, 1 unchanged, 1 fixed."),
        "{}",
        out.stderr
    );

    let (out, v) = json(&repo, &["--baseline", "HEAD"]);
    out.assert_code(1);
    assert_eq!(
        states(&v, "findings"),
        [
            triple("no-eval", "pkg_a.py", "unchanged"),
            triple("no-eval", "pkg_a.py", "new")
        ]
    );
    assert_eq!(states(&v, "absent"), [triple("no-eval", "b.py", "absent")]);
    assert_eq!(v["absent"][0]["text"], "eval(y)");
    assert_eq!(v["absent"][0]["line"], 4);
    assert_eq!(counts(&v), (1, 1, 1));
    assert_eq!(v["error_count"], 1);

    // GitHub annotations: only the new finding.
    let out = repo.run(&["scan", "--baseline", "HEAD", "--format", "github"]);
    out.assert_code(1);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("file=pkg_a.py,line=7"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_duplicated_finding_is_one_unchanged_and_one_new() {
    let repo = repo();
    repo.write("b.py", "eval(y)\neval(y)\n");
    let (out, v) = json(&repo, &["--baseline", "HEAD"]);
    out.assert_code(1);
    assert_eq!(
        states(&v, "findings"),
        [
            triple("no-eval", "a.py", "unchanged"),
            triple("no-eval", "b.py", "unchanged"),
            triple("no-eval", "b.py", "new")
        ]
    );
    assert_eq!(v["findings"][2]["line"], 2);
    assert_eq!(counts(&v), (1, 2, 0));
    // Both copies gone again: one absent.
    repo.write("b.py", "\n");
    repo.commit_all("two");
    repo.write("b.py", "eval(y)\neval(y)\n");
    repo.commit_all("three");
    repo.write("b.py", "pass\n");
    let (out, v) = json(&repo, &["--baseline", "HEAD"]);
    out.assert_code(0);
    assert_eq!(counts(&v), (0, 1, 2));
}

#[test]
fn a_rule_added_since_the_base_flags_only_new_code() {
    let repo = repo();
    repo.write("a.py", "def f(x):\n    print(x)\n    return eval(x)\n");
    repo.commit_all("old print, no print rule yet");
    // The change adds the rule and one more print: the old print is what the new
    // rule finds at the base too.
    repo.write("astedit.toml", format!("{RULES}{PRINT_RULE}"));
    repo.write("new.py", "print('hello')\n");
    let (out, v) = json(&repo, &["--baseline", "HEAD"]);
    out.assert_code(0);
    assert_eq!(
        states(&v, "findings"),
        [
            triple("no-print", "a.py", "unchanged"),
            triple("no-eval", "a.py", "unchanged"),
            triple("no-eval", "b.py", "unchanged"),
            triple("no-print", "new.py", "new")
        ]
    );
    let out = repo.run(&["scan", "--baseline", "HEAD"]);
    assert_eq!(out.stdout, "new.py:1:1: warning[no-print]: print call\n");
}

#[test]
fn baseline_revisions_and_the_cached_side() {
    let repo = repo();
    repo.write("b.py", "eval(y)\neval(w)\n");
    repo.commit_all("second");
    // A branch, a tag and HEAD~1 name commits; a file staged then edited.
    repo.git(&["tag", "v1", "HEAD~1"]);
    let (out, v) = json(&repo, &["--baseline", "v1"]);
    out.assert_code(1);
    assert_eq!(counts(&v), (1, 2, 0));
    let (_, v) = json(&repo, &["--baseline", "HEAD~1"]);
    assert_eq!(counts(&v), (1, 2, 0));
    assert_eq!(v["baseline"]["rev"], "HEAD~1");

    // --cached compares the index: a staged rename, an unstaged new eval.
    repo.git(&["mv", "b.py", "moved.py"]);
    repo.write("moved.py", "eval(y)\neval(w)\neval(v)\n");
    let (out, v) = json(&repo, &["--baseline", "HEAD", "--cached"]);
    out.assert_code(0);
    assert_eq!(counts(&v), (0, 3, 0));
    let (_, v) = json(&repo, &["--baseline", "HEAD"]);
    assert_eq!(counts(&v), (1, 3, 0));

    // Not a commit: bad input, named.
    let out = repo.run(&["--json", "scan", "--baseline", "no-such-branch"]);
    out.assert_code(2);
    assert!(out.stderr.contains("unknown-revision") || out.stdout.contains("unknown-revision"));
    let out = repo.run(&["scan", "--baseline", "--help-me"]);
    out.assert_code(2);
}

#[test]
fn fixes_are_made_only_for_new_findings_unless_fix_all() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", format!("{RULES}{PRINT_RULE}"));
    repo.write("a.py", "print(1)\n");
    repo.write("old.py", "print(0)\n");
    repo.commit_all("base");
    repo.write("a.py", "print(1)\nprint(2)\nprint(1)\n");
    // --check: the diff fixes the new print(2) and the second print(1), not the old one.
    let out = repo.run(&["scan", "--check", "--baseline", "HEAD"]);
    out.assert_code(1);
    assert!(out.stdout.contains("+log(2)"), "{}", out.stdout);
    assert!(!out.stdout.contains("-print(0)"), "{}", out.stdout);
    assert_eq!(out.stdout.matches("+log(1)").count(), 1, "{}", out.stdout);
    assert_eq!(out.stdout.matches("-print(1)").count(), 1, "{}", out.stdout);
    let (_, v) = json(&repo, &["--check", "--baseline", "HEAD"]);
    assert_eq!(counts(&v), (2, 2, 0));
    assert_eq!(v["fixes"], 2);
    assert_eq!(
        states(&v, "remaining"),
        [
            triple("no-print", "a.py", "unchanged"),
            triple("no-print", "old.py", "unchanged")
        ]
    );
    // --fix-all: every finding's fix.
    let (_, v) = json(&repo, &["--check", "--baseline", "HEAD", "--fix-all"]);
    assert_eq!(v["fixes"], 4);
    // --apply writes the two.
    let out = repo.run(&["scan", "--apply", "--baseline", "HEAD"]);
    out.assert_code(1);
    assert_eq!(repo.read_string("a.py"), "print(1)\nlog(2)\nlog(1)\n");
    assert_eq!(repo.read_string("old.py"), "print(0)\n");
    // Only old findings left: nothing to fix, exit 0.
    let out = repo.run(&["scan", "--check", "--baseline", "HEAD"]);
    out.assert_code(0);
    assert!(out.stderr.contains("No fixes needed"), "{}", out.stderr);
}

#[test]
fn auto_is_the_merge_base_with_the_upstream_or_main() {
    let repo = repo();
    let fork = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("b.py", "eval(y)\neval(q)\n");
    repo.commit_all("feature work");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("main.py", "eval(m)\n");
    repo.commit_all("main moves on");
    repo.git(&["checkout", "-q", "feature"]);
    // No upstream: the merge-base with main, named on the last line.
    let out = repo.run(&["scan", "--baseline", "auto"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "b.py:2:1: error[no-eval]: eval of q\n");
    let short = &fork[..12];
    assert!(
        out.stderr.trim_end().ends_with(&format!(
            "Against merge-base HEAD main ({short}): 1 new, 2 unchanged, 0 fixed."
        )),
        "{}",
        out.stderr
    );
    let (_, v) = json(&repo, &["--baseline", "auto"]);
    assert_eq!(v["baseline"]["commit"], fork.as_str());
    assert_eq!(v["baseline"]["rev"], "merge-base HEAD main");
    // An upstream comes first.
    repo.git(&["branch", "-q", "develop", "feature"]);
    repo.git(&["branch", "-q", "--set-upstream-to=develop"]);
    let (_, v) = json(&repo, &["--baseline", "auto"]);
    assert_eq!(v["baseline"]["rev"], "merge-base HEAD develop");
    assert_eq!(counts(&v), (0, 3, 0));
}

#[test]
fn changed_files_modified_staged_untracked_and_deleted() {
    let repo = repo();
    repo.write("c.py", "eval(c)\n");
    repo.commit_all("c");
    repo.write("a.py", "def f(x):\n    return eval(x) + eval(2)\n"); // modified
    repo.write("staged.py", "eval(s)\n");
    repo.git(&["add", "staged.py"]); // staged
    repo.write("new.py", "eval(n)\n"); // untracked
    repo.git(&["rm", "-q", "c.py"]); // deleted
    let out = repo.run(&["scan", "--changed"]);
    out.assert_code(1);
    assert_eq!(
        out.stdout,
        "a.py:2:12: error[no-eval]: eval of x\n\
         a.py:2:22: error[no-eval]: eval of 2\n\
         new.py:1:1: error[no-eval]: eval of n\n\
         staged.py:1:1: error[no-eval]: eval of s\n"
    );
    // --cached: only what is staged.
    let out = repo.run(&["scan", "--cached", "--changed"]);
    assert_eq!(out.stdout, "staged.py:1:1: error[no-eval]: eval of s\n");
    // With a base: the deleted file's finding is absent.
    let (_, v) = json(&repo, &["--changed", "--baseline", "HEAD"]);
    assert_eq!(counts(&v), (3, 1, 1));
    assert_eq!(states(&v, "absent"), [triple("no-eval", "c.py", "absent")]);
    // grep and edit read the same files.
    let out = repo.run(&["grep", "-p", "eval($X)", "-l", "python", "--changed"]);
    out.assert_code(0);
    assert!(!out.stdout.contains("b.py"), "{}", out.stdout);
    for p in ["a.py", "new.py", "staged.py"] {
        assert!(out.stdout.contains(p), "{}", out.stdout);
    }
    let out = repo.run(&[
        "edit",
        "-p",
        "eval($X)",
        "-r",
        "safe($X)",
        "-l",
        "python",
        "--changed=HEAD~1",
    ]);
    out.assert_code(0);
    // Since HEAD~1: c.py (now deleted) and the three above, not b.py.
    assert!(out.stdout.contains("safe(n)"), "{}", out.stdout);
    assert!(!out.stdout.contains("safe(y)"), "{}", out.stdout);
}

#[test]
fn the_hook_checks_only_the_lines_being_committed() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", format!("{RULES}{PRINT_RULE}"));
    repo.write("a.py", "print(1)\neval(x)\n");
    // Before the first commit every line is being committed.
    repo.git(&["add", "-A"]);
    let out = repo.run(&["scan", "--check", "--cached", "--changed-lines"]);
    out.assert_code(1);
    repo.commit_all("old findings");
    repo.run(&["hook", "install", "--changed-lines"])
        .assert_code(0);
    let hook = repo.path().join(".git/hooks/pre-commit");
    let script = std::fs::read_to_string(&hook).expect("hook written");
    assert!(
        script.contains("scan --check --cached --changed-lines\n"),
        "{script}"
    );
    // A clean line added to a file with old findings: the commit goes through.
    repo.write("a.py", "print(1)\neval(x)\nx = 1\n");
    repo.git(&["add", "a.py"]);
    let ok = repo.git_output(&["commit", "-q", "-m", "clean line"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    // A staged print on a new line: blocked, and only its fix is shown; an unstaged
    // one is not looked at.
    repo.write("a.py", "print(1)\neval(x)\nx = 1\nprint(2)\n");
    repo.git(&["add", "a.py"]);
    repo.write("a.py", "print(1)\neval(x)\nx = 1\nprint(2)\nprint(3)\n");
    let blocked = repo.git_output(&["commit", "-q", "-m", "new print"]);
    assert_eq!(blocked.code, 1, "{}", blocked.stderr);
    let out = repo.run(&["scan", "--check", "--cached", "--changed-lines"]);
    out.assert_code(1);
    assert!(out.stdout.contains("+log(2)"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("log(1)") && !out.stdout.contains("log(3)"),
        "{}",
        out.stdout
    );
}

/// The base side reads only the blobs the result cache does not answer: once a
/// comparison is warm, a base blob that went missing from the object database is not
/// missed (and without the cache it is, naming the file).
#[test]
fn a_warm_base_side_reads_no_blob_the_cache_answers() {
    let repo = repo();
    repo.write("gone.py", "eval(q)\n# first\n");
    repo.commit_all("gone.py");
    let old_blob = repo.git(&["rev-parse", "HEAD:gone.py"]);
    repo.write("gone.py", "eval(q)\n# second\n");
    repo.commit_all("gone.py changed");
    let (out, v) = json(&repo, &["--baseline", "HEAD~1"]);
    out.assert_code(0);
    assert_eq!(counts(&v), (0, 3, 0));
    // The blob only HEAD~1 has, taken out of the (loose) object database.
    let id = old_blob.trim();
    let loose = repo
        .path()
        .join(".git/objects")
        .join(&id[..2])
        .join(&id[2..]);
    std::fs::remove_file(&loose).expect("a loose object");
    let (out, v) = json(&repo, &["--baseline", "HEAD~1"]);
    out.assert_code(0);
    assert_eq!(counts(&v), (0, 3, 0));
    let out = repo.run(&["--json", "--no-cache", "scan", "--baseline", "HEAD~1"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    let err = out.json();
    assert_eq!(err["error"]["code"], "index", "{err}");
    assert!(err.to_string().contains("gone.py"), "{err}");
}

/// A comment removed, added or edited inside a match keeps the finding `unchanged`
/// (the key leaves out the comment nodes of the match); code added beside it is new.
#[test]
fn a_comment_edited_inside_a_match_keeps_it_unchanged() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", PRINT_RULE);
    repo.write("a.py", "print(\n    a,  # type: ignore\n    b,\n)\n");
    repo.write("b.py", "print(x, y)\n");
    repo.write("c.py", "print(p,  # first\n      q)\n");
    repo.commit_all("base");
    repo.write("a.py", "print(\n    a,\n    b,\n)\n");
    repo.write("b.py", "print(x,  # why\n      y)\n");
    repo.write(
        "c.py",
        "print(p,  # second, longer\n      q)\nprint(p, r)\n",
    );
    let (out, v) = json(&repo, &["--baseline", "HEAD"]);
    out.assert_code(0);
    assert_eq!(
        states(&v, "findings"),
        [
            triple("no-print", "a.py", "unchanged"),
            triple("no-print", "b.py", "unchanged"),
            triple("no-print", "c.py", "unchanged"),
            triple("no-print", "c.py", "new"),
        ]
    );
    assert_eq!(counts(&v), (1, 3, 0));
    // The same from a warm cache, and with the cache off.
    for args in [
        &["--json", "scan"][..],
        &["--json", "--no-cache", "scan"][..],
    ] {
        let out = repo.run(&[args, &["--baseline", "HEAD"]].concat());
        assert_eq!(counts(&out.json()), (1, 3, 0), "{args:?}");
    }
    // Code inside the match still counts: a changed argument is new.
    repo.write("b.py", "print(x,  # why\n      z)\n");
    let (_, v) = json(&repo, &["--baseline", "HEAD"]);
    assert_eq!(counts(&v), (2, 2, 1));
}

/// A file whose blob is at the same path now is not read at the base at all (its
/// findings there are the current ones), even with no cache; one edited on disk is.
#[test]
fn a_file_the_same_now_is_not_read_at_the_base() {
    let repo = repo();
    // Not racy: the index's stat data name the files' bytes.
    crate::cache::age(&repo);
    let id = repo.git(&["rev-parse", "HEAD:a.py"]);
    let id = id.trim();
    // a.py's blob, taken out of the object database: the work tree still has it.
    let loose = repo
        .path()
        .join(".git/objects")
        .join(&id[..2])
        .join(&id[2..]);
    std::fs::remove_file(&loose).expect("a loose object");
    repo.write("b.py", "eval(y)\neval(w)\n");
    let out = repo.run(&["--json", "--no-cache", "scan", "--baseline", "HEAD"]);
    out.assert_code(1);
    assert_eq!(counts(&out.json()), (1, 2, 0));
    // Edited on disk (not staged): read at the base, and missed.
    repo.write("a.py", "def f(x):\n    return eval(x)  # edited\n");
    let out = repo.run(&["--json", "--no-cache", "scan", "--baseline", "HEAD"]);
    assert_eq!(out.json()["error"]["code"], "index", "{}", out.stdout);
}

/// In a fresh clone the index entries are racy (the files written in the same second
/// as the index), so their stat data name nothing: the scan of now hashes those files,
/// and the base side takes the ids from it. A file the same now is still not read at
/// the base, with a cold cache too.
#[test]
fn a_racy_file_the_same_now_is_not_read_at_the_base() {
    let repo = repo();
    // Racy for certain: the files' mtimes after the index's.
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    for f in ["a.py", "b.py"] {
        let file = std::fs::File::options()
            .write(true)
            .open(repo.path().join(f))
            .expect("open");
        file.set_modified(future).expect("set mtime");
    }
    repo.git(&["update-index", "--really-refresh"]);
    let id = repo.git(&["rev-parse", "HEAD:a.py"]);
    let id = id.trim();
    std::fs::remove_file(
        repo.path()
            .join(".git/objects")
            .join(&id[..2])
            .join(&id[2..]),
    )
    .expect("a loose object");
    repo.write("b.py", "eval(y)\neval(w)\n");
    let cache = tempfile::tempdir().expect("cache dir");
    let cache = cache.path().to_str().expect("utf-8");
    let out = repo.run(&["--json", "--cache-dir", cache, "scan", "--baseline", "HEAD"]);
    out.assert_code(1);
    assert_eq!(counts(&out.json()), (1, 2, 0), "{}", out.stdout);
    // Warm: the same.
    let out = repo.run(&["--json", "--cache-dir", cache, "scan", "--baseline", "HEAD"]);
    assert_eq!(counts(&out.json()), (1, 2, 0), "{}", out.stdout);
}

/// `grep --changed-lines`: only the matches on lines that differ from HEAD (staged or
/// not), every line of an untracked file; the text, `--files-with-matches` and the
/// JSON counts agree.
#[test]
fn grep_changed_lines_reports_only_matches_on_changed_lines() {
    let repo = repo();
    repo.write("c.py", "eval(c)\nz = 0\n");
    repo.commit_all("c");
    // a.py: its old eval stays, a new one is added below.
    repo.write("a.py", "def f(x):\n    return eval(x)\n\neval(new)\n");
    // b.py: a line rewritten around its old eval (staged), the eval left alone.
    repo.write(
        "b.py",
        "import sys\n\ny = sys.argv[2]\neval(y)\nsys.exit(0)\n",
    );
    repo.git(&["add", "b.py"]);
    // c.py: an unstaged eval on a rewritten line.
    repo.write("c.py", "eval(c)\nz = eval(1)\n");
    repo.write("u.py", "x = 1\neval(u)\n"); // untracked
    let grep = |extra: &[&str]| {
        let mut args = vec!["grep", "-p", "eval($X)", "-l", "python"];
        args.extend_from_slice(extra);
        repo.run(&args)
    };
    let out = grep(&["--changed-lines"]);
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "a.py:4:1: eval(new)\nc.py:2:5: eval(1)\nu.py:2:1: eval(u)\n"
    );
    let out = grep(&["--changed-lines", "--files-with-matches"]);
    assert_eq!(out.stdout, "a.py\nc.py\nu.py\n");
    let v = grep(&["--changed-lines", "--json"]).json();
    assert_eq!(
        (v["total"].as_u64(), v["shown"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(v["files_matched"].as_u64(), Some(3));
    let lines: Vec<(String, u64)> = v["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap_or("").to_string(),
                m["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [("a.py".into(), 4), ("c.py".into(), 2), ("u.py".into(), 2)]
    );
    // --changed alone: every match of the changed files (b.py's old one too).
    let v = grep(&["--changed", "--json"]).json();
    assert_eq!(v["total"].as_u64(), Some(6));
    // Against an older revision, c.py's first line is new too.
    let out = grep(&[
        "--changed=HEAD~1",
        "--changed-lines",
        "--files-with-matches",
    ]);
    assert_eq!(out.stdout, "a.py\nc.py\nu.py\n");
    let v = grep(&["--changed=HEAD~1", "--changed-lines", "--json"]).json();
    assert_eq!(v["total"].as_u64(), Some(4));
    // Standard input has no history to compare with.
    let out = repo.run_with(
        ".",
        &[
            "grep",
            "-p",
            "eval($X)",
            "-l",
            "python",
            "--stdin",
            "--changed-lines",
        ],
        &[],
        Some(b"eval(1)\n"),
    );
    out.assert_code(2);
    assert!(out.stderr.contains("--changed-lines"), "{}", out.stderr);
    // Nothing on a changed line: exit 1, as a search that finds nothing.
    repo.git(&["add", "-A"]);
    repo.commit_all("all");
    repo.write(
        "a.py",
        "def f(x):\n    return eval(x)\n\neval(new)\n# note\n",
    );
    let out = grep(&["--changed-lines"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "");
}

/// `edit --changed-lines` stages only the replacements whose match touches a changed
/// line; with `-i`, only those are offered.
#[test]
fn edit_changed_lines_rewrites_only_matches_on_changed_lines() {
    let repo = repo();
    repo.write(
        "a.py",
        "def f(x):\n    return eval(x)\n\nv = eval(\n    new\n)\n",
    );
    repo.write("u.py", "eval(u)\n"); // untracked
    let out = repo.run(&[
        "edit",
        "-p",
        "eval($X)",
        "-r",
        "safe($X)",
        "-l",
        "python",
        "--changed-lines",
        "--apply",
    ]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("2 replacements in 2 files"),
        "{}",
        out.stdout
    );
    assert_eq!(
        repo.read_string("a.py"),
        "def f(x):\n    return eval(x)\n\nv = safe(new)\n"
    );
    assert_eq!(repo.read_string("u.py"), "safe(u)\n");
    assert_eq!(
        repo.read_string("b.py"),
        "import sys\n\ny = sys.argv[1]\neval(y)\nsys.exit(0)\n"
    );
    // Only the old match left: nothing to stage, no preview.
    repo.commit_all("safe");
    repo.write("a.py", "# top\ndef f(x):\n    return eval(x)\n");
    let refs = repo.astedit_refs();
    let out = repo.run(&[
        "edit",
        "-p",
        "eval($X)",
        "-r",
        "safe($X)",
        "-l",
        "python",
        "--changed-lines",
    ]);
    out.assert_code(1);
    assert!(out.stderr.contains("nothing staged"), "{}", out.stderr);
    assert_eq!(repo.astedit_refs(), refs);
    assert_eq!(
        repo.read_string("a.py"),
        "# top\ndef f(x):\n    return eval(x)\n"
    );
}

/// In a file that embeds the language (HTML's `<script>`), the lines are the host's.
#[test]
fn changed_lines_in_embedded_code_are_the_host_files_lines() {
    let repo = TestRepo::new();
    let page = |second: &str| {
        format!("<html>\n<body>\n<script>\nfoo(1);\nfoo({second});\n</script>\n</body>\n</html>\n")
    };
    repo.write("a.html", page("2"));
    repo.commit_all("page");
    repo.write("a.html", page("3"));
    let out = repo.run(&[
        "grep",
        "-p",
        "foo($X)",
        "-l",
        "javascript",
        "--changed-lines",
    ]);
    assert_eq!(out.stdout, "a.html:5:1: foo(3)\n");
    let out = repo.run(&[
        "edit",
        "-p",
        "foo($X)",
        "-r",
        "bar($X)",
        "-l",
        "javascript",
        "--changed-lines",
        "--apply",
    ]);
    out.assert_code(0);
    assert_eq!(
        repo.read_string("a.html"),
        "<html>\n<body>\n<script>\nfoo(1);\nbar(3);\n</script>\n</body>\n</html>\n"
    );
}

/// `--shard` narrows both sides of the comparison: each shard's base side reads only
/// the shard's files, so a finding of a deleted file is absent in exactly one shard,
/// and the shards' counts add up to the unsharded run's.
#[test]
fn each_shard_compares_only_its_own_files_with_the_base() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", RULES);
    for name in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        repo.write(&format!("{name}.py"), format!("eval({name})\n"));
    }
    repo.commit_all("base");
    repo.git(&["rm", "-q", "c.py", "f.py", "h.py"]);
    repo.write("new.py", "eval(n)\n");
    let (_, all) = json(&repo, &["--baseline", "HEAD"]);
    assert_eq!(counts(&all), (1, 5, 3));
    let mut sum = (0, 0, 0);
    let mut absent = Vec::new();
    let mut files = 0;
    for shard in ["1/2", "2/2"] {
        let (_, v) = json(&repo, &["--baseline", "HEAD", "--shard", shard]);
        let (new, unchanged, gone) = counts(&v);
        sum = (sum.0 + new, sum.1 + unchanged, sum.2 + gone);
        absent.extend(states(&v, "absent"));
        files += v["files_searched"].as_u64().expect("files_searched");
    }
    assert_eq!(sum, counts(&all));
    absent.sort();
    assert_eq!(absent, states(&all, "absent"));
    assert_eq!(
        files,
        all["files_searched"].as_u64().expect("files_searched")
    );
}
