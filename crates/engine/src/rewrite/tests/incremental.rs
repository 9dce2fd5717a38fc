//! Incremental re-parses after edits: the same tree and positions as a fresh parse.
use super::*;

/// Every node's kind with its byte range and start/end points, in document order.
fn node_positions<L: ast_grep_core::tree_sitter::LanguageExt>(
    doc: &ast_grep_core::tree_sitter::StrDoc<L>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut cursor = doc.tree.walk();
    'walk: loop {
        let n = cursor.node();
        out.push(format!(
            "{} {:?} {} {}",
            n.kind(),
            n.byte_range(),
            n.start_position(),
            n.end_position()
        ));
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                break 'walk;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

#[test]
fn incremental_reparse_equals_a_fresh_parse() {
    let cases = [
        (
            Lang::TypeScript,
            "foo($A)",
            "bar($A, 2)",
            "foo(foo(1));\nlet x = foo(\n  foo(2),\n);\n",
        ),
        (Lang::Python, "foo($A)", "bar($A", "foo(1)\nfoo(2)\n"),
        (
            Lang::Go,
            "foo($A)",
            "ü($A)",
            "package p\nvar x = foo(foo(\"日本\"))\n",
        ),
        // Several edits on one line, after multi-byte text, inserting line breaks.
        (
            Lang::TypeScript,
            "foo($A)",
            "bar(\n  $A\n)",
            "let ü = '日本'; foo(1); foo(2);\nfoo(3); foo(foo(4));\n",
        ),
    ];
    for (lang, pattern, template, src) in cases {
        let rw = Rewriter::new(&ops(&[(pattern, template)]), lang).expect("compiles");
        let mut doc = parse_doc(src, lang).expect("parses");
        let compiled = &rw.ops[0];
        rewrite_nested(&mut doc, &compiled.pattern, |m| {
            m.make_edit(&compiled.pattern, &compiled.fix)
        })
        .expect("rewrites");
        let fresh = parse_doc(&doc.src, lang).expect("parses");
        assert_eq!(
            doc.tree.root_node().to_sexp(),
            fresh.tree.root_node().to_sexp(),
            "{lang} {src:?}"
        );
        // Positions too: the edits told the old tree where the text moved.
        assert_eq!(
            node_positions(&doc),
            node_positions(&fresh),
            "{lang} {src:?}"
        );
    }
}

#[test]
fn many_edits_take_the_fresh_parse_path() {
    let src = "foo(1);\n".repeat(3000);
    let out = rewrite(Lang::JavaScript, &[("foo($A)", "bar($A)")], &src).expect("changes");
    assert_eq!(out.text, "bar(1);\n".repeat(3000));
    assert_eq!(out.replacements.len(), 3000);
    assert_eq!(out.replacements[2999].line, 3000);
    assert!(!out.introduces_parse_error);
}
