//! File length (issue 49): no Rust file over [`MAX_FILE_LINES`] lines, test modules
//! included, but those listed in `tests/architecture/long_files.txt`, which may only
//! shrink (the same ratchet as function length).

use std::fmt::Write as _;
use std::path::Path;

use crate::SourceFile;

/// The longest a Rust file may be, in lines (issue 49: a file holds one concern; split
/// a longer one into a folder module by concern).
pub(crate) const MAX_FILE_LINES: usize = 1000;

/// The folders the cap walks, from the repository's root: the binary's `src/`, every
/// crate of `crates/` whole (its `src/`, and `tests/`, `examples/`, `benches/`,
/// `build.rs` where it has them), the test binaries of `tests/`, and the Rust of
/// `bench/` and `fuzz/`.
const ROOTS: &[&str] = &["src", "crates", "tests", "bench", "fuzz"];

/// Folders of data, not Rust we compile, left out: test inputs (`tests/data/`, the
/// fuzzers' regression inputs), the JS client's packages, build output. The top-level
/// `fixtures/` (patch scenarios' `.rs` inputs and expected outputs) is not a root.
const SKIPPED: &[&str] = &[
    "tests/data",
    "tests/fuzz_regressions",
    "tests/js",
    "fuzz/corpus",
    "fuzz/artifacts",
];

/// Folder names skipped wherever they are: build output and npm packages.
const SKIPPED_NAMES: &[&str] = &["target", "node_modules"];

/// Files longer than [`MAX_FILE_LINES`] on the day the cap came, one a line: `FILE
/// LINES` (the path from the repository's root). A ratchet, like the function-length
/// baseline: the test fails on a long file not listed, on a listed one that grew past
/// its count, and on a listed one no longer over the cap (or gone); `ARCH_BASELINE=write`
/// drops the lines gone and lowers the counts to today's (it never adds or raises one).
fn long_files_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/architecture/long_files.txt")
}

const LONG_FILES_HEADER: &str = "\
# Rust files longer than the architecture test's cap (1,000 lines, issue 49), test
# modules included, as `FILE LINES` (FILE from the repository's root). The test fails
# on a long file not listed, on a listed one longer than its count, and on a listed one
# no longer long: split them by concern and remove their lines; never add one.
# `ARCH_BASELINE=write cargo test --test architecture long` drops the lines gone and
# lowers counts (it never adds or raises).
";

/// Every `.rs` file the cap holds, path from the repository's root, sorted.
pub(crate) fn read_tree() -> Vec<SourceFile> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let path = p
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            if p.is_dir() {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                if !SKIPPED.contains(&path.as_str()) && !SKIPPED_NAMES.contains(&name.as_ref()) {
                    walk(root, &p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("read a source file");
                out.push(SourceFile { path, text });
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ROOTS {
        walk(root, &root.join(dir), &mut out);
    }
    out
}

/// The baseline's entries: (file, lines).
fn read_long_files() -> Vec<(String, usize)> {
    std::fs::read_to_string(long_files_path())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let (Some(file), Some(lines), None) = (parts.next(), parts.next(), parts.next()) else {
                panic!("tests/architecture/long_files.txt: not `FILE LINES`: {l}");
            };
            let lines = lines
                .parse()
                .unwrap_or_else(|_| panic!("tests/architecture/long_files.txt: not a count: {l}"));
            (file.to_string(), lines)
        })
        .collect()
}

/// The files of the tree longer than the cap: (file, lines).
pub(crate) fn long_files(files: &[SourceFile]) -> Vec<(String, usize)> {
    files
        .iter()
        .map(|f| (f.path.clone(), f.text.lines().count()))
        .filter(|(_, lines)| *lines > MAX_FILE_LINES)
        .collect()
}

/// What the file-length ratchet says about today's long files against the baseline:
/// one line per problem, none when they agree.
pub(crate) fn file_length_ratchet(
    long: &[(String, usize)],
    baseline: &[(String, usize)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, lines) in long {
        match baseline.iter().find(|(p, _)| p == path) {
            None => out.push(format!(
                "{path} has {lines} lines (at most {MAX_FILE_LINES}): split it by concern"
            )),
            Some((_, was)) if lines > was => out.push(format!(
                "{path} grew to {lines} lines (listed at {was}; at most {MAX_FILE_LINES}): \
                 split it, do not raise its count"
            )),
            Some(_) => {}
        }
    }
    for (path, _) in baseline {
        if !long.iter().any(|(p, _)| p == path) {
            out.push(format!(
                "{path} is no longer over {MAX_FILE_LINES} lines: remove its line from \
                 tests/architecture/long_files.txt"
            ));
        }
    }
    out
}

#[test]
fn no_file_is_longer_than_the_cap() {
    let long = long_files(&read_tree());
    let baseline = read_long_files();
    if std::env::var("ARCH_BASELINE").as_deref() == Ok("write") {
        // Only ever shrinks: listed files still long, at today's count if lower.
        let mut text = LONG_FILES_HEADER.to_string();
        for (path, was) in &baseline {
            if let Some((_, now)) = long.iter().find(|(p, _)| p == path) {
                writeln!(text, "{path} {}", now.min(was)).expect("write to a string");
            }
        }
        std::fs::write(long_files_path(), text).expect("write the baseline");
        return;
    }
    let problems = file_length_ratchet(&long, &baseline);
    assert!(
        problems.is_empty(),
        "file length:\n  {}",
        problems.join("\n  ")
    );
}

/// Prints the longest files of today's tree.
#[test]
#[ignore = "prints figures; run with --ignored --nocapture"]
fn longest_files() {
    let mut all: Vec<(usize, String)> = read_tree()
        .iter()
        .map(|f| (f.text.lines().count(), f.path.clone()))
        .collect();
    all.sort_by(|a, b| b.cmp(a));
    for (lines, path) in all.iter().take(20) {
        println!("{lines:>5}  {path}");
    }
}

#[test]
fn the_cap_walks_the_sources_and_tests_and_skips_data() {
    let files = read_tree();
    let has = |p: &str| files.iter().any(|f| f.path == p);
    assert!(has("src/main.rs"));
    assert!(has("crates/txn/src/lib.rs"), "a crate's lib.rs counts");
    assert!(has("tests/architecture/main.rs"));
    assert!(has("tests/integration/main.rs"));
    assert!(
        files.iter().all(|f| !f.path.starts_with("tests/data/")
            && !f.path.starts_with("tests/js/")
            && !f.path.starts_with("fixtures/")
            && !f.path.contains("/target/")),
        "data is not walked"
    );
}

#[test]
fn file_length_ratchet_fails_on_new_grown_and_stale_entries() {
    let entry = |p: &str, l: usize| (p.to_string(), l);
    let body = "x\n".repeat(MAX_FILE_LINES);
    let files = [
        SourceFile {
            path: "a.rs".to_string(),
            text: format!("{body}y\n"),
        },
        SourceFile {
            path: "b.rs".to_string(),
            text: body,
        },
    ];
    assert_eq!(
        long_files(&files),
        vec![entry("a.rs", MAX_FILE_LINES + 1)],
        "the cap itself is allowed"
    );
    let baseline = vec![entry("a.rs", 1500), entry("b.rs", 1200)];
    // Today: a.rs shrank but is still long, b.rs was split: only the stale line fails.
    let long = vec![entry("a.rs", 1400)];
    assert_eq!(
        file_length_ratchet(&long, &baseline),
        vec![
            "b.rs is no longer over 1000 lines: remove its line from \
             tests/architecture/long_files.txt"
        ]
    );
    // A file that grew past its count, and a new long one.
    let long = vec![
        entry("a.rs", 1501),
        entry("b.rs", 1200),
        entry("c.rs", 1001),
    ];
    let got = file_length_ratchet(&long, &baseline);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].starts_with("a.rs grew to 1501 lines (listed at 1500"));
    assert!(got[1].starts_with("c.rs has 1001 lines (at most 1000)"));
    // Agreement: nothing to say.
    assert!(file_length_ratchet(&baseline, &baseline).is_empty());
}
