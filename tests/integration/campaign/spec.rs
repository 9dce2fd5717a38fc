//! The spec and what shows it: bad specs refused, the schema, the fixture spec as
//! written, the status page in headless Chromium.

use std::path::Path;

use crate::campaign_world::*;
use crate::contract::validate;

#[test]
fn bad_specs_and_option_like_urls_are_refused() {
    let w = World::new();
    let spec = w.spec("name = \"-x\"\n[change]\nops = [{ pattern = \"a\", rewrite = \"b\" }]\n");
    let out = w.run(&["--json", "campaign", "stage", &spec]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "bad-campaign-spec");
    validate(&w.state, "campaign", &out.json());
    let spec = w.spec("name = \"x\"\n[change]\nlang = \"ts\"\n");
    w.run(&["campaign", "stage", &spec]).assert_code(2);
    let spec = w.spec(&format!(
        "{SPEC_HEAD}[[repos]]\nurl = \"--upload-pack=touch /tmp/pwned\"\n"
    ));
    let ws = w.workspace();
    let out = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    out.assert_code(1);
    let o = &out.json()["outcomes"][0];
    assert_eq!(o["status"], "failed");
    assert!(o["note"].as_str().expect("note").contains("refused"), "{o}");
    // A shard outside 1..=N is a usage error.
    let out = w.run(&[
        "--json",
        "campaign",
        "stage",
        &spec,
        "--workspace",
        &ws,
        "--shard",
        "0/3",
    ]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "usage");
    // No state yet for another campaign.
    let spec = w.spec("name = \"never\"\n[change]\nops = [{ pattern = \"a\", rewrite = \"b\" }]\n");
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "no-campaign-state");
}

#[test]
fn schema_describes_the_spec_and_the_reports() {
    let w = World::new();
    let spec = w.run(&["schema", "campaign-spec"]);
    spec.assert_code(0);
    let v: serde_json::Value = serde_json::from_str(&spec.stdout).expect("json");
    assert!(v["properties"]["change"].is_object(), "{v}");
    // The example, as written, fits the spec's schema.
    let example: serde_json::Value = toml::from_str(&SPEC_HEAD.replace(
        "[pr]",
        "[[repos]]\nurl = \"/srv/git/app.git\"\nbase = \"main\"\n[pr]",
    ))
    .expect("toml");
    let validator = jsonschema::draft202012::options()
        .build(&v)
        .expect("schema compiles");
    assert!(validator.is_valid(&example), "{example}");
    assert!(!validator.is_valid(&serde_json::json!({"name": "x", "change": {}, "colour": 1})));
    for cmd in ["campaign", "campaign-status", "campaign-matrix"] {
        w.run(&["schema", cmd]).assert_code(0);
    }
}

#[test]
fn the_fixture_spec_and_its_repository_list_read_as_written() {
    let w = World::new();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/campaign/log-to-logger.toml");
    let out = w.run(&[
        "--json",
        "campaign",
        "matrix",
        &spec.display().to_string(),
        "--jobs",
        "2",
    ]);
    out.assert_code(0);
    let m = out.json();
    assert_eq!(m["repos"], serde_json::json!([["web", "admin"], ["api"]]));
}

/// The status page opened in headless Chromium: the browser's DOM holds the table's
/// rows and the chart's lines. `.ci/run` installs Chromium and sets
/// ASTEDIT_REQUIRE_CHROMIUM=1; elsewhere the test is skipped without it.
#[test]
fn the_status_page_renders_in_headless_chromium() {
    let Some(browser) = crate::cdp::chromium_or_skip() else {
        return;
    };
    let w = World::new();
    let mut spec = SPEC_HEAD.to_string();
    for (name, code) in [
        ("a", "console.log(1);\n"),
        ("b", "f();\n"),
        ("c", "console.log(2);\n"),
    ] {
        let b = w.bare(name, &[("x.ts", code)]);
        spec.push_str(&format!("[[repos]]\nurl = \"{}\"\n", b.display()));
    }
    let spec = w.spec(&spec);
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    w.run(&["--json", "campaign", "publish", &spec])
        .assert_code(0);
    w.flip("a", "MERGED");
    let page = w.root.path().join("status.html");
    let p = page.display().to_string();
    w.run(&["campaign", "status", &spec, "--html", &p])
        .assert_code(0);
    let out = std::process::Command::new(&browser)
        .args(crate::cdp::headless_args(w.root.path()))
        .args(["--dump-dom", &format!("file://{p}")])
        .env("HOME", w.root.path())
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("</html>"),
        "chromium failed: {}\n{dom}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The table as the browser parsed it: a row per repository, the merged one linked.
    assert_eq!(dom.matches("<tr class=").count(), 3, "{dom}");
    assert!(dom.contains("<tr class=\"merged\"><td>a</td>"), "{dom}");
    assert!(dom.contains("<tr class=\"no-change\"><td>b</td>"), "{dom}");
    assert!(
        dom.contains(&format!(
            "href=\"https://github.com/acme/a/pull/{}\"",
            w.pr_of("a")
        )),
        "{dom}"
    );
    // The published repository's pending preview links its review page, written
    // beside the status page; the merged one and the one without a change have none.
    assert_eq!(dom.matches("<a class=\"review\"").count(), 1, "{dom}");
    let reviews: Vec<_> = std::fs::read_dir(w.root.path().join("status-reviews"))
        .expect("the reviews' folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert!(reviews[0].starts_with("c-"), "{reviews:?}");
    assert!(
        dom.contains(&format!("href=\"status-reviews/{}\"", reviews[0])),
        "{dom}"
    );
    let review = std::fs::read_to_string(w.root.path().join("status-reviews").join(&reviews[0]))
        .expect("read the review page");
    assert!(review.contains("console.log(2)"), "{review}");
    // The chart: both lines, one point per state commit.
    let commits: usize = w
        .state
        .git(&["rev-list", "--count", "refs/astedit-campaign/log-to-logger"])
        .trim()
        .parse()
        .expect("count");
    for class in ["open", "merged"] {
        let at = dom
            .find(&format!("class=\"{class}\""))
            .unwrap_or_else(|| panic!("no {class} line: {dom}"));
        let points = dom[at..]
            .split("points=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("points");
        assert_eq!(points.split_whitespace().count(), commits, "{points}");
    }
    assert!(
        dom.contains("<li data-status=\"merged\">merged: 1</li>"),
        "{dom}"
    );
}
