//! Integration tests: `scan --format sarif` is valid SARIF 2.1.0 (checked against the
//! official schema, vendored in tests/data/sarif), with percent-encoded relative URIs,
//! fingerprints that survive line shifts, fixes and rule metadata.

use std::collections::BTreeMap;

use crate::util::TestRepo;

const RULES: &str = r#"
[[rules]]
id = "no-debug-log"
language = "typescript"
severity = "warning"
message = "console.log left in: $$$A"
note = "use the logger"
url = "https://example.com/rules/no-debug-log"
rule.pattern = "console.log($$$A)"
fix = "logger.debug($$$A)"

[[rules]]
id = "no-eval"
language = "typescript"
severity = "error"
message = "eval"
url = "docs/no-eval.md"
rule.pattern = "eval($A)"
"#;

/// Paths with spaces, `%`, non-ASCII and nested folders.
const PATHS: [&str; 4] = [
    "src/with space é.ts",
    "src/x%25y.ts",
    "src/deep/nested/folder/ü.ts",
    "plain.ts",
];

fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("astedit.toml", RULES);
    for p in PATHS {
        repo.write(
            p,
            "function f() {\n  console.log(1);\n  eval(s);\n  console.log(1);\n}\n",
        );
    }
    repo.commit_all("init");
    repo
}

fn validator() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sarif/sarif-schema-2.1.0.json"
    );
    let mut schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema file"))
            .expect("schema JSON");
    // The one flaw of the official file: the pattern of its `language` properties has a
    // stray `]`, which is no ECMA-262 regex, so the meta-schema refuses the schema. We
    // never write `language`; the pattern is mended in memory (the file stays as
    // published).
    let mended = mend_language_patterns(&mut schema);
    assert!(mended > 0, "the flaw is gone: drop the mending");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("schema compiles")
}

const BAD_LANGUAGE_PATTERN: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";

/// Replaces every `"pattern": BAD_LANGUAGE_PATTERN` with the intended one; returns how
/// many there were.
fn mend_language_patterns(v: &mut serde_json::Value) -> usize {
    match v {
        serde_json::Value::Object(map) => {
            let mut n = 0;
            for (key, value) in map.iter_mut() {
                if key == "pattern" && value == BAD_LANGUAGE_PATTERN {
                    *value = serde_json::json!("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
                    n += 1;
                } else {
                    n += mend_language_patterns(value);
                }
            }
            n
        }
        serde_json::Value::Array(items) => items.iter_mut().map(mend_language_patterns).sum(),
        _ => 0,
    }
}

#[track_caller]
fn assert_valid(v: &serde_json::Value) {
    let validator = validator();
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "invalid SARIF:\n{}", errors.join("\n"));
}

fn sarif(repo: &TestRepo) -> serde_json::Value {
    let out = repo.run(&["scan", "--format", "sarif"]);
    out.assert_code(1);
    out.json()
}

/// Decodes `%XX` escapes (the inverse of the encoding under test).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).expect("hex"));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("utf8")
}

/// (uri, startLine, fingerprint) of every result.
fn results(v: &serde_json::Value) -> Vec<(String, u64, String)> {
    v["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            (
                loc["artifactLocation"]["uri"]
                    .as_str()
                    .expect("uri")
                    .to_string(),
                loc["region"]["startLine"].as_u64().expect("line"),
                r["partialFingerprints"]["astedit/v2"]
                    .as_str()
                    .expect("fingerprint")
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let repo = repo();
    let v = sarif(&repo);
    assert_valid(&v);
    // The validator is not vacuous: a raw path with a space is no uri-reference.
    let mut bad = v.clone();
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
        serde_json::json!("src/with space é.ts");
    assert!(
        !validator().is_valid(&bad),
        "a raw path should fail the schema"
    );
}

#[test]
fn sarif_uris_are_percent_encoded_and_relative_to_srcroot() {
    let repo = repo();
    let v = sarif(&repo);
    let run = &v["runs"][0];
    let base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .expect("SRCROOT uri");
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    let mut uris: Vec<String> = Vec::new();
    for r in run["results"].as_array().expect("results") {
        let loc = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(loc["uriBaseId"], "%SRCROOT%");
        uris.push(loc["uri"].as_str().expect("uri").to_string());
    }
    uris.sort();
    uris.dedup();
    assert_eq!(
        uris,
        [
            "plain.ts",
            "src/deep/nested/folder/%C3%BC.ts",
            "src/with%20space%20%C3%A9.ts",
            "src/x%2525y.ts",
        ]
    );
    // Each decodes back to the file's real name, and the file is there.
    for uri in &uris {
        let path = percent_decode(uri);
        assert!(PATHS.contains(&path.as_str()), "{uri} decodes to {path}");
        assert!(repo.exists(&path));
    }
}

#[test]
fn sarif_fingerprints_survive_an_inserted_line_and_differ_between_equal_findings() {
    let repo = repo();
    let before = results(&sarif(&repo));
    // Same again: stable across runs.
    assert_eq!(results(&sarif(&repo)), before);
    // All distinct, though each file holds two identical console.log(1) findings.
    let mut prints: Vec<&str> = before.iter().map(|(_, _, f)| f.as_str()).collect();
    prints.sort();
    prints.dedup();
    assert_eq!(prints.len(), before.len());

    // A line above every finding of one file, and one re-indented finding.
    let path = "src/with space é.ts";
    repo.write(
        path,
        "// a new first line\nfunction f() {\n  console.log(1);\n  eval(s);\n      console.log(1);\n}\n",
    );
    let after = results(&sarif(&repo));
    let by_print = |rs: &[(String, u64, String)]| -> BTreeMap<String, (String, u64)> {
        rs.iter()
            .map(|(u, l, f)| (f.clone(), (u.clone(), *l)))
            .collect()
    };
    let (b, a) = (by_print(&before), by_print(&after));
    assert_eq!(
        b.keys().collect::<Vec<_>>(),
        a.keys().collect::<Vec<_>>(),
        "fingerprints changed"
    );
    for (print, (uri, line)) in &b {
        let expected = if percent_decode(uri) == path {
            line + 1
        } else {
            *line
        };
        assert_eq!(a[print], (uri.clone(), expected), "{uri}");
    }
}

/// A comment added inside a finding's match (or edited there) keeps its fingerprint,
/// as it keeps the finding `unchanged` under `--baseline` (one definition of the text
/// both use); a change to the code itself does not.
#[test]
fn sarif_fingerprints_leave_out_the_comments_inside_a_finding() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", RULES);
    let file = |args: &str| format!("function f() {{\n  console.log(\n    {args}\n  );\n}}\n");
    repo.write("a.ts", file("1,\n    2"));
    repo.commit_all("init");
    // A warning only: exit 0.
    let sarif = |repo: &TestRepo| {
        let out = repo.run(&["scan", "--format", "sarif"]);
        out.assert_code(0);
        out.json()
    };
    let prints = |repo: &TestRepo| -> Vec<String> {
        results(&sarif(repo))
            .into_iter()
            .map(|(_, _, print)| print)
            .collect()
    };
    let before = prints(&repo);
    assert_eq!(before.len(), 1);
    for commented in [
        "1, // the first\n    2",
        "1, /* the first */ 2",
        "/* both */ 1,\n    // and\n    2",
    ] {
        repo.write("a.ts", file(commented));
        assert_eq!(prints(&repo), before, "{commented}");
    }
    // The code changed: another finding.
    repo.write("a.ts", file("1,\n    3"));
    let changed = prints(&repo);
    assert_eq!(changed.len(), 1);
    assert_ne!(changed, before);
    // The fingerprint is versioned: no result carries the old key.
    let v = sarif(&repo);
    let keys: Vec<&String> = v["runs"][0]["results"][0]["partialFingerprints"]
        .as_object()
        .expect("partialFingerprints")
        .keys()
        .collect();
    assert_eq!(keys, ["astedit/v2"]);
}

#[test]
fn sarif_has_fixes_and_rule_metadata() {
    let repo = repo();
    let v = sarif(&repo);
    let run = &v["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0]["id"], "no-debug-log");
    assert_eq!(
        rules[0]["shortDescription"]["text"],
        "console.log left in: $$$A"
    );
    assert_eq!(rules[0]["defaultConfiguration"]["level"], "warning");
    assert_eq!(
        rules[0]["helpUri"],
        "https://example.com/rules/no-debug-log"
    );
    assert_eq!(rules[0]["help"]["text"], "use the logger");
    assert_eq!(rules[1]["defaultConfiguration"]["level"], "error");
    // A relative url is no absolute URI: left out rather than failing the schema.
    assert!(rules[1].get("helpUri").is_none());

    let results = run["results"].as_array().expect("results");
    let log = results
        .iter()
        .find(|r| r["ruleId"] == "no-debug-log")
        .expect("a console.log finding");
    assert_eq!(log["ruleIndex"], 0);
    let change = &log["fixes"][0]["artifactChanges"][0];
    assert_eq!(
        change["artifactLocation"],
        log["locations"][0]["physicalLocation"]["artifactLocation"]
    );
    let replacement = &change["replacements"][0];
    assert_eq!(replacement["insertedContent"]["text"], "logger.debug(1)");
    let region = &replacement["deletedRegion"];
    assert_eq!(
        (
            &region["startLine"],
            &region["startColumn"],
            &region["endLine"],
            &region["endColumn"]
        ),
        (
            &serde_json::json!(2),
            &serde_json::json!(3),
            &serde_json::json!(2),
            &serde_json::json!(17)
        )
    );
    // Findings of a rule without a fix carry none.
    let eval = results
        .iter()
        .find(|r| r["ruleId"] == "no-eval")
        .expect("eval");
    assert!(eval.get("fixes").is_none());
    assert_eq!(eval["ruleIndex"], 1);

    // Applying the replacement to the file gives what `scan --apply` would write.
    let uri = log["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .expect("uri");
    let text = repo.read_string(&percent_decode(uri));
    let line: &str = text.lines().nth(1).expect("line 2");
    let chars: Vec<char> = line.chars().collect();
    let replaced: String = chars[..2].iter().collect::<String>()
        + "logger.debug(1)"
        + &chars[16..].iter().collect::<String>();
    assert_eq!(replaced, "  logger.debug(1);");
}

/// `scan --json` and SARIF are written as the files' findings come (issue 26): over
/// many files the one-line document holds what the whole report (`--json=pretty`,
/// printed at the end) holds, the SARIF log validates, and the bytes do not depend on
/// the number of threads; `--max-results` cuts the stream where it cuts the report.
#[test]
fn streamed_scan_json_and_sarif_equal_the_whole_report() {
    let repo = repo();
    for i in 0..40 {
        repo.write(
            &format!("many/f{i:02}.ts"),
            "console.log(1);\neval(s);\n".repeat(i % 4),
        );
    }
    repo.commit_all("more");
    let compact = repo.run(&["--json", "scan"]);
    compact.assert_code(1);
    assert_eq!(compact.stdout.lines().count(), 1, "one line");
    let pretty = repo.run(&["--json=pretty", "scan"]);
    assert_eq!(compact.json(), pretty.json());
    let total = pretty.json()["findings"].as_array().map_or(0, Vec::len);
    assert!(total > 60, "{total}");
    let one = repo.run(&["--json", "scan", "-j", "1"]);
    assert_eq!(one.stdout, compact.stdout);

    let sarif = repo.run(&["scan", "--format", "sarif"]);
    sarif.assert_code(1);
    let v = sarif.json();
    assert_valid(&v);
    assert_eq!(
        v["runs"][0]["results"].as_array().map(Vec::len),
        Some(total)
    );
    let one = repo.run(&["scan", "--format", "sarif", "-j", "1"]);
    assert_eq!(one.stdout, sarif.stdout);
    assert_eq!(one.stderr, sarif.stderr);

    // Cut by --max-results: the first five, the rest counted on stderr.
    let cut = repo.run(&["--json", "scan", "--max-results", "5"]);
    let findings = cut.json()["findings"].clone();
    assert_eq!(
        findings,
        serde_json::json!(pretty.json()["findings"].as_array().expect("rows")[..5])
    );
    let more = format!("{} more findings not shown (--max-results 5)", total - 5);
    assert!(cut.stderr.contains(&more), "{}", cut.stderr);
    let text = repo.run(&["scan", "--max-results", "5"]);
    assert_eq!(text.stdout.lines().count(), 5, "{}", text.stdout);
    assert!(text.stderr.contains(&more), "{}", text.stderr);
}

/// `scan --baseline REV --format sarif`: every result has its `baselineState`, the
/// fixed ones as `absent` results, and the log still validates.
#[test]
fn sarif_baseline_states_validate() {
    let repo = repo();
    repo.write(
        "plain.ts",
        "// moved down\nfunction f() {\n    console.log(1);\n  console.log(1);\n  eval(t);\n}\n",
    );
    let out = repo.run(&["scan", "--format", "sarif", "--baseline", "HEAD"]);
    out.assert_code(1);
    let v = out.json();
    assert_valid(&v);
    let mut states: Vec<(String, String, String)> = v["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["baselineState"].as_str().unwrap_or("-").to_string(),
                percent_decode(
                    r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                        .as_str()
                        .unwrap_or_default(),
                ),
                r["locations"][0]["physicalLocation"]["region"]["snippet"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .filter(|(_, path, _)| path == "plain.ts")
        .collect();
    states.sort();
    let want = |s: &str, t: &str| (s.to_string(), "plain.ts".to_string(), t.to_string());
    assert_eq!(
        states,
        [
            want("absent", "eval(s)"),
            want("new", "eval(t)"),
            want("unchanged", "console.log(1)"),
            want("unchanged", "console.log(1)"),
        ]
    );
    // Every result has one, the other files' findings unchanged.
    let results = v["runs"][0]["results"].as_array().expect("results");
    assert!(results.iter().all(|r| r["baselineState"].is_string()));
    assert_eq!(
        results
            .iter()
            .filter(|r| r["baselineState"] == "unchanged")
            .count(),
        2 + 3 * 3
    );
}
