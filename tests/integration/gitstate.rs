//! Integration tests: the git state around apply — the index lock, submodules and
//! nested repositories, sparse checkouts, what `--index`/`--commit` stage under
//! `core.autocrlf` and `.gitattributes`, undo of the index, and bad-input exit codes.

use git_astedit::change::ChangeSet;
use git_astedit::change::FileChange;
use git_astedit::change::FileContent;
use git_astedit::change::FileMode;
use git_astedit::change::PreviewMeta;
use git_astedit::repo::Repo;

use crate::util::TestRepo;

/// Stages, through the library, a preview writing `after` at each path (`None`
/// deletes), read against the work tree as it is: this bypasses the patch stager's
/// refusals, so apply's own checks are what is tested.
fn stage_raw(t: &TestRepo, edits: &[(&str, Option<&[u8]>)]) -> String {
    let repo = Repo::discover_from(t.path()).expect("open repo");
    let mut changes = ChangeSet::default();
    for (path, after) in edits {
        let before = std::fs::read(t.path().join(path))
            .ok()
            .map(|bytes| FileContent {
                bytes,
                mode: FileMode::Regular,
            });
        changes.changes.push(FileChange {
            path: path.to_string(),
            before,
            after: after.map(|b| FileContent {
                bytes: b.to_vec(),
                mode: FileMode::Regular,
            }),
        });
    }
    let meta = PreviewMeta {
        kind: git_astedit::change::PreviewKind::Edit,
        summary: "test".into(),
        tool_version: git_astedit::VERSION.into(),
        ..PreviewMeta::default()
    };
    git_astedit::txn::stage(&repo, &changes, &meta)
        .expect("stage")
        .id
}

fn patch(t: &TestRepo, text: &str) -> crate::util::Output {
    t.run_with(".", &["--json", "patch", "-"], &[], Some(text.as_bytes()))
}

fn error_code(out: &crate::util::Output) -> String {
    out.json()["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn head(t: &TestRepo) -> String {
    t.git(&["rev-parse", "HEAD"]).trim().to_string()
}

fn pending(t: &TestRepo) -> usize {
    t.astedit_refs().len()
}

fn applied_events(t: &TestRepo) -> usize {
    let out = t.run(&["log", "--json"]);
    out.stdout.matches("\"applied\"").count()
}

// ---- item 3: the index lock -------------------------------------------------------

#[test]
fn held_index_lock_refuses_commit_and_index_before_anything_is_written() {
    let t = TestRepo::new();
    t.write("a.txt", "a\nb\n");
    t.commit_all("init");
    patch(
        &t,
        "*** Begin Patch\n*** Update File: a.txt\n-b\n+c\n*** End Patch\n",
    )
    .assert_code(0);
    let before_head = head(&t);
    let before_tree = t.snapshot();
    let before_index = t.git(&["ls-files", "-s"]);
    t.write(".git/index.lock", "held by someone else");

    for args in [
        &["--json", "apply", "--commit", "-m", "x"][..],
        &["--json", "apply", "--index"][..],
    ] {
        let out = t.run(args);
        out.assert_code(6);
        assert_eq!(error_code(&out), "locked", "{}", out.stdout);
        let err = &out.json()["error"];
        assert!(err["message"].as_str().unwrap().contains("index.lock"));
        assert!(err["hint"].as_str().unwrap().contains("rm '"));
        assert_eq!(head(&t), before_head, "HEAD moved");
        assert_eq!(t.snapshot(), before_tree, "the work tree was written");
        assert_eq!(pending(&t), 1, "the preview is no longer pending");
        assert_eq!(applied_events(&t), 0, "an apply was journalled");
        // Someone else's lock is theirs: left exactly as it was.
        assert_eq!(t.read_string(".git/index.lock"), "held by someone else");
    }
    std::fs::remove_file(t.path().join(".git/index.lock")).unwrap();
    assert_eq!(t.git(&["ls-files", "-s"]), before_index);

    t.run(&["apply", "--commit", "-m", "x"]).assert_code(0);
    assert!(!t.exists(".git/index.lock"), "our lock was left behind");
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    assert_eq!(t.git(&["show", "HEAD:a.txt"]), "a\nc\n");
    t.fsck();
}

#[test]
fn apply_index_under_the_lock_matches_git_diff_cached() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.write("other.txt", "o\n");
    t.commit_all("init");
    // An unrelated staged change must survive our index write.
    t.write("other.txt", "staged\n");
    t.git(&["add", "other.txt"]);
    patch(
        &t,
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Delete File: b.txt\n\
         *** Add File: c/d.txt\n+d\n*** End Patch\n",
    )
    .assert_code(0);
    t.run(&["apply", "--index"]).assert_code(0);
    assert_eq!(
        t.git(&["diff", "--cached", "--name-status"]),
        "M\ta.txt\nD\tb.txt\nA\tc/d.txt\nM\tother.txt\n"
    );
    assert_eq!(
        t.git(&["status", "--porcelain"]),
        "M  a.txt\nD  b.txt\nA  c/d.txt\nM  other.txt\n"
    );
    assert_eq!(t.git(&["show", ":c/d.txt"]), "d\n");
    assert!(!t.exists(".git/index.lock"));
    assert!(!t.exists(".git/astedit-index.tmp"));
    t.fsck();
}

// ---- item 4: submodules and nested repositories ----------------------------------

/// A repository with a real submodule at `subm` (holding `src/a.js`).
fn with_submodule() -> (TestRepo, TestRepo) {
    let inner = TestRepo::new();
    inner.write("src/a.js", "let a = 1;\n");
    inner.commit_all("inner");
    let t = TestRepo::new();
    t.write("top.js", "let top = 1;\n");
    t.commit_all("init");
    let url = inner.path().display().to_string();
    t.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &url,
        "subm",
    ]);
    t.git(&["commit", "-q", "-m", "add submodule"]);
    (t, inner)
}

fn gitlink(t: &TestRepo) -> String {
    t.git(&["ls-files", "-s", "subm"])
}

#[test]
fn patches_into_a_submodule_are_refused_at_staging() {
    let (t, _inner) = with_submodule();
    assert!(gitlink(&t).starts_with("160000 "));
    for text in [
        "*** Begin Patch\n*** Update File: subm/src/a.js\n-let a = 1;\n+let a = 2;\n*** End Patch\n",
        "*** Begin Patch\n*** Add File: subm/src/new.js\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Delete File: subm/src/a.js\n*** End Patch\n",
        "*** Begin Patch\n*** Add File: subm\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: top.js\n*** Move to: subm/top.js\n*** End Patch\n",
    ] {
        let out = patch(&t, text);
        out.assert_code(4);
        assert_eq!(error_code(&out), "protected-path", "{text}");
        let msg = out.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains("submodule 'subm'"), "{msg}");
    }
    assert_eq!(pending(&t), 0);
    assert_eq!(t.read_string("subm/src/a.js"), "let a = 1;\n");
}

#[test]
fn apply_refuses_a_preview_reaching_into_a_submodule_and_keeps_the_gitlink() {
    let (t, _inner) = with_submodule();
    let link = gitlink(&t);
    stage_raw(&t, &[("subm/src/a.js", Some(b"let a = 2;\n"))]);
    for args in [
        &["--json", "apply", "--index"][..],
        &["--json", "apply"][..],
    ] {
        let out = t.run(args);
        out.assert_code(4);
        assert_eq!(error_code(&out), "protected-path");
        assert_eq!(out.json()["error"]["details"]["path"], "subm/src/a.js");
    }
    assert_eq!(gitlink(&t), link, "the gitlink changed");
    assert_eq!(t.read_string("subm/src/a.js"), "let a = 1;\n");
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    assert_eq!(applied_events(&t), 0);
    t.fsck();
}

#[test]
fn nested_repositories_are_refused_at_staging_and_apply() {
    let t = TestRepo::new();
    t.write("lib/x.js", "let x = 1;\n");
    t.write("top.js", "let top = 1;\n");
    t.commit_all("init");
    // Staged while `vendor` is a plain folder, applied after it became a repository.
    t.write("vendor/v.js", "let v = 1;\n");
    let id = stage_raw(&t, &[("vendor/v.js", Some(b"let v = 2;\n"))]);
    std::fs::create_dir_all(t.path().join("vendor/.git")).unwrap();
    let out = t.run(&["--json", "apply", &id]);
    out.assert_code(4);
    assert_eq!(error_code(&out), "protected-path");
    assert!(out.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nested git repository 'vendor'"));
    assert_eq!(t.read_string("vendor/v.js"), "let v = 1;\n");

    // A real nested repository (untracked, with its own .git) is refused by patch too.
    let nested = t.path().join("lib/deep");
    std::fs::create_dir_all(&nested).unwrap();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&nested)
        .status()
        .unwrap();
    assert!(init.success());
    t.write("lib/deep/n.js", "let n = 1;\n");
    let out = patch(
        &t,
        "*** Begin Patch\n*** Update File: lib/deep/n.js\n-let n = 1;\n+let n = 2;\n*** End Patch\n",
    );
    out.assert_code(4);
    assert_eq!(error_code(&out), "protected-path");
    // Beside it, the parent's own files are fine.
    patch(
        &t,
        "*** Begin Patch\n*** Update File: lib/x.js\n-let x = 1;\n+let x = 2;\n*** End Patch\n",
    )
    .assert_code(0);
}

#[test]
fn edit_does_not_reach_into_a_submodule() {
    let (t, _inner) = with_submodule();
    let out = t.run(&[
        "--json",
        "edit",
        "-l",
        "js",
        "-p",
        "let $A = 1",
        "-r",
        "let $A = 9",
        "subm/src/a.js",
    ]);
    // Nothing to stage (exit 1) or a refusal: never a preview touching the submodule.
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(pending(&t), 0);
    let out = t.run(&[
        "--json",
        "edit",
        "-l",
        "js",
        "-p",
        "let $A = 1",
        "-r",
        "let $A = 9",
    ]);
    assert!(out.code == 0, "{}{}", out.stdout, out.stderr);
    let files = t.git(&["for-each-ref", "--format=%(refname)", "refs/astedit/"]);
    assert!(!files.is_empty());
    let shown = t.run(&["show", "--stat"]);
    assert!(!shown.stdout.contains("subm/"), "{}", shown.stdout);
}

// ---- item 5: sparse checkout ------------------------------------------------------

fn sparse(index: bool) -> TestRepo {
    let t = TestRepo::new();
    t.write("in/a.txt", "a\n");
    t.write("out/b.txt", "b\n");
    t.commit_all("init");
    let mut args = vec!["sparse-checkout", "set", "--cone"];
    if index {
        args.push("--sparse-index");
    }
    args.push("in");
    t.git(&args);
    assert!(!t.exists("out/b.txt"), "sparse-checkout did not apply");
    t
}

#[test]
fn paths_outside_the_sparse_cone_are_refused() {
    for sparse_index in [false, true] {
        let t = sparse(sparse_index);
        let blob = t.git(&["rev-parse", ":out/b.txt"]);
        for text in [
            "*** Begin Patch\n*** Add File: out/b.txt\n+mine\n*** End Patch\n",
            "*** Begin Patch\n*** Update File: out/b.txt\n-b\n+c\n*** End Patch\n",
            "*** Begin Patch\n*** Delete File: out/b.txt\n*** End Patch\n",
        ] {
            let out = patch(&t, text);
            out.assert_code(4);
            assert_eq!(error_code(&out), "protected-path");
            let msg = out.json()["error"]["message"].as_str().unwrap().to_string();
            assert!(msg.contains("sparse-checkout cone"), "{msg}");
        }
        // A preview staged by other means is refused at apply, and --index keeps
        // the tracked content.
        stage_raw(&t, &[("out/b.txt", Some(b"mine\n"))]);
        let out = t.run(&["--json", "apply", "--index"]);
        out.assert_code(4);
        assert_eq!(error_code(&out), "protected-path");
        assert!(!t.exists("out/b.txt"));
        assert_eq!(t.git(&["rev-parse", ":out/b.txt"]), blob);
        t.run(&["discard"]).assert_code(0);

        // Inside the cone, --index works, on a sparse index too.
        patch(
            &t,
            "*** Begin Patch\n*** Update File: in/a.txt\n-a\n+A\n*** End Patch\n",
        )
        .assert_code(0);
        t.run(&["apply", "--index"]).assert_code(0);
        assert_eq!(t.git(&["status", "--porcelain"]), "M  in/a.txt\n");
        assert_eq!(t.git(&["diff", "--cached", "--name-only"]), "in/a.txt\n");
        assert_eq!(t.git(&["rev-parse", ":out/b.txt"]), blob);
        t.fsck();
    }
}

// ---- item 6: what --index and --commit stage --------------------------------------

/// One repository set up by `setup` (files committed with LF, then the config and
/// attributes, then the work tree checked out again so that it holds what git
/// would write there).
fn converting_repo(config: &[(&str, &str)], attributes: &str, files: &[(&str, &[u8])]) -> TestRepo {
    let t = TestRepo::new();
    for (path, bytes) in files {
        t.write(path, bytes);
    }
    if !attributes.is_empty() {
        t.write(".gitattributes", attributes);
    }
    t.commit_all("init");
    for (k, v) in config {
        t.git(&["config", k, v]);
    }
    for (path, _) in files {
        std::fs::remove_file(t.path().join(path)).unwrap();
    }
    t.git(&["checkout", "--", "."]);
    t
}

/// The index entries of `paths` (mode, blob, stage, path).
fn entries(t: &TestRepo, paths: &[&str]) -> String {
    let mut args = vec!["ls-files", "-s", "--"];
    args.extend_from_slice(paths);
    t.git(&args)
}

#[test]
fn apply_index_and_commit_stage_what_git_add_stages() {
    type Setup = (
        &'static str,
        Vec<(&'static str, &'static str)>,
        &'static str,
        Vec<(&'static str, &'static [u8])>,
    );
    let clean = "sed s/secret/XXXX/";
    let setups: Vec<Setup> = vec![
        (
            "autocrlf",
            vec![("core.autocrlf", "true")],
            "",
            vec![("a.txt", b"one\ntwo\n")],
        ),
        (
            "autocrlf, CRLF already in the index",
            vec![("core.autocrlf", "true")],
            "",
            vec![("a.txt", b"one\r\ntwo\r\n")],
        ),
        (
            "text",
            vec![],
            "*.txt text\n",
            vec![("a.txt", b"one\ntwo\n")],
        ),
        (
            "eol=crlf",
            vec![],
            "*.txt eol=crlf\n",
            vec![("a.txt", b"one\ntwo\n")],
        ),
        (
            "-text under autocrlf",
            vec![("core.autocrlf", "true")],
            "*.txt -text\n",
            vec![("a.txt", b"one\r\ntwo\r\n")],
        ),
        (
            "clean filter",
            vec![("filter.x.clean", clean), ("filter.x.smudge", "cat")],
            "*.txt filter=x\n",
            vec![("a.txt", b"one\ntwo\n")],
        ),
    ];
    for (name, config, attributes, files) in &setups {
        for commit in [false, true] {
            let t = converting_repo(config, attributes, files);
            let twin = converting_repo(config, attributes, files);
            // The edit: one line changed with the file's own endings, one new file
            // with CRLF endings and a word the clean filter rewrites.
            let old = t.read("a.txt");
            let crlf = old.windows(2).any(|w| w == b"\r\n");
            let eol = if crlf { "\r\n" } else { "\n" };
            let new_a = format!("one{eol}secret two{eol}");
            stage_raw(
                &t,
                &[
                    ("a.txt", Some(new_a.as_bytes())),
                    ("b.txt", Some(b"secret\r\nnew\r\n")),
                ],
            );
            let args: &[&str] = if commit {
                &["--json", "apply", "--commit", "-m", "x"]
            } else {
                &["--json", "apply", "--index"]
            };
            let out = t.run(args);
            out.assert_code(0);
            // The twin gets the same bytes by hand, then `git add`.
            for p in ["a.txt", "b.txt"] {
                twin.write(p, t.read(p));
            }
            twin.git(&["add", "a.txt", "b.txt"]);
            assert_eq!(
                entries(&t, &["a.txt", "b.txt"]),
                entries(&twin, &["a.txt", "b.txt"]),
                "{name} (commit: {commit}): the index differs from git add's"
            );
            if commit {
                assert_eq!(t.git(&["status", "--porcelain"]), "", "{name}");
                assert_eq!(
                    t.git(&["rev-parse", "HEAD:b.txt"]),
                    twin.git(&["rev-parse", ":b.txt"]),
                    "{name}: the commit holds other blobs than git add stages"
                );
            } else {
                assert_eq!(
                    t.git(&["status", "--porcelain"]),
                    "M  a.txt\nA  b.txt\n",
                    "{name}"
                );
                assert_eq!(t.git(&["diff", "--name-only"]), "", "{name}");
            }
            t.fsck();
        }
    }
}

// ---- item 10: undo and the index; bad input ---------------------------------------

#[test]
fn undo_says_what_it_leaves_in_the_index_and_undo_index_restores_it() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let text =
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: n.txt\n+n\n*** End Patch\n";

    // Plain undo after --index: the work tree is back, the index is not, and it says so.
    patch(&t, text).assert_code(0);
    t.run(&["apply", "--index"]).assert_code(0);
    let out = t.run(&["undo"]);
    out.assert_code(0);
    assert!(out
        .stdout
        .contains("The index still holds the applied content of 2 files"));
    assert!(
        out.stdout.contains("git restore --staged -- a.txt n.txt"),
        "{}",
        out.stdout
    );
    assert_eq!(t.read_string("a.txt"), "a\n");
    assert_eq!(t.git(&["status", "--porcelain"]), "MM a.txt\nAD n.txt\n");
    t.git(&["restore", "--staged", "--", "a.txt", "n.txt"]);
    assert_eq!(t.git(&["status", "--porcelain"]), "");

    // undo --index restores both, and says so in JSON. (An undone preview is applied
    // again only by its id.)
    let id = t.run(&["--json", "list"]).json()["previews"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    t.run(&["apply", "--index", &id]).assert_code(0);
    let out = t.run(&["--json", "undo", "--index"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["index_restored"], true);
    assert_eq!(v["index_left"], serde_json::json!([]));
    assert_eq!(v["commit_kept"], serde_json::Value::Null);
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    assert!(!t.exists(".git/index.lock"));

    // After --commit: the commit stays; undo names it and the command to record the
    // reversal.
    t.run(&["apply", "--commit", "-m", "x", &id]).assert_code(0);
    let made = head(&t);
    let out = t.run(&["--json", "undo"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["commit_kept"], made.as_str());
    assert_eq!(v["index_left"], serde_json::json!(["a.txt", "n.txt"]));
    assert_eq!(head(&t), made, "undo rewrote history");
    // Recording the reversal as the text output says:
    t.git(&["commit", "-q", "-m", "revert", "--", "a.txt", "n.txt"]);
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    assert_eq!(t.git(&["show", "HEAD:a.txt"]), "a\n");
    t.run(&["apply", "--commit", "-m", "y", &id]).assert_code(0);
    let made = head(&t);
    let out = t.run(&["undo", "--index"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains(&format!("git revert {}", &made[..12])),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("git commit -m"), "{}", out.stdout);
    // With the index restored, that commit records exactly the reversal.
    t.git(&["commit", "-q", "-m", "revert"]);
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    assert_eq!(t.git(&["show", "HEAD:a.txt"]), "a\n");

    // A commit no longer on the branch is not said to stay in history.
    t.run(&["apply", "--commit", "-m", "z", &id]).assert_code(0);
    t.git(&["reset", "-q", "--soft", "HEAD~1"]);
    let out = t.run(&["--json", "undo"]);
    out.assert_code(0);
    assert_eq!(out.json()["commit_kept"], serde_json::Value::Null);
    t.fsck();
}

#[test]
fn unusable_input_files_exit_2() {
    let t = TestRepo::new();
    t.write("a.js", "let a = 1;\n");
    t.commit_all("init");
    std::fs::create_dir_all(t.path().join("folder")).unwrap();
    t.write(
        "bad.yml",
        b"id: x\nlanguage: js\nrule:\n  pattern: \xff\xfe\n",
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--json", "patch", "missing.patch"], "input-not-found"),
        (vec!["--json", "patch", "folder"], "input-is-a-folder"),
        (
            vec!["--json", "-C", "/nonexistent/astedit", "list"],
            "input-not-found",
        ),
        (
            vec!["--json", "scan", "--config", "bad.yml"],
            "bad-rule-file",
        ),
    ];
    for (args, code) in cases {
        let out = t.run(&args);
        out.assert_code(2);
        assert_eq!(error_code(&out), code, "{args:?}");
    }
}

#[test]
fn an_anchor_nowhere_in_the_file_refuses_the_patch() {
    let t = TestRepo::new();
    t.write(
        "a.js",
        "function f() {\n  return 1;\n}\nfunction g() {\n  return 1;\n}\n",
    );
    t.commit_all("init");
    let out = patch(
        &t,
        "*** Begin Patch\n*** Update File: a.js\n@@ function nothere()\n-  return 1;\n+  return 2;\n*** End Patch\n",
    );
    out.assert_code(5);
    assert_eq!(error_code(&out), "anchor-not-found");
    assert_eq!(pending(&t), 0);
    // An anchor the file has, above an earlier chunk's place, only gets a note.
    let out = patch(
        &t,
        "*** Begin Patch\n*** Update File: a.js\n@@ function g() {\n-  return 1;\n+  return 3;\n\
         @@ function g() {\n }\n-function g() {\n+function h() {\n*** End Patch\n",
    );
    out.assert_code(0);
}

#[test]
fn an_index_lock_left_by_a_killed_apply_is_ours_to_clear() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    patch(
        &t,
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** End Patch\n",
    )
    .assert_code(0);
    let out = t.run_with(
        ".",
        &["apply", "--index"],
        &[("GIT_ASTEDIT_FAULT", "after-commit")],
        None,
    );
    assert_ne!(out.code, 0);
    // Killed holding index.lock, as a killed git would be.
    assert!(t.exists(".git/index.lock"));
    // Recovery rolls the work tree forward; the index was never replaced.
    let out = t.run(&["list"]);
    assert!(out.stderr.contains("was completed"), "{}", out.stderr);
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert_eq!(
        t.git(&["rev-parse", ":a.txt"]),
        t.git(&["rev-parse", "HEAD:a.txt"])
    );
    // Recovery removed the lock the killed run held (ours: it bears our marker).
    assert!(!t.exists(".git/index.lock"));

    // Killed after its record was gone, still holding the lock: the next --index run
    // knows the lock is its own kind's and its holder gone.
    t.write(".git/index.lock", "git-astedit index lock (pid 999999)\n");
    patch(
        &t,
        "*** Begin Patch\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n",
    )
    .assert_code(0);
    t.run(&["apply", "--index"]).assert_code(0);
    assert!(!t.exists(".git/index.lock"));
    assert_eq!(t.git(&["status", "--porcelain"]), " M a.txt\nM  b.txt\n");
    t.fsck();
}

/// A path whose name no file system here can hold is refused (exit 4) by `patch`,
/// whether the name is too long to look up at all or only too long for the temp file
/// written beside it; nothing is staged.
#[test]
fn a_path_name_too_long_for_the_file_system_is_refused_not_internal() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    for len in [300, 240] {
        let name = format!("{}.txt", "x".repeat(len));
        let out = patch(
            &t,
            &format!("*** Begin Patch\n*** Add File: {name}\n+hi\n*** End Patch\n"),
        );
        out.assert_code(4);
        assert!(
            out.stdout.contains("longer than the file system"),
            "{}",
            out.stdout
        );
    }
    assert_eq!(t.astedit_refs(), Vec::<String>::new());
}

/// A new file outside the sparse cone (no index entry, so no skip-worktree bit) is
/// refused at apply as `git add` refuses it; one inside the cone applies.
#[test]
fn a_new_file_outside_the_sparse_cone_is_refused_at_apply() {
    for sparse_index in [false, true] {
        let t = sparse(sparse_index);
        let index = t.git(&["ls-files", "-s", "--sparse"]);
        stage_raw(&t, &[("other/new.txt", Some(b"new\n"))]);
        let out = t.run(&["--json", "apply", "--index"]);
        out.assert_code(4);
        assert_eq!(error_code(&out), "protected-path");
        assert!(!t.exists("other/new.txt"));
        assert_eq!(t.git(&["ls-files", "-s", "--sparse"]), index);
        t.run(&["discard"]).assert_code(0);
        stage_raw(&t, &[("in/new.txt", Some(b"new\n"))]);
        t.run(&["apply", "--index"]).assert_code(0);
        assert_eq!(t.git(&["status", "--porcelain"]), "A  in/new.txt\n");
        t.fsck();
    }
}

/// A split index stays split through `apply --index` (its `link` extension kept, as
/// `git add` keeps it), and reads back right.
#[test]
fn apply_index_keeps_a_split_index_split() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    t.git(&["update-index", "--split-index"]);
    assert_ne!(t.git(&["rev-parse", "--shared-index-path"]).trim(), "");
    patch(
        &t,
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: c.txt\n+c\n*** End Patch\n",
    )
    .assert_code(0);
    t.run(&["apply", "--index"]).assert_code(0);
    assert_ne!(
        t.git(&["rev-parse", "--shared-index-path"]).trim(),
        "",
        "the link extension was dropped"
    );
    assert_eq!(t.git(&["status", "--porcelain"]), "M  a.txt\nA  c.txt\n");
    t.fsck();
}
