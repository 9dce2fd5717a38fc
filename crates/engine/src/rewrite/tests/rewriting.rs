//! Rewriting with ops: every language, nested and overlapping matches, ops in
//! sequence, re-indenting, CRLF, and the nested routine with any matcher and edit.
use super::*;

#[test]
fn swap_arguments_in_five_languages() {
    let cases = [
        (Lang::TypeScript, "foo(1, 'a');", "bar('a', 1);"),
        (Lang::JavaScript, "foo(a, b)", "bar(b, a)"),
        (Lang::Python, "foo(a, b)\n", "bar(b, a)\n"),
        (
            Lang::Rust,
            "fn main() { foo(a, b); }",
            "fn main() { bar(b, a); }",
        ),
        (
            Lang::Go,
            "package main\nfunc main() { foo(a, b) }\n",
            "package main\nfunc main() { bar(b, a) }\n",
        ),
    ];
    for (lang, src, want) in cases {
        let out = rewrite(lang, &[("foo($A, $B)", "bar($B, $A)")], src).expect("changes");
        assert_eq!(out.text, want, "{lang}");
        assert_eq!(out.replacements.len(), 1, "{lang}");
        assert!(!out.introduces_parse_error, "{lang}");
    }
}

#[test]
fn nested_matches_are_all_rewritten() {
    let op = [("foo($A)", "bar($A)")];
    let out = rewrite(Lang::JavaScript, &op, "foo(foo(x));").expect("changes");
    assert_eq!(out.text, "bar(bar(x));");
    assert_eq!(out.replacements.len(), 2);
    // Outer first, with the input text before and the final text after.
    assert_eq!(out.replacements[0].before, "foo(foo(x))");
    assert_eq!(out.replacements[0].after, "bar(bar(x))");
    assert_eq!(out.replacements[1].before, "foo(x)");
    assert_eq!(out.replacements[1].after, "bar(x)");
    assert_eq!(
        (out.replacements[1].line, out.replacements[1].column),
        (1, 5)
    );

    assert_eq!(
        rewritten(Lang::Python, &op, "y = foo(foo(foo(x)))\n"),
        "y = bar(bar(bar(x)))\n"
    );
    // Siblings inside an outer match, and a match after it.
    assert_eq!(
        rewritten(
            Lang::TypeScript,
            &[("foo($$$A)", "bar($$$A)")],
            "foo(foo(1), 2, foo(foo(3)));\nfoo();\n"
        ),
        "bar(bar(1), 2, bar(bar(3)));\nbar();\n"
    );
    assert_eq!(
        rewritten(
            Lang::Rust,
            &[("Some($A)", "Ok($A)")],
            "fn f() { Some(Some(Some(1))) }"
        ),
        "fn f() { Ok(Ok(Ok(1))) }"
    );
    assert_eq!(
        rewritten(
            Lang::Go,
            &[("foo($A, $B)", "bar($B, $A)")],
            "package p\nvar x = foo(foo(1, 2), foo(3, 4))\n"
        ),
        "package p\nvar x = bar(bar(4, 3), bar(2, 1))\n"
    );
}

#[test]
fn nested_matches_sharing_their_start() {
    // Method chains: the inner match starts where the outer one does.
    assert_eq!(
        rewritten(
            Lang::Rust,
            &[("$A.unwrap()", "$A.expect(\"ok\")")],
            "fn f() { x.unwrap().unwrap().len() }"
        ),
        "fn f() { x.expect(\"ok\").expect(\"ok\").len() }"
    );
    assert_eq!(
        rewritten(
            Lang::TypeScript,
            &[("$X.then($F)", "$X.finally($F)")],
            "p.then(a).then(b);"
        ),
        "p.finally(a).finally(b);"
    );
}

#[test]
fn rewritten_text_is_not_searched_again() {
    // The output matches the pattern again; a loop would never end.
    let out = rewrite(Lang::JavaScript, &[("foo($A)", "foo(foo($A))")], "foo(x)").expect("changes");
    assert_eq!(out.text, "foo(foo(x))");
    assert_eq!(out.replacements.len(), 1);
}

#[test]
fn ops_run_in_sequence() {
    let out = rewrite(
        Lang::Python,
        &[("foo($A)", "bar($A)"), ("bar($A)", "baz($A, 1)")],
        "foo(x)\nbar(y)\n",
    )
    .expect("changes");
    assert_eq!(out.text, "baz(x, 1)\nbaz(y, 1)\n");
    let ops: Vec<_> = out.replacements.iter().map(|r| r.op).collect();
    assert_eq!(ops, [0, 1, 1]);
}

#[test]
fn identity_rewrites_are_not_counted() {
    assert!(rewrite(Lang::TypeScript, &[("foo($A)", "foo($A)")], "foo(1);").is_none());
    let out = rewrite(
        Lang::TypeScript,
        &[("foo($A)", "foo(1)")],
        "foo(1); foo(2);",
    )
    .expect("changes");
    assert_eq!(out.text, "foo(1); foo(1);");
    assert_eq!(out.replacements.len(), 1);
    assert_eq!(out.replacements[0].column, 9);
}

#[test]
fn multi_line_match_is_reindented() {
    let src = "function f() {\n  if (x) {\n    foo(\n      a,\n      b\n    );\n  }\n}\n";
    let out = rewrite(
        Lang::JavaScript,
        &[("foo($A, $B)", "wrap(\n  bar($B,\n    $A)\n)")],
        src,
    )
    .expect("changes");
    assert_eq!(
        out.text,
        "function f() {\n  if (x) {\n    wrap(\n      bar(b,\n        a)\n    );\n  }\n}\n"
    );
    let src = "def f():\n    if x:\n        foo([\n            1,\n        ])\n";
    let out = rewrite(Lang::Python, &[("foo($A)", "bar(\n    $A\n)")], src).expect("changes");
    assert_eq!(
        out.text,
        "def f():\n    if x:\n        bar(\n            [\n                1,\n            ]\n        )\n"
    );
}

#[test]
fn overlapping_matches_are_an_error() {
    // Smart matching lets a pattern match a prefix of a node's children, so the edit of
    // the outer `if` ends inside the inner `if`, whose own edit runs past it: the two
    // edit ranges overlap without nesting.
    let src = "fn f() { if a { 1 } else if b { 2 } else if c { 3 } else { 4 } }";
    let rw = Rewriter::new(
        &ops(&[("if $C { $D } else if $E { $F }", "g($D, $F)")]),
        Lang::Rust,
    )
    .expect("compiles");
    let err = rw.rewrite(src).expect_err("overlap");
    assert!(
        matches!(
            err,
            Error::OverlappingMatches {
                first_line: 1,
                first_column: 10,
                second_line: 1,
                second_column: 26,
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), "overlapping-matches");
    assert_eq!(err.exit(), Exit::BadInput);
}

#[test]
fn overlapping_matches_can_be_skipped_instead() {
    let src = "fn f() { if a { 1 } else if b { 2 } else if c { 3 } else { 4 } }";
    let lang = Lang::Rust;
    let pattern = Pattern::try_new("if $C { $D } else if $E { $F }", lang).expect("compiles");
    let fix = TemplateFix::try_new("g($D, $F)", &lang).expect("compiles");
    let mut doc = parse_doc(src, lang).expect("parses");
    let options = NestedOptions {
        overlap: Overlap::SkipLater,
        ..NestedOptions::default()
    };
    let out = rewrite_nested_with(&mut doc, &pattern, options, |m| m.make_edit(&pattern, &fix))
        .expect("skips");
    assert_eq!(doc.src, "fn f() { g(1, 2) else if c { 3 } else { 4 } }");
    assert_eq!(out.changes.len(), 1);
    assert_eq!(out.overlapped.len(), 1);
    assert_eq!(out.overlapped[0].column, 26);
    // Left as it was when refused.
    let mut doc = parse_doc(src, lang).expect("parses");
    assert!(rewrite_nested(&mut doc, &pattern, |m| m.make_edit(&pattern, &fix)).is_err());
    assert_eq!(doc.src, src);
}

#[test]
fn outer_match_that_stops_matching_is_dropped() {
    let out = rewrite(
        Lang::JavaScript,
        &[("foo(foo($A))", "$A")],
        "foo(foo(foo(foo(x))));",
    )
    .expect("changes");
    // Innermost `foo(foo(x))` → `x`; the middle site is now `foo(x)`, no longer a match;
    // the outer site is `foo(foo(x))` again and becomes `x`.
    assert_eq!(out.text, "x;");
    assert_eq!(out.replacements.len(), 2);
    assert_eq!(out.dropped.len(), 1);
    assert_eq!(out.dropped[0].text, "foo(foo(foo(x)))");
    assert_eq!(out.dropped[0].column, 5);
}

#[test]
fn crlf_files_keep_crlf_line_endings() {
    let src = "def f():\r\n    foo([\r\n        1,\r\n    ])\r\n";
    let out = rewrite(Lang::Python, &[("foo($A)", "bar(\n    $A\n)")], src).expect("changes");
    assert_eq!(
        out.text,
        "def f():\r\n    bar(\r\n        [\r\n            1,\r\n        ]\r\n    )\r\n"
    );
    assert_eq!(
        out.replacements[0].after,
        "bar(\r\n        [\r\n            1,\r\n        ]\r\n    )"
    );
}

#[test]
fn deep_nesting_is_bounded() {
    let nest = |depth: usize| format!("x = {}1{}\n", "foo(".repeat(depth), ")".repeat(depth));
    let op = [("foo($A)", "bar($A)")];
    let out = rewrite(Lang::Python, &op, &nest(100)).expect("changes");
    assert_eq!(out.replacements.len(), 100);
    assert_eq!(out.text, nest(100).replace("foo", "bar"));

    let rw = Rewriter::new(&ops(&op), Lang::Python)
        .expect("compiles")
        .with_max_depth(10);
    assert!(rw.rewrite(&nest(10)).expect("within the limit").is_some());
    let err = rw.rewrite(&nest(11)).expect_err("too deep");
    assert!(
        matches!(
            err,
            Error::NestingTooDeep {
                line: 1,
                column: 5,
                depth: 11,
                limit: 10
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.exit(), Exit::BadInput);
}

#[test]
fn nested_routine_takes_any_matcher_and_edit() {
    // What `scan` will do with rule matchers and fixers: here a kind matcher and a
    // closure that wraps each call's current text.
    let lang = Lang::JavaScript;
    let calls = ast_grep_core::matcher::KindMatcher::new("call_expression", lang);
    let mut doc = parse_doc("a(b(1), c(2));", lang).expect("parses");
    let out = rewrite_nested(&mut doc, &calls, |m| {
        let range = m.range();
        ast_grep_core::source::Edit {
            position: range.start,
            deleted_length: range.len(),
            inserted_text: format!("W[{}]", m.text()).into_bytes(),
        }
    })
    .expect("rewrites");
    assert_eq!(doc.src, "W[a(W[b(1)], W[c(2)])];");
    assert_eq!(out.changes.len(), 3);
    assert_eq!(out.changes[0].after, "W[a(W[b(1)], W[c(2)])]");
}

#[test]
fn malformed_edits_from_a_custom_closure_stay_utf8() {
    let lang = Lang::JavaScript;
    let calls = ast_grep_core::matcher::KindMatcher::new("call_expression", lang);
    let mut doc = parse_doc("a(1);", lang).expect("parses");
    rewrite_nested(&mut doc, &calls, |m| ast_grep_core::source::Edit {
        position: m.range().start,
        deleted_length: 1,
        inserted_text: vec![0xff],
    })
    .expect("rewrites");
    assert_eq!(doc.src, "\u{fffd}(1);");
}
