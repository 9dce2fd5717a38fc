/*!
Property tests: parsing and resolving never panic, whatever the patch text and whatever
the files, and a chunk cut from the file itself always lands exactly where it was cut.

A small hand-rolled generator (xorshift) keeps this free of new dependencies; the seed
is fixed so that a failure reproduces, and the case number is in the panic message.
*/

use super::resolve_text;
use super::MemTree;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Line texts drawn from a small pool, so that matches, near-matches and ambiguities
/// all happen often.
const WORDS: &[&str] = &[
    "a",
    "b",
    "x",
    "  a",
    "a  ",
    "}",
    "",
    " ",
    "\t",
    "fn f() {",
    "“q”",
    "\"q\"",
    "—",
    "-",
    "…",
    "...",
    "\u{a0}",
    "é",
    "@@",
    "***",
    "+",
    "*** End Patch",
    "日本",
];

const PATCH_LINES: &[&str] = &[
    "*** Begin Patch",
    "*** End Patch",
    "*** Add File: a",
    "*** Add File: d/e",
    "*** Update File: a",
    "*** Update File: b",
    "*** Delete File: b",
    "*** Delete File: d",
    "*** Move to: c",
    "*** Move to: a",
    "*** End of File",
    "*** Frobnicate",
    "@@",
    "@@ a",
    "@@ fn f() {",
    "@@ -1,2 +1,3 @@",
    "@@ -x +y @@",
    " a",
    " b",
    " x",
    "-a",
    "-b",
    "- a",
    "+a",
    "+x",
    "+",
    "-",
    " ",
    "",
    "garbage",
    "<<'EOF'",
    "EOF",
    "```",
    "*** Update File: ../up",
    "*** Add File: .git/x",
    "*** Update File: /abs",
    " “q”",
    "-\"q\"",
    "\r",
    "\u{feff}",
];

fn random_file(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    if rng.below(8) == 0 {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    let n = rng.below(12);
    for i in 0..n {
        // Half the lines unique, so that chunks cut from the file can be placed.
        if rng.below(2) == 0 {
            out.extend_from_slice(rng.pick(WORDS).as_bytes());
        } else {
            out.extend_from_slice(format!("line {i} \"{}\"", rng.below(3)).as_bytes());
        }
        let last = i + 1 == n;
        if !(last && rng.below(4) == 0) {
            out.extend_from_slice(rng.pick(&["\n", "\n", "\r\n", "\r"]).as_bytes());
        }
    }
    out
}

fn random_tree(rng: &mut Rng) -> MemTree {
    let mut tree = MemTree::default();
    for path in ["a", "b", "d/f"] {
        if rng.below(4) != 0 {
            let bytes = random_file(rng);
            tree.files.insert(
                path.to_string(),
                crate::change::FileContent {
                    bytes,
                    mode: crate::change::FileMode::Regular,
                },
            );
        }
    }
    if rng.below(10) == 0 {
        tree.files.insert(
            "a".into(),
            crate::change::FileContent {
                bytes: vec![0xff, 0xfe, b'\n'],
                mode: crate::change::FileMode::Regular,
            },
        );
    }
    tree
}

/// A well-formed Update of `a` with chunks cut from the file itself, then perturbed
/// (trailing blanks, curly quotes, edited lines): this is what reaches the resolver's
/// levels and rescues.
fn random_update(rng: &mut Rng, tree: &MemTree) -> String {
    let file: Vec<String> = tree
        .files
        .get("a")
        .and_then(|f| std::str::from_utf8(&f.bytes).ok())
        .map(|s| s.split(['\n', '\r']).map(str::to_string).collect())
        .unwrap_or_default();
    let mut lines = vec![
        "*** Begin Patch".to_string(),
        "*** Update File: a".to_string(),
    ];
    let mut at = 0;
    for _ in 0..1 + rng.below(3) {
        match rng.below(4) {
            0 => lines.push("@@".into()),
            1 => lines.push(format!("@@ {}", anchor_text(rng, &file, at))),
            2 => {
                lines.push(format!("@@ {}", anchor_text(rng, &file, at)));
                lines.push(format!("@@ {}", anchor_text(rng, &file, at)));
            }
            _ => {}
        }
        at += rng.below(2);
        for _ in 0..1 + rng.below(8) {
            let text = match file.get(at) {
                Some(l) if rng.below(20) != 0 => match rng.below(12) {
                    0 => format!("{l} "),
                    1 => l.replace('"', "\u{201c}"),
                    2 => rng.pick(WORDS).to_string(),
                    _ => l.clone(),
                },
                _ => rng.pick(WORDS).to_string(),
            };
            let prefix = rng.pick(&[" ", "-", " ", "-", "+"]);
            if prefix != "+" {
                at += 1;
            }
            lines.push(format!("{prefix}{text}"));
        }
        if rng.below(6) == 0 {
            lines.push("*** End of File".into());
        }
    }
    lines.push("*** End Patch".into());
    lines.join("\n")
}

/// An `@@` anchor: mostly a line of the file above the chunk (an anchor nowhere in
/// the file refuses the patch), sometimes a random word.
fn anchor_text(rng: &mut Rng, file: &[String], at: usize) -> String {
    if file.is_empty() || rng.below(4) == 0 {
        return rng.pick(WORDS).to_string();
    }
    // At or above where the chunk's lines are cut from, as a real anchor is.
    file[rng.below(at.min(file.len() - 1) + 1)].clone()
}

fn random_patch(rng: &mut Rng, tree: &MemTree) -> String {
    if rng.below(2) == 0 {
        return random_update(rng, tree);
    }
    let mut lines: Vec<String> = Vec::new();
    if rng.below(10) != 0 {
        lines.push("*** Begin Patch".into());
    }
    for _ in 0..rng.below(16) {
        let line = if rng.below(3) == 0 {
            format!("{}{}", rng.pick(&[" ", "-", "+"]), rng.pick(WORDS))
        } else {
            rng.pick(PATCH_LINES).to_string()
        };
        lines.push(line);
    }
    if rng.below(10) != 0 {
        lines.push("*** End Patch".into());
    }
    let eol = rng.pick(&["\n", "\r\n", "\n", "\r"]);
    lines.join(eol)
}

#[test]
fn never_panics_on_generated_patches() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut resolved = 0;
    for case in 0..20_000 {
        let tree = random_tree(&mut rng);
        let text = random_patch(&mut rng, &tree);
        let outcome = std::panic::catch_unwind(|| {
            let ok = resolve_text(&text, &tree, "").is_ok();
            let _ = resolve_text(&text, &tree, "d");
            ok
        });
        match outcome {
            Ok(ok) => resolved += usize::from(ok),
            Err(_) => panic!("case {case} panicked on patch {text:?} with tree {tree:?}"),
        }
    }
    // The generator must reach the resolver, not only the parser's refusals.
    assert!(
        resolved > 1_000,
        "only {resolved} generated patches resolved"
    );
}

#[test]
fn never_panics_on_arbitrary_bytes() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for case in 0..5_000 {
        let len = rng.below(200);
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() & 0xff) as u8).collect();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let tree = random_tree(&mut rng);
        let outcome = std::panic::catch_unwind(|| resolve_text(&text, &tree, "").is_ok());
        assert!(outcome.is_ok(), "case {case} panicked on {bytes:?}");
    }
}

/// A chunk cut from the file, with unique lines, lands exactly where it was cut.
#[test]
fn exact_chunks_land_where_they_were_cut() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for case in 0..2_000 {
        let n = 1 + rng.below(30);
        let file: Vec<String> = (0..n).map(|i| format!("line {i}")).collect();
        let start = rng.below(n);
        let len = 1 + rng.below(n - start);
        let mut body = String::from("@@\n");
        let mut expected: Vec<String> = file[..start].to_vec();
        for (k, l) in file[start..start + len].iter().enumerate() {
            match rng.below(3) {
                0 => {
                    body.push_str(&format!(" {l}\n"));
                    expected.push(l.clone());
                }
                1 => body.push_str(&format!("-{l}\n")),
                _ => {
                    body.push_str(&format!("-{l}\n+new {k}\n"));
                    expected.push(format!("new {k}"));
                }
            }
        }
        expected.extend_from_slice(&file[start + len..]);
        let content = file.iter().map(|l| format!("{l}\n")).collect::<String>();
        let tree = MemTree::from_files([("f", content.as_bytes())]);
        let patch = format!("*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n");
        let res = match resolve_text(&patch, &tree, "") {
            Ok(r) => r,
            Err(e) => panic!("case {case}: {e}\n{patch}"),
        };
        let want = expected
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>();
        let got = res
            .changes
            .changes
            .first()
            .and_then(|c| c.after.as_ref())
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
            .unwrap_or(content.clone());
        assert_eq!(got, want, "case {case}\n{patch}");
        assert!(res
            .report
            .chunks()
            .all(|c| c.level == super::Level::Exact && c.line == start + 1));
    }
}
