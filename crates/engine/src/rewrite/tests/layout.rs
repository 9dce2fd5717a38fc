//! What a rewrite leaves around its changes: emptied blocks, kept text a template
//! repeats, blank lines, a capture's layout between brackets, a deleted list element's
//! comma, and the imports of the files it changed.
use super::*;

#[test]
fn a_deletion_that_empties_a_block_is_flagged() {
    // Python: `if x:` left with nothing under it (no parse error: the grammar allows it).
    let out = rewrite(
        Lang::Python,
        &[("a()", "")],
        "def f():\n    if x:\n        a()\n    return 1\n",
    )
    .expect("rewritten");
    assert!(out.leaves_empty_block);
    assert!(!out.introduces_parse_error);
    // JavaScript: the statement deleted, `{}` left.
    let out = rewrite(
        Lang::JavaScript,
        &[("a();", "")],
        "if (y) {\n  a();\n}\nif (z) {}\n",
    )
    .expect("rewritten");
    assert!(out.leaves_empty_block);
    // A block that keeps a statement, or one empty before, is no finding; nor is a
    // rewrite that deletes nothing.
    let out = rewrite(
        Lang::JavaScript,
        &[("a();", "")],
        "if (y) {\n  a();\n  b();\n}\nif (z) {}\n",
    )
    .expect("rewritten");
    assert!(!out.leaves_empty_block);
    let out = rewrite(Lang::JavaScript, &[("a()", "c()")], "if (y) { a(); }\n").expect("rewritten");
    assert!(!out.leaves_empty_block);
}

#[test]
fn kept_text_the_template_repeats_is_reported() {
    let out = rewrite(
        Lang::Python,
        &[(
            "assert response.status_code == $C",
            "assert response.status_code == $C, response.text",
        )],
        "assert response.status_code == 200, response.text\nassert response.status_code == 201\n",
    )
    .expect("rewritten");
    assert_eq!(
        out.text,
        "assert response.status_code == 200, response.text, response.text\n\
         assert response.status_code == 201, response.text\n"
    );
    let repeated: Vec<_> = out
        .replacements
        .iter()
        .map(|r| r.repeated_kept.as_deref())
        .collect();
    assert_eq!(repeated, [Some(", response.text"), None]);
}

#[test]
fn blank_lines_of_a_moved_capture_stay_blank() {
    let out = rewritten(
        Lang::Python,
        &[(
            "if $A:\n    $$$B",
            "if $A:\n    try:\n        $$$B\n    finally:\n        pass",
        )],
        "def f():\n    if x:\n        a()\n\n        b()\n",
    );
    assert_eq!(
        out,
        "def f():\n    if x:\n        try:\n            a()\n\n            b()\n        finally:\n            pass\n"
    );
}

#[test]
fn a_capture_between_its_own_brackets_keeps_its_layout() {
    let ts = Lang::TypeScript;
    let op = [("console.warn($$$A)", "logger.warn($$$A)")];
    let src = "function f() {\n  console.warn(\n    'msg',\n    value,\n  );\n}\n";
    assert_eq!(
        rewritten(ts, &op, src),
        "function f() {\n  logger.warn(\n    'msg',\n    value,\n  );\n}\n"
    );
    let src = "console.warn(\n  'msg',\n  value\n)\n";
    assert_eq!(
        rewritten(ts, &op, src),
        "logger.warn(\n  'msg',\n  value\n)\n"
    );
    // One line stays one line; other brackets take the template's layout.
    assert_eq!(
        rewritten(ts, &op, "console.warn(a, b)"),
        "logger.warn(a, b)"
    );
    let op = [("console.warn($$$A)", "logger.warn([$$$A])")];
    assert_eq!(
        rewritten(ts, &op, "console.warn(\n  a,\n  b,\n)"),
        "logger.warn([a,\nb,])"
    );
    let py = Lang::Python;
    let op = [("print($$$A)", "log.info($$$A)")];
    let src = "def f():\n    print(\n        'a',\n        b,\n    )\n";
    assert_eq!(
        rewritten(py, &op, src),
        "def f():\n    log.info(\n        'a',\n        b,\n    )\n"
    );
}

#[test]
fn an_empty_rewrite_of_a_list_element_takes_one_comma() {
    let cases = [
        (
            Lang::TypeScript,
            "f(a, debug, b);\ng(debug);",
            "f(a, b);\ng();",
        ),
        (Lang::Python, "f(a, debug, b)\n", "f(a, b)\n"),
        (
            Lang::Rust,
            "fn m() { f(a, debug, b); }",
            "fn m() { f(a, b); }",
        ),
        (
            Lang::Go,
            "package p\nfunc m() { f(a, debug) }\n",
            "package p\nfunc m() { f(a) }\n",
        ),
        (
            Lang::Java,
            "class C { void m() { f(debug, a); } }",
            "class C { void m() { f(a); } }",
        ),
    ];
    for (lang, src, want) in cases {
        assert_eq!(rewritten(lang, &[("debug", "")], src), want, "{lang}");
    }
    // Two neighbours at the end of a list, and a whole list.
    let ts = Lang::TypeScript;
    assert_eq!(
        rewritten(ts, &[("debug", "")], "f(a, debug, debug);"),
        "f(a);"
    );
    assert_eq!(rewritten(ts, &[("debug", "")], "f(debug, debug);"), "f();");
    // Not in a list: only the node.
    assert_eq!(
        rewritten(ts, &[("debug", "")], "x = debug + 1;"),
        "x =  + 1;"
    );
}

#[test]
fn imports_are_fixed_in_changed_files_only() {
    let fix = imports::ImportFix {
        add: vec!["import { logger } from './log';".into()],
        remove: vec![],
    };
    let rw = Rewriter::new(
        &ops(&[("console.warn($$$A)", "logger.warn($$$A)")]),
        Lang::TypeScript,
    )
    .expect("compiles")
    .with_imports(&fix);
    let src = "import { a } from 'a';\n\nconsole.warn(a);\n";
    let out = rw.rewrite(src).expect("rewrites").expect("changes");
    assert_eq!(
        out.text,
        "import { a } from 'a';\nimport { logger } from './log';\n\nlogger.warn(a);\n"
    );
    assert!(rw.rewrite("console.log(1);\n").expect("rewrites").is_none());
    // Metavariables are filled in from each match; unused imports go.
    let fix = imports::ImportFix {
        add: vec!["from $M import $F".into()],
        remove: vec!["old".into()],
    };
    let rw = Rewriter::new(&ops(&[("old.$M.$F($$$A)", "$F($$$A)")]), Lang::Python)
        .expect("compiles")
        .with_imports(&fix);
    let src = "import old\n\nold.a.f(1)\nold.b.g(2)\n";
    let out = rw.rewrite(src).expect("rewrites").expect("changes");
    assert_eq!(out.text, "from a import f\nfrom b import g\n\nf(1)\ng(2)\n");
}
