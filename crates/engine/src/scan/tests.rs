//! Library tests of rule loading, the fix loop and sharding (no processes, no git).

use crate::lang::Lang;

use super::engine::run_file;
use super::rules::from_text;
use super::rules::TextFormat;
use super::Error;
use super::Mode;
use super::Shard;

const TOML: &str = r#"
[[rules]]
id = "redundant-parens"
language = "javascript"
severity = "warning"
message = "redundant parentheses around $X"
rule.pattern = "($X)"
constraints.X.kind = "identifier"
fix = "$X"

[[rules]]
id = "strict-equality"
language = "javascript"
severity = "error"
message = "use === ($A)"
rule.pattern = "$A == $B"
constraints.B.not.kind = "null"
fix = "$A === $B"
files = ["src/**"]
ignores = ["src/vendor/**"]
"#;

const YAML: &str = r#"
id: redundant-parens
language: javascript
severity: warning
message: redundant parentheses around $X
rule: { pattern: ($X) }
constraints: { X: { kind: identifier } }
fix: $X
---
id: strict-equality
language: javascript
severity: error
message: use === ($A)
rule: { pattern: $A == $B }
constraints: { B: { not: { kind: "null" } } }
fix: $A === $B
files: [src/**]
ignores: [src/vendor/**]
"#;

fn fix(rules: &super::RuleSet, path: &str, text: &str, passes: usize) -> super::engine::FileResult {
    let active: Vec<&super::Rule> = rules
        .rules
        .iter()
        .filter(|r| r.applies_to(path, Lang::JavaScript))
        .collect();
    match run_file(path, text, Lang::JavaScript, &active, Mode::Fix, passes) {
        Ok(r) => r,
        Err(e) => panic!("run_file: {e}"),
    }
}

fn load(text: &str, format: TextFormat) -> super::RuleSet {
    match from_text(text, format, "test") {
        Ok(r) => r,
        Err(e) => panic!("rules: {e}"),
    }
}

fn load_err(text: &str, format: TextFormat) -> (String, String, String) {
    match from_text(text, format, "test") {
        Err(Error::BadRule {
            rule,
            field,
            detail,
            ..
        }) => (rule, field, detail),
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("rules loaded"),
    }
}

#[test]
fn toml_and_yaml_rules_are_the_same_rules() {
    let toml = load(TOML, TextFormat::Toml);
    let yaml = load(YAML, TextFormat::Yaml);
    let src = "if (a == b) { ((((c)))) }\nif (d == null) {}\n";
    let a = fix(&toml, "src/x.js", src, 10);
    let b = fix(&yaml, "src/x.js", src, 10);
    assert_eq!(a.after, b.after);
    assert_eq!(
        a.after.as_deref(),
        Some("if (a === b) { c }\nif (d == null) {}\n")
    );
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.findings, b.findings);
    assert_eq!(a.findings[0].message, "use === (a)");
}

#[test]
fn globs_select_files_relative_to_the_config() {
    let rules = load(TOML, TextFormat::Toml);
    let strict = &rules.rules[1];
    assert!(strict.applies_to("src/a.js", Lang::JavaScript));
    assert!(strict.applies_to("src/deep/a.js", Lang::JavaScript));
    assert!(!strict.applies_to("lib/a.js", Lang::JavaScript));
    assert!(!strict.applies_to("src/vendor/a.js", Lang::JavaScript));
    assert!(!strict.applies_to("src/a.ts", Lang::TypeScript));
    assert!(rules.rules[0].applies_to("lib/a.js", Lang::JavaScript));
}

#[test]
fn fixes_rerun_until_stable_and_the_bound_is_reported() {
    let rules = load(TOML, TextFormat::Toml);
    let deep = "let k = ((((((w))))));\n";
    let done = fix(&rules, "a.js", deep, 10);
    assert_eq!(done.after.as_deref(), Some("let k = w;\n"));
    assert!(done.unconverged.is_empty());
    assert_eq!(done.counts, vec![("redundant-parens".to_string(), 6)]);
    assert!(done.remaining.is_empty());

    let bounded = fix(&rules, "a.js", deep, 2);
    // Each pass takes one layer: the parentheses around what the last pass wrote.
    assert_eq!(bounded.after.as_deref(), Some("let k = ((((w))));\n"));
    assert_eq!(bounded.unconverged.len(), 1);
    assert_eq!(bounded.unconverged[0].rule, "redundant-parens");
    assert_eq!(bounded.unconverged[0].passes, 2);
}

/// Issue 53 item 4: a rule deleting the third argument of a call matched its own
/// output on the next pass and deleted the fourth and the fifth too.
#[test]
fn a_rule_never_fixes_its_own_output_again() {
    let text = r#"
[[rules]]
id = "drop-third"
language = "javascript"
rule.pattern = "f($A, $B, $C, $$$REST)"
fix = "f($A, $B, $$$REST)"
"#;
    let rules = load(text, TextFormat::Toml);
    let out = fix(&rules, "a.js", "f(1, 2, 3, 4, 5);\nf(1, 2, 3, 4);\n", 10);
    assert_eq!(out.after.as_deref(), Some("f(1, 2, 4, 5);\nf(1, 2, 4);\n"));
    assert_eq!(out.counts, vec![("drop-third".to_string(), 2)]);
    assert!(out.unconverged.is_empty());
    // One pass is all it takes, and nothing says otherwise.
    let once = fix(&rules, "a.js", "f(1, 2, 3, 4, 5);\n", 1);
    assert_eq!(once.after.as_deref(), Some("f(1, 2, 4, 5);\n"));
    assert!(once.unconverged.is_empty());
    // Nested calls are each fixed once, in one pass.
    let nested = fix(&rules, "a.js", "f(1, 2, f(1, 2, 3, 4), 4);\n", 10);
    assert_eq!(nested.after.as_deref(), Some("f(1, 2, 4);\n"));
    let inner = fix(&rules, "a.js", "f(f(1, 2, 3, 4), 2, 3, 4);\n", 10);
    assert_eq!(inner.after.as_deref(), Some("f(f(1, 2, 4), 2, 4);\n"));
}

#[test]
fn a_later_rule_feeding_an_earlier_one_is_rerun_in_the_next_round() {
    // `b` turns `f(x)` into `g(x)`; `a`, declared first, turns `g(x)` into `h(x)`.
    let text = r#"
[[rules]]
id = "a"
language = "javascript"
rule.pattern = "g($X)"
fix = "h($X)"

[[rules]]
id = "b"
language = "javascript"
rule.pattern = "f($X)"
fix = "g($X)"
"#;
    let rules = load(text, TextFormat::Toml);
    let out = fix(&rules, "a.js", "f(1);\n", 10);
    assert_eq!(out.after.as_deref(), Some("h(1);\n"));
    assert!(out.unconverged.is_empty());

    // Two rules undoing each other never settle: the bound says so.
    let text = r#"
[[rules]]
id = "there"
language = "javascript"
rule.pattern = "f($X)"
fix = "g($X)"

[[rules]]
id = "back"
language = "javascript"
rule.pattern = "g($X)"
fix = "f($X)"
"#;
    let rules = load(text, TextFormat::Toml);
    let out = fix(&rules, "a.js", "f(1);\n", 3);
    let stuck: Vec<&str> = out.unconverged.iter().map(|u| u.rule.as_str()).collect();
    assert_eq!(stuck, vec!["there", "back"]);
}

#[test]
fn crlf_files_keep_their_line_endings() {
    let text = r#"
[[rules]]
id = "wrap"
language = "javascript"
rule.pattern = "f($X)"
fix = "g(\n  $X\n)"
"#;
    let rules = load(text, TextFormat::Toml);
    let out = fix(&rules, "a.js", "f(1);\r\nf(2);\r\n", 10);
    assert_eq!(
        out.after.as_deref(),
        Some("g(\r\n  1\r\n);\r\ng(\r\n  2\r\n);\r\n")
    );
}

#[test]
fn bad_rules_name_the_rule_and_the_field() {
    let cases: &[(&str, TextFormat, (&str, &str), &str)] = &[
        (
            "id: r\nlanguage: js\nrule: { pattrn: f($A) }\n",
            TextFormat::Yaml,
            ("r", "rule"),
            "pattrn",
        ),
        (
            "id: r\nlanguage: js\nrule: { pattern: f($A) }\nconstraints: { A: { knd: x } }\n",
            TextFormat::Yaml,
            ("r", "constraints"),
            "knd",
        ),
        (
            "id: r\nlanguage: js\nrule: { pattern: f($A) }\ntransform: { B: { nope: 1 } }\n",
            TextFormat::Yaml,
            ("r", "transform"),
            "",
        ),
        (
            "id: r\nlanguage: js\nrule: { regex: x }\n",
            TextFormat::Yaml,
            ("r", "rule"),
            "kind",
        ),
        (
            "id: r\nlanguage: rust\nrule: { pattern: 'fn $F() { $$$ } fn g() {}' }\n",
            TextFormat::Yaml,
            ("r", "rule"),
            "$F",
        ),
        (
            "[[rules]]\nid = \"r\"\nlanguage = \"js\"\nrule.pattern = \"f($A)\"\nfix = \"g($Z)\"\n",
            TextFormat::Toml,
            ("r", "fix"),
            "Z",
        ),
        (
            "[[rules]]\nlanguage = \"js\"\nrule.pattern = \"f($A)\"\n",
            TextFormat::Toml,
            ("#1", "id"),
            "id",
        ),
    ];
    for (text, format, (rule, field), needle) in cases {
        let (r, f, detail) = load_err(text, *format);
        assert_eq!(
            (r.as_str(), f.as_str()),
            (*rule, *field),
            "{text}: {detail}"
        );
        assert!(detail.contains(needle), "{text}: {detail}");
        assert!(
            !detail.contains('µ'),
            "internal metavariable form leaked: {detail}"
        );
    }
}

#[test]
fn severity_off_disables_a_rule_after_checking_it() {
    let rules = load(
        "id: quiet\nlanguage: js\nseverity: off\nrule: { pattern: f($A) }\n",
        TextFormat::Yaml,
    );
    assert!(rules.rules.is_empty());
    assert_eq!(rules.disabled, vec!["quiet".to_string()]);
    let (_, field, _) = load_err(
        "id: quiet\nlanguage: js\nseverity: off\nrule: { kind: nope_kind }\n",
        TextFormat::Yaml,
    );
    assert_eq!(field, "rule");
}

#[test]
fn shards_partition_the_paths() {
    let paths: Vec<String> = (0..200).map(|i| format!("src/m{i}/f{i}.rs")).collect();
    for n in 1..=5 {
        let shards: Vec<Shard> = (1..=n)
            .map(|i| Shard::parse(&format!("{i}/{n}")).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        for p in &paths {
            assert_eq!(shards.iter().filter(|s| s.contains(p)).count(), 1, "{p}");
        }
        if n > 1 {
            assert!(shards.iter().all(|s| paths.iter().any(|p| s.contains(p))));
        }
    }
    // The split is a function of the path alone, fixed across releases.
    let s = Shard::parse(" 2/3 ").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.to_string(), "2/3");
    let pinned: Vec<bool> = ["a", "b", "src/lib.rs"]
        .iter()
        .map(|p| s.contains(p))
        .collect();
    assert_eq!(pinned, vec![true, true, false]);
    for bad in ["0/2", "3/2", "1/0", "x/2", "2", ""] {
        assert!(Shard::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_message_variable_the_rule_does_not_capture_is_warned_about() {
    let rules = load(
        "id: m\nlanguage: js\nmessage: bad $A and $NOPE\nrule: { pattern: f($A) }\n",
        TextFormat::Yaml,
    );
    assert_eq!(rules.warnings.len(), 1, "{:?}", rules.warnings);
    assert!(rules.warnings[0].contains("$NOPE"), "{:?}", rules.warnings);
    assert!(!rules.warnings[0].contains("$A,"), "{:?}", rules.warnings);
}

/// A file is skipped only when no rule can match in it: the patterns of a rule, its
/// `all` members and relational sub-rules must all occur; of `any`, one member's.
#[test]
fn rules_tell_which_files_they_cannot_match() {
    let set = load(
        r#"
[[rules]]
id = "plain"
language = "javascript"
rule.pattern = "foo($A)"

[[rules]]
id = "inside"
language = "javascript"
rule.pattern = "bar($A)"
rule.inside.pattern = "function outer() { $$$ }"
rule.inside.stopBy = "end"

[[rules]]
id = "any-with-kind"
language = "javascript"
rule.any = [{ pattern = "baz($A)" }, { kind = "number" }]

[[rules]]
id = "not-only"
language = "javascript"
rule.kind = "identifier"
rule.not.pattern = "qux"
"#,
        TextFormat::Toml,
    );
    let rule = |id: &str| {
        set.rules
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("rule {id}"))
    };
    assert!(rule("plain").may_match("foo(1)"));
    assert!(!rule("plain").may_match("fo(1)"));
    assert!(!rule("plain").may_match("// foo(1)\n"));
    assert!(rule("inside").may_match("function outer() { bar(1) }"));
    assert!(!rule("inside").may_match("function other() { bar(1) }"));
    assert!(!rule("inside").may_match("function outer() { }"));
    // One `any` member needs no text: the rule may match anywhere.
    assert!(rule("any-with-kind").may_match("let x = 1;"));
    assert!(rule("not-only").may_match("x"));
}

#[test]
fn declined_fixes_are_not_offered_again_when_the_rules_re_run() {
    use super::engine::run_file_selecting;
    let set = from_text(
        "id: eq\nlanguage: javascript\nrule: { pattern: $A == $B }\nfix: $A === $B\n---\n\
         id: wrap\nlanguage: javascript\nrule: { pattern: f($X) }\nfix: g($X)\n",
        TextFormat::Yaml,
        "rules.yml",
    )
    .expect("rules load");
    let rules: Vec<&super::Rule> = set.rules.iter().collect();
    let text = "f(a == 1);\nb == 2;\nc == 3;\nf(d);\n";
    let mut offered = Vec::new();
    let result = run_file_selecting(
        "x.js",
        text,
        Lang::JavaScript,
        &rules,
        Mode::Fix,
        10,
        &mut |p| {
            let shown = p.shown();
            let before = shown.text[shown.start..shown.end].to_string();
            // Decline `b == 2` and the first `f(…)`; accept the rest.
            let take = !matches!(before.as_str(), "b == 2" | "f(a === 1)");
            offered.push(before);
            take
        },
    )
    .expect("runs");
    assert_eq!(
        result.after.as_deref(),
        Some("f(a === 1);\nb == 2;\nc === 3;\ng(d);\n")
    );
    // Every change offered once, though both rules ran more than one round.
    assert_eq!(
        offered,
        vec!["a == 1", "b == 2", "c == 3", "f(a === 1)", "f(d)"]
    );
    assert_eq!(
        result.counts,
        vec![("eq".to_string(), 2), ("wrap".to_string(), 1)]
    );
    // The declined fix is a finding left for a person.
    assert_eq!(result.remaining.len(), 2);
}

#[test]
fn a_finding_knows_the_comments_inside_its_match() {
    let set = from_text(
        "id: call\nlanguage: python\nrule: { pattern: 'isinstance($A, $B)' }\n---\n\
         id: note\nlanguage: python\nrule: { kind: comment }\n",
        TextFormat::Yaml,
        "rules.yml",
    )
    .expect("rules load");
    let rules: Vec<&super::Rule> = set.rules.iter().collect();
    let text = "ok = isinstance(\n    x,  # type: ignore\n    str)\n# alone\n";
    let result = run_file("a.py", text, Lang::Python, &rules, Mode::Report, 1).expect("runs");
    let call = &result.findings[0];
    assert_eq!(call.rule, "call");
    let comments: Vec<&str> = call
        .comments
        .iter()
        .map(|&(a, b)| &call.text[a..b])
        .collect();
    assert_eq!(comments, ["# type: ignore"]);
    let key = super::baseline::Key::of_finding(call);
    assert_eq!(key.text, "isinstance(x,str)");
    // A comment that is the match keeps its text.
    let notes: Vec<&super::Finding> = result
        .findings
        .iter()
        .filter(|f| f.rule == "note")
        .collect();
    assert_eq!(notes.len(), 2);
    assert!(notes.iter().all(|f| f.comments.is_empty()));
    assert_eq!(super::baseline::Key::of_finding(notes[1]).text, "#alone");
}
