//! Integration tests: `grep --cached` and `edit --cached` (the staged content, not the
//! work tree's; with `--changed[-lines]`, what a commit would change).

use crate::util::Output;
use crate::util::TestRepo;

/// A repository whose first commit has `a.py` (one eval) and `b.py` (none), then:
/// `a.py` staged with a second eval and edited again in the work tree (unstaged),
/// `b.py` edited but not staged, `n.py` staged as a new file and `u.py` untracked.
fn staged_apart() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.py", "eval(a)\n");
    repo.write("b.py", "x = 1\n");
    repo.commit_all("base");
    repo.write("a.py", "eval(a)\neval(staged)\n");
    repo.write("n.py", "y = 2\neval(n)\n");
    repo.git(&["add", "a.py", "n.py"]);
    repo.write("a.py", "eval(a)\neval(worktree)\n");
    repo.write("b.py", "eval(b)\n");
    repo.write("u.py", "eval(u)\n");
    repo
}

fn grep(repo: &TestRepo, extra: &[&str]) -> Output {
    let mut args = vec!["grep", "-p", "eval($X)", "-l", "python"];
    args.extend_from_slice(extra);
    repo.run(&args)
}

/// The sorted keys of a JSON object.
fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

#[test]
fn grep_cached_searches_the_staged_blobs_not_the_work_tree() {
    let repo = staged_apart();
    // The work tree first (its results go to the cache too: the staged blobs must not
    // be answered by them).
    let out = grep(&repo, &[]);
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "a.py:1:1: eval(a)\na.py:2:1: eval(worktree)\nb.py:1:1: eval(b)\nn.py:2:1: eval(n)\n\
         u.py:1:1: eval(u)\n"
    );
    let staged = "a.py:1:1: eval(a)\na.py:2:1: eval(staged)\nn.py:2:1: eval(n)\n";
    for _ in 0..2 {
        // Cold, then through the cache (keyed by the staged blob's id).
        let out = grep(&repo, &["--cached"]);
        out.assert_code(0);
        assert_eq!(out.stdout, staged);
    }
    // Context lines are the staged text's, from the cache's entry too.
    let out = grep(&repo, &["--cached", "-B", "1", "n.py"]);
    assert_eq!(out.stdout, "n.py-1-y = 2\nn.py:2:1: eval(n)\n");
    // A file deleted from the work tree is still staged.
    std::fs::remove_file(repo.path().join("n.py")).expect("remove");
    assert_eq!(grep(&repo, &["--cached"]).stdout, staged);

    // JSON: the same shape as a search of the work tree.
    let cached = grep(&repo, &["--cached", "--json"]).json();
    let plain = grep(&repo, &["--json"]).json();
    assert_eq!(keys(&cached), keys(&plain));
    assert_eq!(keys(&cached["matches"][0]), keys(&plain["matches"][0]));
    assert_eq!(cached["total"].as_u64(), Some(3));
    assert_eq!(cached["matches"][1]["text"], "eval(staged)");

    // A pathspec naming only an untracked file names nothing staged.
    let out = repo.run(&["--json", "grep", "-p", "eval($X)", "--cached", "u.py"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "pathspec-no-match");
    // Standard input is not the index.
    let out = repo.run_with(
        ".",
        &[
            "grep", "-p", "eval($X)", "-l", "python", "--stdin", "--cached",
        ],
        &[],
        Some(b"eval(1)\n"),
    );
    out.assert_code(2);
    assert!(out.stderr.contains("--cached"), "{}", out.stderr);
}

/// `--changed --cached`: the files that differ between HEAD and the index;
/// `--changed-lines --cached`: only the staged lines (what the commit adds).
#[test]
fn grep_cached_changed_lines_are_the_lines_being_committed() {
    let repo = staged_apart();
    let out = grep(&repo, &["--cached", "--changed"]);
    assert_eq!(
        out.stdout,
        "a.py:1:1: eval(a)\na.py:2:1: eval(staged)\nn.py:2:1: eval(n)\n"
    );
    let out = grep(&repo, &["--cached", "--changed-lines"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.py:2:1: eval(staged)\nn.py:2:1: eval(n)\n");
    let v = grep(&repo, &["--cached", "--changed-lines", "--json"]).json();
    assert_eq!(
        (v["total"].as_u64(), v["files_matched"].as_u64()),
        (Some(2), Some(2))
    );
    // The work tree's changed lines, for comparison: the unstaged ones and the
    // untracked file.
    let out = grep(&repo, &["--changed-lines"]);
    assert_eq!(
        out.stdout,
        "a.py:2:1: eval(worktree)\nb.py:1:1: eval(b)\nn.py:2:1: eval(n)\nu.py:1:1: eval(u)\n"
    );
    // Nothing staged: nothing being committed.
    repo.git(&["reset", "-q"]);
    let out = grep(&repo, &["--cached", "--changed-lines"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "");
}

fn edit(repo: &TestRepo, extra: &[&str]) -> Output {
    let mut args = vec!["edit", "-p", "eval($X)", "-r", "safe($X)", "-l", "python"];
    args.extend_from_slice(extra);
    repo.run(&args)
}

/// The index as `git ls-files -s` lists it (modes, blob ids, paths).
fn index(repo: &TestRepo) -> String {
    repo.git(&["ls-files", "-s"])
}

/// `edit --cached` where the work tree holds what is staged: the preview is the staged
/// content's rewrite, applied to the work tree and the index alike.
#[test]
fn edit_cached_rewrites_the_staged_content_and_applies_it_to_the_index_too() {
    let repo = TestRepo::new();
    repo.write("a.py", "eval(a)\n");
    repo.write("b.py", "eval(b)\n");
    repo.commit_all("base");
    repo.write("a.py", "eval(a)\nz = eval(s)\n");
    repo.git(&["add", "a.py"]);
    // c.py: an unstaged edit in a file the rewrite does not change (no eval staged)
    // blocks nothing.
    repo.write("c.py", "w = 0\n");
    repo.git(&["add", "c.py"]);
    repo.write("c.py", "w = eval(0)\n");

    let refs = repo.astedit_refs();
    let out = edit(&repo, &["--cached", "--changed-lines"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("1 replacement in 1 file"),
        "{}",
        out.stdout
    );
    // Applying it should stage it too: the text says how.
    assert!(
        out.stdout
            .contains("Apply with `git astedit apply --index "),
        "{}",
        out.stdout
    );
    assert_eq!(repo.astedit_refs().len(), refs.len() + 1);
    // Staged only: the work tree and the index are as they were.
    assert_eq!(repo.read_string("a.py"), "eval(a)\nz = eval(s)\n");
    assert_eq!(repo.git(&["show", ":a.py"]), "eval(a)\nz = eval(s)\n");
    repo.run(&["apply", "--index"]).assert_code(0);
    assert_eq!(repo.read_string("a.py"), "eval(a)\nz = safe(s)\n");
    assert_eq!(repo.git(&["show", ":a.py"]), "eval(a)\nz = safe(s)\n");
    assert_eq!(repo.read_string("c.py"), "w = eval(0)\n");
    assert_eq!(repo.git(&["show", ":c.py"]), "w = 0\n");

    // `--apply` applies to the index as well; every staged match, with --changed.
    repo.write("b.py", "eval(b)\neval(b2)\n");
    repo.git(&["add", "b.py"]);
    let out = edit(&repo, &["--cached", "--changed", "--apply", "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["applied"], true);
    assert_eq!(v["replacements"].as_u64(), Some(3));
    for (path, text) in [
        ("a.py", "safe(a)\nz = safe(s)\n"),
        ("b.py", "safe(b)\nsafe(b2)\n"),
    ] {
        assert_eq!(repo.read_string(path), text, "{path}");
        assert_eq!(repo.git(&["show", &format!(":{path}")]), text, "{path}");
    }
    assert_eq!(repo.git(&["diff", "--name-only"]), "c.py\n");
    // Its undo takes both back, as the text says.
    repo.write("b.py", "safe(b)\nsafe(b2)\neval(b3)\n");
    repo.git(&["add", "b.py"]);
    let out = edit(&repo, &["--cached", "--apply"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("Undo with `git astedit undo --index "),
        "{}",
        out.stdout
    );
    repo.run(&["undo", "--index"]).assert_code(0);
    assert_eq!(
        repo.git(&["show", ":b.py"]),
        "safe(b)\nsafe(b2)\neval(b3)\n"
    );
    assert_eq!(repo.read_string("b.py"), "safe(b)\nsafe(b2)\neval(b3)\n");
}

/// `edit --cached` refuses (exit 4, `unstaged-changes`) when a file it would change
/// holds other bytes in the work tree than in the index: a preview of the staged
/// content could not apply there. Nothing is staged; no byte moves.
#[test]
fn edit_cached_refuses_files_whose_work_tree_differs_from_the_index() {
    let repo = staged_apart();
    // d.py: the same staged and in the work tree.
    repo.write("d.py", "eval(d)\n");
    repo.git(&["add", "d.py"]);
    let (files, staged) = (repo.snapshot(), index(&repo));
    let refs = repo.astedit_refs();
    // a.py differs (an unstaged edit); n.py is deleted from the work tree.
    std::fs::remove_file(repo.path().join("n.py")).expect("remove");
    let files_now = repo.snapshot();
    let out = edit(&repo, &["--cached"]);
    out.assert_code(4);
    assert!(
        out.stderr.contains(
            "--cached: the work tree differs from the index in 2 files the preview would \
             change: a.py, n.py"
        ),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("git add"), "{}", out.stderr);
    let out = edit(&repo, &["--cached", "--apply", "--json"]);
    out.assert_code(4);
    let v = out.json();
    assert_eq!(v["error"]["code"], "unstaged-changes");
    assert_eq!(v["error"]["exit"], 4);
    assert_eq!(
        v["error"]["details"]["paths"],
        serde_json::json!(["a.py", "n.py"])
    );
    assert_eq!(repo.astedit_refs(), refs);
    assert_eq!(repo.snapshot(), files_now);
    assert_eq!(index(&repo), staged);
    assert!(files.len() > files_now.len());

    // An executable bit flipped in the work tree only is a difference too.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let d = repo.path().join("d.py");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let out = edit(&repo, &["--cached", "d.py"]);
        out.assert_code(4);
        assert!(
            out.stderr
                .contains("in 1 file the preview would change: d.py"),
            "{}",
            out.stderr
        );
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    // `-i`: a person is asked only about the changes that can be staged (d.py's), and
    // the edit is refused all the same, naming the others.
    let out = repo.run_with(
        ".",
        &[
            "edit", "-i", "-p", "eval($X)", "-r", "safe($X)", "-l", "python", "--cached",
        ],
        &[],
        Some(b"y\ny\ny\ny\n"),
    );
    out.assert_code(4);
    assert_eq!(
        out.stdout.matches("Apply this change [").count(),
        1,
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("+safe(d)"), "{}", out.stdout);
    assert!(!out.stdout.contains("+safe(staged)"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("2 files the preview would change: a.py, n.py"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.astedit_refs(), refs);
    // With --changed-lines too (a.py's staged eval is on a staged line).
    let out = edit(&repo, &["--cached", "--changed-lines"]);
    out.assert_code(4);
    assert!(out.stderr.contains(": a.py, n.py"), "{}", out.stderr);
    assert_eq!(repo.astedit_refs(), refs);
    assert_eq!(repo.snapshot(), files_now);

    // Left out by a pathspec, the other files block nothing.
    let out = edit(&repo, &["--cached", "d.py"]);
    out.assert_code(0);
    assert_eq!(repo.astedit_refs().len(), refs.len() + 1);
    assert_eq!(repo.read_string("d.py"), "eval(d)\n");
}

/// `scan --cached --stage/--apply` holds to the same rule as `edit --cached`: fixes of
/// the staged content are staged only where the work tree holds it (else exit 4,
/// `unstaged-changes`, nothing staged), and `--apply` updates the index too.
#[test]
fn scan_cached_fixes_are_staged_only_where_the_work_tree_holds_the_index() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        r#"
[[rules]]
id = "no-eval"
language = "python"
severity = "error"
message = "eval"
rule.pattern = "eval($X)"
fix = "safe($X)"
"#,
    );
    repo.write(
        "a.py", "x = 1
",
    );
    repo.commit_all("base");
    repo.write(
        "a.py",
        "x = eval(1)
",
    );
    repo.git(&["add", "a.py"]);
    repo.write(
        "a.py",
        "x = eval(1)
# wip
",
    );
    let (files, staged, refs) = (repo.snapshot(), index(&repo), repo.astedit_refs());
    for mode in ["--stage", "--apply"] {
        let out = repo.run(&["--json", "scan", "--cached", mode]);
        out.assert_code(4);
        let v = out.json();
        assert_eq!(v["error"]["code"], "unstaged-changes", "{mode}");
        assert_eq!(v["error"]["details"]["paths"], serde_json::json!(["a.py"]));
        assert_eq!(repo.astedit_refs(), refs, "{mode}");
        assert_eq!(repo.snapshot(), files, "{mode}");
        assert_eq!(index(&repo), staged, "{mode}");
    }
    // The check alone reads the index and writes nothing: it runs.
    repo.run(&["scan", "--cached", "--check"]).assert_code(1);

    repo.git(&["add", "a.py"]);
    let out = repo.run(&["scan", "--cached", "--stage"]);
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("Apply with `git astedit apply --index "),
        "{}",
        out.stderr
    );
    repo.run(&["discard"]).assert_code(0);
    // Exit 1: files were changed.
    let out = repo.run(&["scan", "--cached", "--apply"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains("Undo with `git astedit undo --index "),
        "{}",
        out.stderr
    );
    assert_eq!(repo.read_string("a.py"), "x = safe(1)\n# wip\n");
    assert_eq!(repo.git(&["show", ":a.py"]), "x = safe(1)\n# wip\n");
}

/// `scan --cached -i` asks a person only about the fixes that could be staged (in files
/// whose work tree holds the staged blob) and, as `edit --cached -i`, is refused at the
/// end naming the others; nothing is staged.
#[test]
fn scan_cached_i_offers_only_the_fixes_that_can_be_staged() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        r#"
[[rules]]
id = "no-eval"
language = "python"
severity = "error"
message = "eval"
rule.pattern = "eval($X)"
fix = "safe($X)"
"#,
    );
    repo.write("a.py", "x = 1\n");
    repo.write("d.py", "y = 2\n");
    repo.commit_all("base");
    repo.write("a.py", "x = eval(staged)\n");
    repo.write("d.py", "y = eval(d)\n");
    repo.git(&["add", "a.py", "d.py"]);
    repo.write("a.py", "x = eval(staged)\n# wip\n");
    let (files, staged, refs) = (repo.snapshot(), index(&repo), repo.astedit_refs());
    let ask = |args: &[&str]| repo.run_with(".", args, &[], Some(b"y\ny\ny\n"));
    let out = ask(&["scan", "-i", "--cached"]);
    out.assert_code(4);
    assert_eq!(
        out.stdout.matches("Apply this change [").count(),
        1,
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("+y = safe(d)"), "{}", out.stdout);
    assert!(!out.stdout.contains("safe(staged)"), "{}", out.stdout);
    assert!(
        out.stderr.contains("1 file the preview would change: a.py"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.astedit_refs(), refs);
    // Only a.py's fix found: nothing is offered, the refusal all the same.
    let out = ask(&["scan", "-i", "--cached", "--apply", "a.py"]);
    out.assert_code(4);
    assert!(
        !out.stdout.contains("Apply this change ["),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("would change: a.py"), "{}", out.stderr);
    assert_eq!(repo.astedit_refs(), refs);
    assert_eq!(repo.snapshot(), files);
    assert_eq!(index(&repo), staged);
    // Left out by a pathspec, a.py blocks nothing: d.py's accepted fix is staged.
    let out = ask(&["scan", "-i", "--cached", "d.py"]);
    out.assert_code(0);
    assert_eq!(repo.astedit_refs().len(), refs.len() + 1);
}

/// A preview staged with `--cached` records it, and `refresh` re-derives it from the
/// index: a stale file whose work tree holds other bytes than its staged blob refuses
/// the refresh (exit 4, `unstaged-changes`, nothing staged); once staged as it is, it
/// is re-run on that content. The same for a scan's fixes.
#[test]
fn refresh_of_a_cached_preview_rederives_from_the_index() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        r#"
[[rules]]
id = "no-eval"
language = "python"
severity = "error"
message = "eval"
rule.pattern = "eval($X)"
fix = "safe($X)"
"#,
    );
    repo.write("a.py", "x = 1\n");
    repo.commit_all("base");
    repo.write("a.py", "x = eval(1)\n");
    repo.git(&["add", "a.py"]);
    let staged = |args: &[&str]| -> String {
        let out = repo.run(args);
        out.assert_code(0);
        let v = out.json();
        v["id"].as_str().expect("id").to_string()
    };
    let edit = staged(&[
        "--json", "edit", "-p", "eval($X)", "-r", "safe($X)", "-l", "python", "--cached",
    ]);
    let scan = staged(&["--json", "scan", "--cached", "--stage"]);
    // An unstaged edit makes both stale, and neither can be re-derived from the index.
    repo.write("a.py", "# moved down\nx = eval(1)\n");
    let refs = repo.astedit_refs();
    for id in [&edit, &scan] {
        let out = repo.run(&["--json", "refresh", id]);
        out.assert_code(4);
        let v = out.json();
        assert_eq!(v["error"]["code"], "unstaged-changes", "{v}");
        assert_eq!(v["error"]["details"]["paths"], serde_json::json!(["a.py"]));
        assert_eq!(repo.astedit_refs(), refs);
    }
    // Staged as it is, the file is re-run on that content.
    repo.git(&["add", "a.py"]);
    let out = repo.run(&["--json", "refresh", &edit]);
    out.assert_code(0);
    let successor = out.json()["successor"]
        .as_str()
        .expect("successor")
        .to_string();
    repo.run(&["apply", "--index", &successor]).assert_code(0);
    assert_eq!(repo.read_string("a.py"), "# moved down\nx = safe(1)\n");
    assert_eq!(repo.git(&["show", ":a.py"]), "# moved down\nx = safe(1)\n");
}

/// Two files whose work tree cannot hold their staged blob although `git status` calls
/// them clean: one outside a sparse checkout (no copy in the work tree) and one whose
/// checkout has CRLF where the blob has LF (`core.autocrlf`). Both are refused, nothing
/// is staged, and the hint names the way out (a pathspec), not only `git add`.
#[test]
fn edit_cached_refuses_sparse_and_converted_files_with_a_hint_that_fits() {
    let repo = TestRepo::new();
    repo.write("in/a.py", "eval(a)\n");
    repo.write("out/b.py", "eval(b)\n");
    repo.commit_all("base");
    repo.git(&["sparse-checkout", "set", "in"]);
    assert!(!repo.exists("out/b.py"));
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    let refs = repo.astedit_refs();
    let out = edit(&repo, &["--cached"]);
    out.assert_code(4);
    assert!(out.stderr.contains("change: out/b.py"), "{}", out.stderr);
    assert!(out.stderr.contains("sparse checkout"), "{}", out.stderr);
    assert!(out.stderr.contains("`:!PATH`"), "{}", out.stderr);
    // Left out by a pathspec, the file in the cone is staged.
    let out = edit(&repo, &["--cached", "--", ":!out"]);
    out.assert_code(0);
    assert_eq!(repo.astedit_refs().len(), refs.len() + 1);

    let repo = TestRepo::new();
    repo.git(&["config", "core.autocrlf", "true"]);
    repo.write("c.py", "eval(c)\r\n");
    repo.commit_all("base");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    let (files, staged) = (repo.snapshot(), index(&repo));
    let out = edit(&repo, &["--cached", "--json"]);
    out.assert_code(4);
    let v = out.json();
    assert_eq!(v["error"]["code"], "unstaged-changes");
    assert_eq!(v["error"]["details"]["paths"], serde_json::json!(["c.py"]));
    let hint = v["error"]["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("line-ending conversion"), "{hint}");
    assert_eq!(repo.astedit_refs(), Vec::<String>::new());
    assert_eq!(repo.snapshot(), files);
    assert_eq!(index(&repo), staged);
    // Without --cached the work tree's bytes are rewritten as they are.
    edit(&repo, &[]).assert_code(0);
}
