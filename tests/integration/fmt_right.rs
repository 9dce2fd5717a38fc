//! `--fmt` keeps the formatter's changes over the rewrite without breaking the file
//! (issue 53 item 1): a statement the formatter re-splits into as many other lines is
//! taken whole, a line an import sorter moves keeps both its ends, and a formatting
//! that would parse worse is left out with a warning naming the file; and the same
//! with rustfmt and ruff themselves where they are installed.

use crate::imports_right::passes;
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

/// rustfmt of the toolchain that builds this (`rustc --print sysroot`: rustup's proxy
/// on PATH needs the environment the tests clear); `None` (the test skipped with a
/// message) without it, unless CI is set (`.ci/run` runs `cargo fmt`: rustfmt is there).
fn rustfmt() -> Option<std::path::PathBuf> {
    let found = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .map(|root| root.join("bin").join("rustfmt"))
        .filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and the toolchain has no rustfmt"
        );
        eprintln!("rustfmt not found: the test with the real formatter is skipped");
    }
    found
}

/// The case of issue 53 item 1 with rustfmt itself: `.unwrap()` → `.expect("…")` makes
/// a two-line statement too long, and rustfmt splits it as two other lines. Both are
/// taken (line by line, only the second would be: `let total =` and `.expect(…)`).
#[test]
fn rustfmt_s_re_split_of_a_rewritten_statement_is_taken_whole() {
    let Some(rustfmt) = rustfmt() else { return };
    let before = "fn main() {\n    let total =\n        \
        compute_a_total(first_argument_value, second_argument_value, third_argument).unwrap();\n    \
        let short = parse(&args).unwrap();\n}\n";
    let script = format!(
        "exec '{}' --edition 2021 --emit stdout\n",
        rustfmt.display()
    );
    let repo = project("rust", &script, "a.rs", before);
    let (id, _) = edit_fmt(
        &repo,
        &[
            "-p",
            "$X.unwrap()",
            "-r",
            "$X.expect(\"the test's own arguments parse\")",
            "-l",
            "rust",
        ],
    );
    let after = blob_at(&repo, &id, "a.rs");
    assert_eq!(
        after,
        "fn main() {\n    \
         let total = compute_a_total(first_argument_value, second_argument_value, third_argument)\n        \
         .expect(\"the test's own arguments parse\");\n    \
         let short = parse(&args).expect(\"the test's own arguments parse\");\n}\n"
    );
    passes(
        &repo,
        &rustfmt,
        &["--edition", "2021", "--check"],
        "a.rs",
        &after,
    );
}

/// The case of issue 53 item 1 with ruff's import sorter as the formatter: the import
/// line the rewrite extends (`timezone` merged into `from datetime import datetime`)
/// is moved above `typing` by the sorter; both ends of the move are taken, so the
/// name stays imported (the deletion alone would leave `timezone` undefined).
#[test]
fn ruff_s_import_sorter_keeps_the_import_line_it_moves() {
    let Some(ruff) = crate::imports_right::ruff() else {
        return;
    };
    let before = "import os\nfrom typing import Optional\nfrom datetime import datetime\n\n\n\
        def expires(p: Optional[str]) -> str:\n    return f\"{datetime.utcnow()}{os.sep}{p}\"\n";
    let script = format!(
        "exec '{}' check --fix --select I --exit-zero --quiet --isolated -\n",
        ruff.display()
    );
    let repo = project("python", &script, "a.py", before);
    let (id, _) = edit_fmt(
        &repo,
        &[
            "-p",
            "datetime.utcnow()",
            "-r",
            "datetime.now(timezone.utc)",
            "--add-import",
            "from datetime import timezone",
        ],
    );
    let after = blob_at(&repo, &id, "a.py");
    assert_eq!(
        after,
        "import os\nfrom datetime import datetime, timezone\nfrom typing import Optional\n\n\n\
         def expires(p: Optional[str]) -> str:\n    return f\"{datetime.now(timezone.utc)}{os.sep}{p}\"\n"
    );
    let args = ["check", "--no-cache", "--isolated", "--select", "I,F821"];
    passes(&repo, &ruff, &args, "a.py", &after);
}
