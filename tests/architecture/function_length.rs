//! Function length (issue 36): no `fn` over [`MAX_FUNCTION_LINES`] lines but those in
//! `tests/architecture/long_functions.txt`, which may only shrink.

use std::fmt::Write as _;
use std::path::Path;

use crate::fake;
use crate::read_src;
use crate::scanner::tokenize;
use crate::scanner::Tok;
use crate::SourceFile;

/// The longest a function may be, in lines from `fn` to its closing brace (issue 36:
/// a function is read on a screen or two).
pub(crate) const MAX_FUNCTION_LINES: usize = 150;

/// Functions longer than [`MAX_FUNCTION_LINES`] on the day the limit came, one a line:
/// `FILE NAME LINES` (file under `src/`). A ratchet, like the layer baseline: the test
/// fails on a long function not listed, on a listed one that grew past its count, and
/// on a listed one that is no longer long; `ARCH_BASELINE=write` drops the lines gone
/// and lowers the counts to today's (it never adds or raises one).
pub(crate) fn long_functions_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/architecture/long_functions.txt")
}

pub(crate) const LONG_FUNCTIONS_HEADER: &str = "\
# Functions in src/ longer than the architecture test's limit (150 lines, issue 36),
# as `FILE NAME LINES` (FILE under src/). The test fails on a long function not listed,
# on a listed one longer than its count, and on a listed one no longer long: split
# them and remove their lines; never add one. `ARCH_BASELINE=write cargo test --test
# architecture long` drops the lines gone and lowers counts (it never adds or raises).
";

/// The baseline's entries: (file, name, lines).
pub(crate) fn read_long_functions() -> Vec<(String, String, usize)> {
    std::fs::read_to_string(long_functions_path())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let (Some(file), Some(name), Some(lines), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                panic!("tests/architecture/long_functions.txt: not `FILE NAME LINES`: {l}");
            };
            let lines = lines.parse().unwrap_or_else(|_| {
                panic!("tests/architecture/long_functions.txt: not a count: {l}")
            });
            (file.to_string(), name.to_string(), lines)
        })
        .collect()
}

/// Every function of a file with its first and last line, nested ones included.
pub(crate) fn functions(src: &str) -> Vec<(String, usize, usize)> {
    let toks = tokenize(src);
    let mut out = Vec::new();
    for (k, (tok, line)) in toks.iter().enumerate() {
        let (Tok::Ident(kw), Some((Tok::Ident(name), _))) = (tok, toks.get(k + 1)) else {
            continue;
        };
        if kw != "fn" {
            continue;
        }
        // The body's brace: the first `{` outside brackets; a `;` first is a
        // declaration without a body (a trait's).
        let mut depth = 0i32;
        let mut open = None;
        for (j, (t, _)) in toks.iter().enumerate().skip(k + 2) {
            match t {
                Tok::Punct('(' | '[') => depth += 1,
                Tok::Punct(')' | ']') => depth -= 1,
                Tok::Punct(';') if depth == 0 => break,
                Tok::Punct('{') if depth == 0 => {
                    open = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0i32;
        for (t, end) in &toks[open..] {
            match t {
                Tok::Punct('{') => braces += 1,
                Tok::Punct('}') => {
                    braces -= 1;
                    if braces == 0 {
                        out.push((name.clone(), *line, *end));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The functions of the tree longer than the limit: (file, name, lines).
pub(crate) fn long_functions(files: &[SourceFile]) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    for f in files {
        for (name, first, last) in functions(&f.text) {
            let lines = last - first + 1;
            if lines > MAX_FUNCTION_LINES {
                out.push((f.path.clone(), name, lines));
            }
        }
    }
    out
}

/// What the length ratchet says about today's long functions against the baseline:
/// one line per problem, none when they agree.
pub(crate) fn length_ratchet(
    long: &[(String, String, usize)],
    baseline: &[(String, String, usize)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, name, lines) in long {
        match baseline.iter().find(|(p, n, _)| p == path && n == name) {
            None => out.push(format!(
                "src/{path}: fn {name} has {lines} lines (at most {MAX_FUNCTION_LINES}): split it"
            )),
            Some((_, _, was)) if lines > was => out.push(format!(
                "src/{path}: fn {name} grew to {lines} lines (listed at {was}; at most \
                 {MAX_FUNCTION_LINES}): split it, do not raise its count"
            )),
            Some(_) => {}
        }
    }
    for (path, name, _) in baseline {
        if !long.iter().any(|(p, n, _)| p == path && n == name) {
            out.push(format!(
                "src/{path}: fn {name} is no longer long: remove its line from \
                 tests/architecture/long_functions.txt"
            ));
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let long = long_functions(&read_src());
    let baseline = read_long_functions();
    if std::env::var("ARCH_BASELINE").as_deref() == Ok("write") {
        // Only ever shrinks: listed functions still long, at today's count if lower.
        let mut text = LONG_FUNCTIONS_HEADER.to_string();
        for (path, name, was) in &baseline {
            let now = long
                .iter()
                .filter(|(p, n, _)| p == path && n == name)
                .map(|(_, _, l)| *l)
                .max();
            if let Some(now) = now {
                writeln!(text, "{path} {name} {}", now.min(*was)).expect("write to a string");
            }
        }
        std::fs::write(long_functions_path(), text).expect("write the baseline");
        return;
    }
    let problems = length_ratchet(&long, &baseline);
    assert!(
        problems.is_empty(),
        "function length:\n  {}",
        problems.join("\n  ")
    );
}

/// Prints the longest functions of today's tree.
#[test]
#[ignore = "prints figures; run with --ignored --nocapture"]
fn longest_functions() {
    let mut all: Vec<(usize, String, String)> = read_src()
        .iter()
        .flat_map(|f| {
            functions(&f.text)
                .into_iter()
                .map(|(name, first, last)| (last - first + 1, f.path.clone(), name))
        })
        .collect();
    all.sort_by(|a, b| b.cmp(a));
    for (lines, path, name) in all.iter().take(10) {
        println!("{lines:>5}  src/{path}  {name}");
    }
}

#[test]
fn function_lengths_count_from_fn_to_the_closing_brace() {
    let src = "trait T {\n    fn decl(&self) -> [u8; 2];\n}\n\
               pub fn outer(x: [u8; 2]) -> u8 {\n    let s = \"}\";\n    fn inner() {}\n\
               // }\n    x[0]\n}\nfn ptr(f: fn(u8) -> u8) { let _ = '}'; }\n";
    let got = functions(src);
    assert_eq!(
        got,
        vec![
            ("outer".to_string(), 4, 9),
            ("inner".to_string(), 6, 6),
            ("ptr".to_string(), 10, 10),
        ]
    );
    let body = "    x;\n".repeat(MAX_FUNCTION_LINES);
    let files = fake(&[(
        "a.rs",
        &format!("fn long() {{\n{body}}}\nfn short() {{}}\n"),
    )]);
    let long = long_functions(&files);
    assert_eq!(
        long,
        vec![(
            "a.rs".to_string(),
            "long".to_string(),
            MAX_FUNCTION_LINES + 2
        )]
    );
}

#[test]
fn length_ratchet_fails_on_new_grown_and_stale_entries() {
    let entry = |p: &str, n: &str, l: usize| (p.to_string(), n.to_string(), l);
    let baseline = vec![entry("a.rs", "old", 200), entry("b.rs", "split", 170)];
    // Today: `old` shrank but is still long, `split` is gone: only the stale line fails.
    let long = vec![entry("a.rs", "old", 180)];
    assert_eq!(
        length_ratchet(&long, &baseline),
        vec![
            "src/b.rs: fn split is no longer long: remove its line from \
             tests/architecture/long_functions.txt"
        ]
    );
    // A function that grew past its count, and a new long one.
    let long = vec![
        entry("a.rs", "old", 201),
        entry("b.rs", "split", 170),
        entry("c.rs", "fresh", 151),
    ];
    let got = length_ratchet(&long, &baseline);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].starts_with("src/a.rs: fn old grew to 201 lines (listed at 200"));
    assert!(got[1].starts_with("src/c.rs: fn fresh has 151 lines"));
    // Agreement: nothing to say.
    assert!(length_ratchet(&baseline, &baseline).is_empty());
}
