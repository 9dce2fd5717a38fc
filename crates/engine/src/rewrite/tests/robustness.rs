//! Odd and random inputs: never a panic, and positions that count characters.
use super::*;

#[test]
fn odd_inputs_never_panic_and_positions_count_characters() {
    let op = [("foo($A)", "bar($A)")];
    let inputs = [
        "",
        "\n",
        "\r\n",
        "foo(",
        ")))foo(",
        "ünïcödé = foo(\"日本語\")\r\nfoo(1)\r\n",
        "é = 1; foo(é)\n",
        "\u{feff}foo(x)",
        "foo(x) # 🎉 foo(y)",
        "\0foo(1)",
    ];
    for lang in [
        Lang::TypeScript,
        Lang::JavaScript,
        Lang::Python,
        Lang::Rust,
        Lang::Go,
    ] {
        let rw = Rewriter::new(&ops(&op), lang).expect("compiles");
        let q = Query::new("foo($A)", lang).expect("compiles");
        for src in inputs {
            let _ = rw.rewrite(src);
            for m in q.find(src).matches {
                assert_eq!(&src[m.start_byte..m.end_byte], m.text);
                let line_start = src[..m.start_byte].rfind('\n').map_or(0, |i| i + 1);
                assert_eq!(
                    m.column,
                    src[line_start..m.start_byte].chars().count() + 1,
                    "{lang} {src:?}"
                );
            }
        }
    }
    let out = rewrite(Lang::Python, &op, "ünï = foo(\"日本\")\r\nfoo(1)\r\n").expect("changes");
    assert_eq!(out.text, "ünï = bar(\"日本\")\r\nbar(1)\r\n");
    let pos: Vec<_> = out
        .replacements
        .iter()
        .map(|r| (r.line, r.column))
        .collect();
    assert_eq!(pos, [(1, 7), (2, 1)]);
}

/// A tiny deterministic generator, so the property test needs no extra crate.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Byte offset of a 1-based line and character column.
fn offset_of(src: &str, line: usize, column: usize) -> usize {
    let line_start = if line == 1 {
        0
    } else {
        src.match_indices('\n')
            .nth(line - 2)
            .map_or(src.len(), |(i, _)| i + 1)
    };
    src[line_start..]
        .char_indices()
        .nth(column - 1)
        .map_or(src.len(), |(i, _)| line_start + i)
}

#[test]
fn random_inputs_never_panic_and_positions_hold() {
    const PIECES: [&str; 22] = [
        "foo(", ")", "x", ",", " ", "\n", "\r\n", "é", "日本", "🎉", "\"", "(", "foo", ";", "\t",
        "{", "}", "#", "//", "$", "foo(foo(", "\u{feff}",
    ];
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut rewritten = 0;
    let mut nested = 0;
    for lang in [
        Lang::TypeScript,
        Lang::JavaScript,
        Lang::Python,
        Lang::Rust,
        Lang::Go,
    ] {
        let rw = Rewriter::new(&ops(&[("foo($A)", "bar(\n$A)")]), lang).expect("compiles");
        let q = Query::new("foo($A)", lang).expect("compiles");
        for _ in 0..400 {
            let len = rng.below(30);
            let src: String = (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect();
            for m in q.find(&src).matches {
                assert_eq!(src.get(m.start_byte..m.end_byte), Some(m.text.as_str()));
                assert_eq!(offset_of(&src, m.line, m.column), m.start_byte, "{src:?}");
                assert_eq!(
                    offset_of(&src, m.end_line, m.end_column),
                    m.end_byte,
                    "{src:?}"
                );
            }
            if let Ok(Some(out)) = rw.rewrite(&src) {
                assert_ne!(out.text, src);
                rewritten += 1;
                nested += usize::from(
                    out.replacements
                        .iter()
                        .any(|r| r.before.contains("foo(foo(")),
                );
                for r in &out.replacements {
                    let at = offset_of(&src, r.line, r.column);
                    assert!(src[at..].starts_with(&r.before), "{lang} {src:?} {r:?}");
                }
            }
        }
    }
    // The generator must actually reach rewrites, nested ones included.
    assert!(rewritten > 100 && nested > 10, "{rewritten} {nested}");
}
