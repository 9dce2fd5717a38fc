//! Rewriting with a choice per change (`edit -i`): what is offered, in which order, and
//! what accepted and declined changes leave.
use super::*;

/// Runs one op, accepting the changes whose `before` text (as shown) is in `take`, and
/// returns the text with the (before, after) pairs offered, in the order offered.
fn rewrite_choosing(
    lang: Lang,
    pairs: &[(&str, &str)],
    src: &str,
    take: &[&str],
) -> (String, Vec<(usize, String, String)>) {
    let rw = Rewriter::new(&ops(pairs), lang).expect("ops compile");
    let mut offered = Vec::new();
    let out = rw
        .rewrite_selecting(src, &mut |op, p| {
            let (text, start, end) = p.shown();
            let before = text[start..end].to_string();
            offered.push((op, before.clone(), p.after.to_string()));
            take.contains(&before.as_str())
        })
        .expect("rewrite succeeds");
    (out.map_or_else(|| src.to_string(), |r| r.text), offered)
}

#[test]
fn only_the_accepted_changes_are_made() {
    let lang = Lang::JavaScript;
    let op = [("foo($A)", "bar($A)")];
    let src = "foo(1);\nfoo(2);\nfoo(3);\n";
    let (text, offered) = rewrite_choosing(lang, &op, src, &["foo(1)", "foo(3)"]);
    assert_eq!(text, "bar(1);\nfoo(2);\nbar(3);\n");
    assert_eq!(offered.len(), 3);
    // Accepting everything is the plain rewrite; accepting nothing changes nothing.
    let all = rewrite_choosing(lang, &op, src, &["foo(1)", "foo(2)", "foo(3)"]).0;
    assert_eq!(all, rewritten(lang, &op, src));
    let rw = Rewriter::new(&ops(&op), lang).expect("compiles");
    assert!(rw
        .rewrite_selecting(src, &mut |_, _| false)
        .expect("runs")
        .is_none());
}

#[test]
fn nested_changes_are_offered_inner_first_and_decided_apart() {
    let lang = Lang::JavaScript;
    let op = [("foo($A)", "bar($A)")];
    let src = "foo(foo(x));\n";
    // Inner declined: the outer captures it as it was.
    let (text, offered) = rewrite_choosing(lang, &op, src, &["foo(foo(x))"]);
    assert_eq!(text, "bar(foo(x));\n");
    assert_eq!(
        offered,
        vec![
            (0, "foo(x)".to_string(), "bar(x)".to_string()),
            (0, "foo(foo(x))".to_string(), "bar(foo(x))".to_string()),
        ]
    );
    // Inner accepted, outer declined: the outer is shown with the inner change made.
    let (text, offered) = rewrite_choosing(lang, &op, src, &["foo(x)"]);
    assert_eq!(text, "foo(bar(x));\n");
    assert_eq!(offered[1].1, "foo(bar(x))");
    assert_eq!(offered[1].2, "bar(bar(x))");
}

#[test]
fn a_later_op_runs_on_what_the_accepted_changes_left() {
    let lang = Lang::JavaScript;
    let pairs = [("foo($A)", "bar($A)"), ("bar($A)", "baz($A)")];
    let (text, offered) = rewrite_choosing(lang, &pairs, "foo(1); foo(2);", &["foo(1)", "bar(1)"]);
    assert_eq!(text, "baz(1); foo(2);");
    assert_eq!(
        offered.iter().map(|o| o.0).collect::<Vec<_>>(),
        vec![0, 0, 1]
    );
}

#[test]
fn a_change_offered_after_an_accepted_one_of_its_pass_is_shown_after_it() {
    let lang = Lang::JavaScript;
    let op = [("$A == $B", "$A === $B")];
    let (text, offered) = rewrite_choosing(lang, &op, "f(a == 1, b == 2);", &["a == 1", "b == 2"]);
    assert_eq!(text, "f(a === 1, b === 2);");
    // The text the second change is shown in already holds the first.
    let rw = Rewriter::new(&ops(&op), lang).expect("compiles");
    let mut seen = Vec::new();
    rw.rewrite_selecting("f(a == 1, b == 2);", &mut |_, p| {
        seen.push(p.shown().0.into_owned());
        true
    })
    .expect("runs");
    assert_eq!(seen, vec!["f(a == 1, b == 2);", "f(a === 1, b == 2);"]);
    assert_eq!(offered.len(), 2);
}

#[test]
fn declined_sites_are_followed_through_the_changes_made() {
    let lang = Lang::JavaScript;
    let pattern = Pattern::try_new("foo($A)", lang).expect("compiles");
    let fix = TemplateFix::try_new("longer_name($A)", &lang).expect("compiles");
    let src = "foo(1); foo(2); foo(foo(3));";
    let mut doc = parse_doc(src, lang).expect("parses");
    // Decline the second and the outer of the nest.
    let out = rewrite_nested_selecting(
        &mut doc,
        &pattern,
        None,
        NestedOptions::default(),
        |m| m.make_edit(&pattern, &fix),
        &mut |p| !matches!(&p.text[p.start..p.end], "foo(2)" | "foo(longer_name(3))"),
    )
    .expect("runs");
    assert_eq!(doc.src, "longer_name(1); foo(2); foo(longer_name(3));");
    assert_eq!(out.declined.len(), 2);
    for d in &out.declined {
        let (start, end) = out.map_range(d.start, d.end).expect("still there");
        assert_eq!(
            &doc.src[start..end],
            d.text.replace("foo(3)", "longer_name(3)")
        );
    }
    // An accepted site, and a range inside one, have no place in the output.
    let accepted = &out.changes[0];
    assert_eq!(out.map_range(accepted.start, accepted.end), None);
    assert_eq!(out.map_range(accepted.start + 1, accepted.end - 1), None);
}
