//! `--fmt` keeps the formatter's changes over the rewrite without breaking the file
//! (issue 53 item 1): a statement the formatter re-splits into as many other lines is
//! taken whole, a line an import sorter moves keeps both its ends, and a formatting
//! that would parse worse is left out with a warning naming the file.

use crate::util::TestRepo;

fn blob_at(repo: &TestRepo, id: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")])
}

/// A repository whose `[fmt]` runs `script` (written as `fmt.sh`) for `lang`, with
/// `path` holding `text`; the formatter allowed (see consent.rs).
fn project(lang: &str, script: &str, path: &str, text: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("fmt.sh", script);
    repo.write("astedit.toml", format!("[fmt]\n{lang} = \"sh fmt.sh\"\n"));
    repo.write(path, text);
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    repo
}

/// `edit ARGS --fmt --json`: the preview id and the printed output.
fn edit_fmt(repo: &TestRepo, args: &[&str]) -> (String, String) {
    let mut all = vec!["edit"];
    all.extend_from_slice(args);
    all.extend(["--fmt", "--json"]);
    let out = repo.run(&all);
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("an id").to_string();
    (id, out.stdout)
}

/// Like rustfmt: a call whose three arguments stand one a line becomes three other
/// lines (the call moved under the `=`, two arguments on its first line).
const RESPLIT: &str = "sed -e ':a' -e 'N' -e '$!ba' \
    -e 's/ = \\([a-z]*\\)(\\([a-z_]*\\),\\n *\\([a-z_]*\\),\\n *\\([a-z_]*\\));/ =\\n        \\1(\\2, \\3,\\n            \\4);/'\n";

#[test]
fn a_statement_re_split_into_as_many_lines_is_taken_whole() {
    let before =
        "fn main() {\n    let total = sum(first_argument,\n        second,\n        third);\n}\n";
    let repo = project("rust", RESPLIT, "a.rs", before);
    let (id, _) = edit_fmt(&repo, &["-p", "second", "-r", "other", "--lang", "rust"]);
    // The formatter's three lines, all of them: the rewrite touched the middle one.
    assert_eq!(
        blob_at(&repo, &id, "a.rs"),
        "fn main() {\n    let total =\n        sum(first_argument, other,\n            third);\n}\n"
    );
}

/// Like an import sorter: the file's leading imports, sorted; the rest as it is.
const SORT_IMPORTS: &str = "awk 'h == 0 && /^(import|from) / { print | \"sort\"; next } \
    { if (h == 0) { close(\"sort\"); h = 1 } print }'\n";

#[test]
fn an_import_the_sorter_moves_is_kept() {
    let before = "import os\nimport sys\n\nprint(os.name, sys.argv)\nold(1)\n";
    let repo = project("python", SORT_IMPORTS, "a.py", before);
    let (id, _) = edit_fmt(
        &repo,
        &[
            "-p",
            "old($A)",
            "-r",
            "new($A)",
            "--add-import",
            "from zlib import new",
            "a.py",
        ],
    );
    // The sorter moved the added import to the top: both ends of the move are kept.
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "from zlib import new\nimport os\nimport sys\n\nprint(os.name, sys.argv)\nnew(1)\n"
    );
}

#[test]
fn a_formatting_that_parses_worse_is_left_out_with_a_warning() {
    // A broken formatter: it opens a parenthesis it never closes.
    let repo = project("python", "sed -e 's/new(/new((/'\n", "a.py", "y = old(2)\n");
    let (id, stdout) = edit_fmt(&repo, &["-p", "old($A)", "-r", "new($A)", "a.py"]);
    assert_eq!(blob_at(&repo, &id, "a.py"), "y = new(2)\n");
    assert!(
        stdout.contains("a.py: the formatter's output is left out"),
        "{stdout}"
    );
    assert!(stdout.contains("syntax error"), "{stdout}");
}
