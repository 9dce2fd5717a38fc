//! Integration tests: `edit` stages previews and touches no work-tree file.

use crate::util::TestRepo;

/// The id printed on the `Staged preview <id>.` line.
fn staged_id(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Staged preview "))
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no id in:\n{stdout}"))
        .to_string()
}

/// The diff part of `edit`'s output (everything before the blank line and summary).
fn printed_diff(stdout: &str) -> &str {
    let end = stdout.find("\n\n").map(|i| i + 1).unwrap_or(stdout.len());
    &stdout[..end]
}

/// `git diff refs/astedit/<id>~ refs/astedit/<id>` without the `index` lines.
fn git_diff_of(repo: &TestRepo, id: &str) -> String {
    let r = format!("refs/astedit/{id}");
    repo.git(&["diff", "--no-color", &format!("{r}~"), &r])
        .lines()
        .filter(|l| !l.starts_with("index "))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn blob_at(repo: &TestRepo, id: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")])
}

#[test]
fn rewrite_stages_a_preview_and_leaves_the_tree_alone() {
    let repo = TestRepo::new();
    repo.write("a.ts", "foo(1, 2);\nfoo(x, y);\nother();\n");
    repo.write("b.js", "foo(a, b)\n");
    repo.commit_all("init");
    repo.write("b.js", "foo(a, b)\n// uncommitted edit\n");
    let before = repo.snapshot();
    let status = repo.git(&["status", "--porcelain"]);

    let out = repo.run(&[
        "edit",
        "-p",
        "foo($A, $B)",
        "-r",
        "bar($B, $A)",
        "--reason",
        "swap",
    ]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert!(
        out.stdout.contains("3 replacements in 2 files"),
        "{}",
        out.stdout
    );

    assert_eq!(repo.snapshot(), before, "edit must not touch the work tree");
    assert_eq!(repo.git(&["status", "--porcelain"]), status);
    assert_eq!(repo.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "bar(2, 1);\nbar(y, x);\nother();\n"
    );
    // The before-side is the work tree, uncommitted edit included.
    assert_eq!(
        repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}~:b.js")]),
        "foo(a, b)\n// uncommitted edit\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "b.js"),
        "bar(b, a)\n// uncommitted edit\n"
    );
    assert_eq!(printed_diff(&out.stdout), git_diff_of(&repo, &id));
    repo.fsck();
}

#[test]
fn languages_lists_and_reindented_multiline_rewrites() {
    let repo = TestRepo::new();
    repo.write("t.py", "def f():\n    print(1, 2, 3)\n");
    repo.write("r.rs", "fn main() {\n    let v = x.unwrap();\n}\n");
    repo.write(
        "g.go",
        "package main\n\nfunc main() {\n\tcompute(1, 2)\n}\n",
    );
    repo.write(
        "m.js",
        "function outer() {\n  if (ok) {\n    wrap(\n      first,\n      second\n    );\n  }\n}\n",
    );
    let out = repo.run(&[
        "edit",
        "-p",
        "print($$$ARGS)",
        "-r",
        "log($$$ARGS)",
        "-p",
        "$A.unwrap()",
        "-r",
        "$A.expect(\"x\")",
        "-p",
        "compute($A, $B)",
        "-r",
        "compute($B, $A)",
        "-p",
        "wrap($$$ARGS)",
        "-r",
        "wrapped(\n  $$$ARGS\n)",
    ]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(blob_at(&repo, &id, "t.py"), "def f():\n    log(1, 2, 3)\n");
    assert_eq!(
        blob_at(&repo, &id, "r.rs"),
        "fn main() {\n    let v = x.expect(\"x\");\n}\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "g.go"),
        "package main\n\nfunc main() {\n\tcompute(2, 1)\n}\n"
    );
    let js = blob_at(&repo, &id, "m.js");
    assert!(
        js.contains("    wrapped(\n      "),
        "multi-line rewrite not re-indented:\n{js}"
    );
    repo.fsck();
}

#[test]
fn nested_matches_are_all_rewritten() {
    let repo = TestRepo::new();
    repo.write("n.js", "foo(foo(x));\n");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(blob_at(&repo, &id, "n.js"), "bar(bar(x));\n");
    assert!(
        out.stdout.contains("2 replacements in 1 file"),
        "{}",
        out.stdout
    );
}

#[test]
fn json_output_lists_every_change() {
    let repo = TestRepo::new();
    repo.write("a.ts", "foo(1);\n\nfoo(2);\n");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["replacements"], 2);
    let id = v["id"].as_str().expect("id");
    assert_eq!(repo.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    let f = &v["files"][0];
    assert_eq!(f["path"], "a.ts");
    assert_eq!(f["count"], 2);
    assert_eq!(f["changes"][1]["line"], 3);
    assert_eq!(f["changes"][1]["column"], 1);
    assert_eq!(f["changes"][1]["before"], "foo(2)");
    assert_eq!(f["changes"][1]["after"], "bar(2)");
}

#[test]
fn identity_and_no_match_stage_nothing() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "foo($A)"]);
    out.assert_code(1);
    assert!(repo.astedit_refs().is_empty());
    repo.run(&["edit", "-p", "nothing($A)", "-r", "x($A)"])
        .assert_code(1);
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn undefined_template_variable_is_refused() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($B)"]);
    out.assert_code(2);
    assert!(out.stderr.contains("$B"), "{}", out.stderr);
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn bad_pattern_and_unpaired_ops_are_refused() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n");
    repo.run(&["edit", "-p", "", "-r", "x"]).assert_code(2);
    repo.run(&["edit", "-p", "foo($A)", "-p", "bar($A)", "-r", "x"])
        .assert_code(2);
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn binary_files_are_skipped_not_rewritten() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n");
    repo.write("b.js", b"foo(1);\0binary");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("1 replacement in 1 file"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("1 binary (b.js)"), "{}", out.stderr);
}

#[test]
fn rewrite_that_breaks_the_parse_is_flagged() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A"]);
    out.assert_code(0);
    assert!(out.stderr.contains("parse with errors"), "{}", out.stderr);
    assert!(!out.stdout.contains("parse with errors"), "{}", out.stdout);
    let id = staged_id(&out.stdout);
    let msg = repo.git(&["log", "-1", "--format=%B", &format!("refs/astedit/{id}")]);
    assert!(msg.contains("introduces-parse-errors"), "{msg}");
}

#[test]
fn sha256_repository_and_unborn_branch() {
    let repo = TestRepo::with_init_args(&["--object-format=sha256"]);
    repo.write("a.py", "print(1)\n");
    let out = repo.run(&["edit", "-p", "print($A)", "-r", "log($A)"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(blob_at(&repo, &id, "a.py"), "log(1)\n");
    let full = repo.git(&["rev-parse", &format!("refs/astedit/{id}")]);
    assert_eq!(full.trim().len(), 64);
    repo.fsck();
}

#[test]
fn subfolder_with_relative_pathspec() {
    let repo = TestRepo::new();
    repo.write("pkg/a.js", "foo(1);\n");
    repo.write("pkg/sub/b.js", "foo(2);\n");
    repo.write("other/c.js", "foo(3);\n");
    let out = repo.run_in(
        "pkg/sub",
        &["edit", "-p", "foo($A)", "-r", "bar($A)", "../a.js", "."],
    );
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    let files = repo.git(&[
        "diff",
        "--name-only",
        &format!("refs/astedit/{id}~"),
        &format!("refs/astedit/{id}"),
    ]);
    assert_eq!(files, "pkg/a.js\npkg/sub/b.js\n");
}

#[test]
fn list_show_and_discard() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n");
    let out = repo.run(&[
        "edit",
        "-p",
        "foo($A)",
        "-r",
        "bar($A)",
        "--reason",
        "rename foo",
    ]);
    let id = staged_id(&out.stdout);
    let list = repo.run(&["list"]);
    list.assert_code(0);
    assert!(list.stdout.starts_with(&id), "{}", list.stdout);
    assert!(list.stdout.contains("rename foo"), "{}", list.stdout);

    let show = repo.run(&["show", &id[..6]]);
    show.assert_code(0);
    assert!(
        show.stdout.contains("-foo(1);\n+bar(1);\n"),
        "{}",
        show.stdout
    );
    // The header, then the very diff `edit` printed.
    assert!(
        show.stdout.contains("\nreason: rename foo\n\n"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.ends_with(printed_diff(&out.stdout)),
        "{}",
        show.stdout
    );
    let stat = repo.run(&["show", "--stat"]);
    assert!(stat.stdout.contains(" a.js | "), "{}", stat.stdout);
    let json = repo.run(&["show", &id, "--json"]).json();
    assert_eq!(json["preview"]["id"], id.as_str());
    assert_eq!(json["schema_version"], 2);
    assert_eq!(json["meta"]["kind"], "edit");
    assert_eq!(json["meta"]["reason"], "rename foo");

    repo.run(&["show", "ffffffffffff"]).assert_code(2);

    repo.run(&["discard", &id, "--reason", "not needed"])
        .assert_code(0);
    assert!(repo.astedit_refs().is_empty());
    assert_eq!(repo.run(&["list"]).stdout, "");
    repo.fsck();
}

#[test]
fn outer_match_that_stops_matching_is_reported() {
    let repo = TestRepo::new();
    repo.write("d.js", "foo(foo(foo(foo(x))));\n");
    let out = repo.run(&["edit", "-p", "foo(foo($A))", "-r", "$A"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(blob_at(&repo, &id, "d.js"), "x;\n");
    // A warning: on stderr, stdout keeps the result.
    assert!(
        out.stderr.contains("1 outer match no longer matched") && out.stderr.contains("d.js:1:5"),
        "{}",
        out.stderr
    );
    let json = repo
        .run(&["edit", "-p", "foo(foo($A))", "-r", "$A", "--json"])
        .json();
    assert_eq!(json["files"][0]["dropped"][0]["text"], "foo(foo(foo(x)))");
}

/// A large edit's objects go into one pack (a small one's stay loose, as the other
/// tests check through fsck); the pack is valid, the printed diff is the stored one,
/// and apply and undo work from it.
fn large_edit_is_staged_as_one_pack(init_args: &[&str]) {
    let repo = TestRepo::with_init_args(init_args);
    let files: Vec<String> = (0..130)
        .map(|i| format!("pkg{}/mod{i}.py", i % 7))
        .collect();
    for (i, f) in files.iter().enumerate() {
        repo.write(f, format!("print({i})\nkeep({i})\n"));
    }
    repo.commit_all("init");
    // Uncommitted edits: their before-side blobs are new objects too, so undo must
    // find them in the pack.
    for (i, f) in files.iter().enumerate().filter(|(i, _)| i % 10 == 0) {
        repo.write(f, format!("print({i})\nkeep({i})\n# dirty\n"));
    }
    let before = repo.snapshot();
    let packs_before = repo.git(&["count-objects", "-v"]);
    assert!(packs_before.contains("packs: 0"), "{packs_before}");

    let out = repo.run(&[
        "edit",
        "-p",
        "print($A)",
        "-r",
        "log($A)",
        "--max-render",
        "0",
    ]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    let counts = repo.git(&["count-objects", "-v"]);
    assert!(counts.contains("packs: 1"), "{counts}");
    // Only new objects went into the pack: 130 after-blobs, 13 dirty before-blobs,
    // 8 + 8 trees (the dirty files make the before trees new as well) and 2 commits,
    // and the review's record of where each site is (a blob, its tree, its commit).
    assert!(counts.contains("in-pack: 164"), "{counts}");
    let pack_dir = repo.path().join(".git/objects/pack");
    let idx = std::fs::read_dir(&pack_dir)
        .expect("pack folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "idx"))
        .expect("an index");
    repo.git(&["verify-pack", idx.to_str().expect("utf-8 path")]);
    repo.fsck();
    assert_eq!(printed_diff(&out.stdout), git_diff_of(&repo, &id));
    assert_eq!(repo.snapshot(), before, "staging touched the work tree");

    repo.run(&["apply", &id]).assert_code(0);
    for (i, f) in files.iter().enumerate() {
        let dirty = if i % 10 == 0 { "# dirty\n" } else { "" };
        assert_eq!(repo.read_string(f), format!("log({i})\nkeep({i})\n{dirty}"));
    }
    repo.run(&["undo", &id]).assert_code(0);
    assert_eq!(repo.snapshot(), before);
    repo.fsck();
}

#[test]
fn large_edit_is_staged_as_one_pack_sha1() {
    large_edit_is_staged_as_one_pack(&[]);
}

#[test]
fn large_edit_is_staged_as_one_pack_sha256() {
    large_edit_is_staged_as_one_pack(&["--object-format=sha256"]);
}

/// Ops are `-p PATTERN -r TEMPLATE` pairs in order; anything else is refused before
/// any file is read, and nothing is staged.
#[test]
fn templates_must_follow_their_patterns() {
    let repo = TestRepo::new();
    repo.write("a.py", "print(1)\nlog(2)\n");
    repo.commit_all("init");
    let misordered = "edit -p print($A) -p log($A) -r a($A) -r b($A)";
    for line in [
        misordered,
        "edit -r a($A) -p print($A) -r b($A) -p log($A)",
        "edit -p print($A) -r a($A) -p log($A)",
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        let out = repo.run(&args);
        out.assert_code(2);
        assert!(out.stderr.contains("-r TEMPLATE"), "{line}: {}", out.stderr);
        assert!(repo.astedit_refs().is_empty());
    }
    let json_args: Vec<&str> = std::iter::once("--json")
        .chain(misordered.split(' '))
        .collect();
    let json = repo.run(&json_args);
    json.assert_code(2);
    assert_eq!(json.json()["error"]["exit"], 2);
    // In order, the same ops run.
    let in_order: Vec<&str> = "edit -p print($A) -r a($A) -p log($A) -r b($A)"
        .split(' ')
        .collect();
    let ok = repo.run(&in_order);
    ok.assert_code(0);
    let id = staged_id(&ok.stdout);
    assert_eq!(blob_at(&repo, &id, "a.py"), "a(1)\nb(2)\n");
}

/// A multi-line rewrite into a tab-indented file takes the file's tabs: the matched
/// line's indentation, then the template's levels as tabs (ast-grep leaves the new
/// lines with the template's spaces and none of the file's indentation). Spaces-indented
/// files are re-indented with spaces as before. (Scan fixes go through the same code.)
#[test]
fn multi_line_rewrites_into_tab_indented_files_use_tabs() {
    let repo = TestRepo::new();
    repo.write(
        "tabs.ts",
        "function f() {\n\tcheck(3);\n\tif (x) {\n\t\tcheck(4);\n\t}\n}\n",
    );
    repo.write("spaces.ts", "function g() {\n    check(5);\n}\n");
    repo.commit_all("init");
    let out = repo.run(&[
        "--json",
        "edit",
        "-p",
        "check($A)",
        "-r",
        "if (ok) {\n  foo($A);\n}",
    ]);
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("id").to_string();
    assert_eq!(
        blob_at(&repo, &id, "tabs.ts"),
        "function f() {\n\tif (ok) {\n\t\tfoo(3);\n\t};\n\tif (x) {\n\t\tif (ok) {\n\t\t\tfoo(4);\n\t\t};\n\t}\n}\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "spaces.ts"),
        "function g() {\n    if (ok) {\n      foo(5);\n    };\n}\n"
    );
}
