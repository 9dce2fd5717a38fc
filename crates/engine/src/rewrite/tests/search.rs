//! Searching with a [`Query`]: matches and their positions, nested ones, parse errors,
//! and what a pattern never matches (a MISSING token) or matches only in context.
use super::*;

#[test]
fn search_single_and_multi_metavariables() {
    let q = Query::new("console.log($A)", Lang::TypeScript).expect("compiles");
    assert_eq!(q.literal(), Some("console"));
    let found = q.find("const x = 1;\n  console.log(x + 1);\n");
    assert_eq!(found.matches.len(), 1);
    let m = &found.matches[0];
    assert_eq!((m.line, m.column, m.end_line, m.end_column), (2, 3, 2, 21));
    assert_eq!(m.text, "console.log(x + 1)");
    assert!(!found.has_parse_error);

    let q = Query::new("print($$$ARGS)", Lang::Python).expect("compiles");
    let found = q.find("print()\nprint(1, 2, sep='')\n");
    assert_eq!(found.matches.len(), 2);
    assert_eq!(found.matches[1].text, "print(1, 2, sep='')");
}

#[test]
fn search_includes_nested_in_document_order() {
    let q = Query::new("foo($A)", Lang::JavaScript).expect("compiles");
    let found = q.find("foo(foo(x)); foo(y)");
    let texts: Vec<_> = found.matches.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["foo(foo(x))", "foo(x)", "foo(y)"]);
}

#[test]
fn positions_on_one_long_line() {
    // A minified file: every match on line 1, columns counted in characters.
    let src = "é;foo(1);".repeat(5000);
    let q = Query::new("foo($A)", Lang::JavaScript).expect("compiles");
    let found = q.find(&src);
    assert_eq!(found.matches.len(), 5000);
    let last = &found.matches[4999];
    assert_eq!((last.line, last.column), (1, 4999 * 9 + 3));
    assert_eq!((last.end_line, last.end_column), (1, 4999 * 9 + 9));
    let out = rewrite(Lang::JavaScript, &[("foo($A)", "bar($A)")], &src).expect("changes");
    assert_eq!(out.replacements[4999].column, 4999 * 9 + 3);
    // A multi-line match ends on its last line.
    let found = q.find("x;\nfoo(\n  ü\n);");
    let m = &found.matches[0];
    assert_eq!((m.line, m.column, m.end_line, m.end_column), (2, 1, 4, 2));
}

#[test]
fn first_lines_keep_every_position_and_leave_the_rewrite_end_out() {
    // Nested calls over several lines (CRLF and non-ASCII among them): a search that
    // keeps first lines gives every match the same positions as one keeping whole texts.
    let src = "x = f(g(1,\r\n  h('é',\n    2)),\n  k())\r\ny = m(n(\n))\n";
    let q = Query::new("$F($$$A)", Lang::Python).expect("compiles");
    let whole = q.find_owned(src.to_string(), MatchText::Full);
    let first = q.find_owned(src.to_string(), MatchText::FirstLine);
    let at = |f: &FileMatches| -> Vec<_> {
        f.matches
            .iter()
            .map(|m| (m.line, m.column, m.end_line, m.end_column, m.start_byte))
            .collect()
    };
    assert_eq!(whole.matches.len(), 6);
    assert_eq!(at(&first), at(&whole));
    assert_eq!(
        (first.matches[0].end_line, first.matches[0].end_column),
        (4, 7)
    );
    assert_eq!(first.matches[0].text, "f(g(1,");
    // The part a rewrite replaces ends before the match here; only whole texts say so.
    let q = Query::new("raise $E, $M", Lang::Python).expect("compiles");
    let src = "raise A, \"m\", bt\n";
    let whole = q.find_owned(src.to_string(), MatchText::Full);
    let end = whole.matches[0]
        .replaced_end
        .expect("ends before the match");
    assert_eq!((end.byte, end.line, end.column), (12, 1, 13));
    let first = q.find_owned(src.to_string(), MatchText::FirstLine);
    assert_eq!(first.matches[0].replaced_end, None);
    assert_eq!(
        (first.matches[0].end_line, first.matches[0].end_column),
        (1, 17)
    );
}

#[test]
fn search_reports_parse_errors() {
    let q = Query::new("$A.unwrap()", Lang::Rust).expect("compiles");
    let found = q.find("fn main() { let x = y.unwrap(); \n");
    assert!(found.has_parse_error);
    assert_eq!(found.matches.len(), 1);
    let found = q.find("fn main() {\n    let é = y.unwrap()\n}\n");
    assert!(found.has_parse_error);
    // The missing `;` after the statement.
    assert_eq!(
        found.first_parse_error,
        Some(ErrorAt {
            line: 2,
            column: 23
        })
    );
    let found = q.find("fn main() { y.unwrap(); }");
    assert_eq!(found.first_parse_error, None);
}

#[test]
fn go_calls_on_a_package_member_match() {
    // Alone, `fmt.Println(x)` parses as a type conversion; in a file it is a call.
    let src = "package main\nfunc main() { fmt.Println(1); fmt.Println(1, 2); b := []byte(s) }\n";
    let q = Query::new("fmt.Println($$$A)", Lang::Go).expect("compiles");
    let texts: Vec<_> = q.find(src).matches.into_iter().map(|m| m.text).collect();
    assert_eq!(texts, ["fmt.Println(1)", "fmt.Println(1, 2)"]);
    assert_eq!(q.literal(), Some("Println"));
    let out = rewrite(Lang::Go, &[("fmt.Println($A)", "log.Print($A)")], src).expect("changes");
    assert!(out.text.contains("log.Print(1); fmt.Println(1, 2)"));
    // A real conversion stays a conversion pattern.
    let q = Query::new("[]byte($A)", Lang::Go).expect("compiles");
    assert_eq!(q.find(src).matches.len(), 1);
}

#[test]
fn literal_respects_case_insensitive_keywords() {
    let src = "<?php\nECHO 1;\n";
    let q = Query::new("echo $A;", Lang::Php).expect("compiles");
    // The keyword cannot be the literal: `ECHO` matches `echo`.
    assert!(q.literal().is_none_or(|lit| src.contains(lit)));
    assert_eq!(q.find(src).matches.len(), 1);
    let rw = Rewriter::new(&ops(&[("echo $A;", "print($A);")]), Lang::Php).expect("compiles");
    assert_eq!(
        rw.rewrite(src).expect("ok").map(|r| r.text).as_deref(),
        Some("<?php\nprint(1);\n")
    );
    // Elsewhere keywords are fine literals.
    let q = Query::new("return $A", Lang::Rust).expect("compiles");
    assert_eq!(q.literal(), Some("return"));
    let q = Query::new("$A.unwrap()", Lang::Rust).expect("compiles");
    assert_eq!(q.literal(), Some("unwrap"));
}

#[test]
fn a_pattern_never_matches_a_missing_token() {
    // tree-sitter recovers from `foo(x;` by inventing a zero-width `)`: the pattern's
    // `)` must not match it.
    for (lang, src) in [
        (Lang::TypeScript, "let y = foo(x;\n"),
        (Lang::Rust, "fn main() { foo(x; }\n"),
        (Lang::Go, "package p\nfunc f() { foo(x }\n"),
        (Lang::Java, "class C { void f() { foo(x; } }\n"),
    ] {
        let q = Query::new("foo($A)", lang).expect("compiles");
        let found = q.find(src);
        assert!(found.has_parse_error, "{lang}: {src}");
        assert!(found.matches.is_empty(), "{lang}: {:?}", found.matches);
        assert_eq!(
            rewrite(lang, &[("foo($A)", "bar($A)")], src).map(|r| r.text),
            None
        );
        // The same code, complete, matches.
        let fixed = src.replacen("foo(x", "foo(x)", 1);
        assert_eq!(q.find(&fixed).matches.len(), 1, "{lang}: {fixed}");
    }
    // A MISSING node inside a capture belongs to the capture: the outer call matches.
    let q = Query::new("outer($A)", Lang::Rust).expect("compiles");
    let found = q.find("fn main() { outer(|| { foo(x; }); }\n");
    assert!(found.has_parse_error);
    assert_eq!(found.matches.len(), 1, "{:?}", found.matches);
}
