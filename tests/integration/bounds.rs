//! Inputs that would take all memory (issue 21 item 7) end in a typed error, exit 2,
//! under a memory limit: no abort, no backtrace.

use crate::util::TestRepo;

/// An abort under the limit prints a backtrace or "memory allocation failed".
#[track_caller]
fn assert_clean(out: &crate::util::Output) {
    for bad in ["panicked", "memory allocation", "backtrace", "SIGABRT"] {
        assert!(
            !out.stderr.contains(bad),
            "not a clean error ({bad}):\n{}",
            out.stderr
        );
    }
}

#[test]
fn a_fix_that_matches_its_own_output_stops_at_the_growth_bound() {
    let repo = TestRepo::new();
    repo.write("x.js", "let x = v0;\n");
    // A rule never re-matches its own output, so the runaway is a chain: grow-N turns
    // `vN` into `vN+1` and a 300 KB string, which grow-N+1 takes in the next pass. The
    // text grows 300 KB a pass and passes the bound (the input plus 1 MiB) on the
    // fourth, while a fifth pass would still change it: the bound stops it, not the
    // pass limit, and a debug build gets there in well under a second.
    let filler = "x".repeat(300_000);
    let rules: String = (0..6)
        .map(|i| {
            format!(
                "[[rules]]\nid = \"grow-{i}\"\nlanguage = \"javascript\"\n\
                 rule = {{ kind = \"identifier\", regex = \"^v{i}$\" }}\n\
                 fix = \"v{next} + '{filler}'\"\n",
                next = i + 1
            )
        })
        .collect();
    repo.write("astedit.toml", rules);
    repo.commit_all("init");
    let out = repo.run_limited(&["--json", "scan", "--check"], None);
    out.assert_code(2);
    assert_clean(&out);
    let err = &out.json()["error"];
    assert_eq!(err["code"], "rewrite-too-large", "{err}");
    assert!(
        err["message"].as_str().unwrap_or("").contains("'grow-3'"),
        "{err}"
    );
    assert_eq!(repo.read_string("x.js"), "let x = v0;\n");
}

/// `x = [[[…1…]]];` nested `depth` deep, on one line or one bracket a line.
fn nested_array(depth: usize, sep: &str) -> String {
    format!(
        "x = {}1{};\n",
        format!("[{sep}").repeat(depth),
        format!("]{sep}").repeat(depth)
    )
}

#[test]
fn grep_on_a_deep_one_line_nest_stops_at_the_match_text_bound() {
    let repo = TestRepo::new();
    repo.write("x.js", nested_array(100_000, ""));
    repo.commit_all("init");
    let out = repo.run_limited(&["--json", "grep", "-p", "[$A]"], None);
    out.assert_code(2);
    assert_clean(&out);
    let err = &out.json()["error"];
    assert_eq!(err["code"], "matches-too-large", "{err}");
    assert!(
        err["message"].as_str().unwrap_or("").contains("x.js"),
        "{err}"
    );
}

#[test]
fn grep_on_the_same_nest_over_many_lines_just_works() {
    let repo = TestRepo::new();
    repo.write("x.js", nested_array(100_000, "\n"));
    repo.commit_all("init");
    let out = repo.run_limited(&["grep", "-p", "[$A]"], None);
    out.assert_code(0);
    assert_clean(&out);
    assert!(
        out.stdout.starts_with("x.js:1:5: ["),
        "{}",
        &out.stdout[..200.min(out.stdout.len())]
    );
}

#[test]
fn placing_100000_chunks_is_near_linear_and_a_last_bad_one_is_still_named() {
    // Each chunk used to be compared at every line below the previous one (minutes for
    // 100,000 chunks); the chunk after them all fits nowhere, so the run ends with
    // the placement error before any diff is rendered.
    let n = 100_000;
    let repo = TestRepo::new();
    let file: String = (0..3 * n).map(|i| format!("line {i}\n")).collect();
    repo.write("f.txt", file);
    repo.commit_all("init");
    let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n");
    for i in 0..n {
        let (a, b) = (3 * i, 3 * i + 1);
        patch.push_str(&format!("@@\n line {a}\n-line {b}\n+LINE {b}\n"));
    }
    patch.push_str("@@\n no such line\n-nor this\n+x\n*** End Patch\n");
    let out = repo.run_limited(&["--json", "patch", "-"], Some(patch.as_bytes()));
    out.assert_code(5);
    assert_clean(&out);
    let err = &out.json()["error"];
    assert_eq!(err["code"], "no-match", "{err}");
    let message = err["message"].as_str().unwrap_or("");
    assert!(message.contains(&format!("chunk {}", n + 1)), "{err}");
}

/// Runs `scan --config rule.yml` with `rule` as the file, under the memory limit.
fn scan_rule_file(rule: &str) -> crate::util::Output {
    let repo = TestRepo::new();
    repo.write("x.js", "let a = foo(b);\n");
    repo.write("rule.yml", rule);
    repo.commit_all("init");
    repo.run_limited(&["--json", "scan", "--config", "rule.yml"], None)
}

#[track_caller]
fn assert_bad_rule(out: &crate::util::Output, says: &str) {
    out.assert_code(2);
    assert_clean(out);
    let err = &out.json()["error"];
    let code = err["code"].as_str().unwrap_or("");
    assert!(code == "bad-rule" || code == "bad-rule-file", "{err}");
    assert!(
        err["message"].as_str().unwrap_or("").contains(says),
        "{err}"
    );
}

#[test]
fn a_util_named_twice_at_each_of_40_levels_is_refused() {
    let mut rule = String::from("id: a\nlanguage: javascript\nutils:\n");
    for i in 0..40 {
        let n = i + 1;
        rule.push_str(&format!(
            "  u{i}: {{any: [{{matches: u{n}}}, {{matches: u{n}}}]}}\n"
        ));
    }
    rule.push_str("  u40: {pattern: foo}\nrule: {matches: u0}\n");
    assert_bad_rule(&scan_rule_file(&rule), "sub-rules");
}

#[test]
fn a_chain_of_5000_utils_is_refused() {
    let mut rule = String::from("id: a\nlanguage: javascript\nutils:\n");
    for i in 0..5000 {
        rule.push_str(&format!("  u{i}: {{matches: u{}}}\n", i + 1));
    }
    rule.push_str("  u5000: {kind: identifier}\nrule: {matches: u0}\n");
    assert_bad_rule(&scan_rule_file(&rule), "chain");
}

#[test]
fn rules_nested_5000_deep_are_refused() {
    for (open, close) in [
        ("{not: ", "}"),
        ("{all: [", "]}"),
        ("{kind: identifier, inside: ", "}"),
    ] {
        let rule = format!(
            "id: a\nlanguage: javascript\nrule: {}{{kind: identifier}}{}\n",
            open.repeat(5000),
            close.repeat(5000)
        );
        let out = scan_rule_file(&rule);
        assert_bad_rule(&out, "rule.yml");
    }
}

#[test]
fn a_yaml_alias_bomb_is_refused() {
    let mut rule = String::from("x0: &a0 {kind: identifier}\n");
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        rule.push_str(&format!("x{i}: &a{i} {{all: [{refs}]}}\n"));
    }
    rule.push_str("---\nid: a\nlanguage: javascript\nrule: *a11\n");
    assert_bad_rule(&scan_rule_file(&rule), "rule.yml");
}
