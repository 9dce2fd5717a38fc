//! `review` (issue 50): a preview of a few hundred sites of two ops, grouped with its
//! outliers first; decisions by group and site that `apply` obeys; decisions kept
//! across a refresh; split; the text and HTML faces; fetched decisions not obeyed.

use crate::util::TestRepo;

const LOG: &str = "console.log($A) => logger.info($A)";

/// 20 files of 10 `console.log` and 5 `console.warn` calls, and one file whose two
/// `console.log` calls rewrite otherwise (a comment inside is dropped; a call over
/// three lines folds into one).
fn corpus() -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..20 {
        repo.write(
            &format!("src/m{i:02}.js"),
            module(i, "console.log", "console.warn"),
        );
    }
    repo.write("src/odd.js", ODD);
    repo.commit_all("init");
    repo
}

const ODD: &str = "function odd() {\n  console.log(c /* keep */);\n  if (x) {\n    console.log(\n      d,\n    );\n  }\n}\n";

fn module(i: usize, log: &str, warn: &str) -> String {
    let mut s = format!("function f{i}() {{\n");
    for j in 0..10 {
        s.push_str(&format!("  {log}(v{j});\n"));
    }
    for j in 0..5 {
        s.push_str(&format!("  {warn}(w{j});\n"));
    }
    s.push_str("}\n");
    s
}

/// Stages the two ops over the corpus; the preview's id.
pub(crate) fn stage(repo: &TestRepo) -> String {
    let v = repo
        .run(&[
            "--json",
            "edit",
            "-p",
            "console.log($A)",
            "-r",
            "logger.info($A)",
            "-p",
            "console.warn($A)",
            "-r",
            "logger.warn($A)",
        ])
        .assert_code(0)
        .json();
    v["id"].as_str().expect("id").to_string()
}

pub(crate) fn review(repo: &TestRepo, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["--json", "review"];
    full.extend_from_slice(args);
    repo.run(&full).assert_code(0).json()
}

fn key(v: &serde_json::Value, i: usize) -> String {
    v["groups"][i]["key"].as_str().expect("key").to_string()
}

#[test]
fn groups_count_sites_by_change_outliers_first() {
    let repo = corpus();
    let id = stage(&repo);
    let v = review(&repo, &[&id]);
    assert_eq!(v["sites"], 302, "{v:#}");
    assert_eq!(v["outliers"], 2, "{v:#}");
    assert_eq!(v["derived"], "recorded", "{v:#}");
    let groups = v["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 4, "{v:#}");
    for g in &groups[..2] {
        assert_eq!(g["op"], LOG);
        assert_eq!(g["count"], 1);
        assert_eq!(g["files"], serde_json::json!(["src/odd.js"]));
        assert!(
            g["outlier"]
                .as_str()
                .is_some_and(|w| w.contains("usual change")),
            "{g}"
        );
    }
    assert_eq!(groups[2]["op"], LOG);
    assert_eq!(groups[2]["count"], 200);
    assert_eq!(groups[2]["files"].as_array().map(Vec::len), Some(20));
    assert_eq!(groups[2]["template"], "-console+logger…-log+info…");
    assert!(groups[2]["outlier"].is_null());
    assert_eq!(groups[3]["op"], "console.warn($A) => logger.warn($A)");
    assert_eq!(groups[3]["count"], 100);
    assert_eq!(groups[2]["representative"]["before"], "  console.log(v0);");
    assert_eq!(groups[2]["representative"]["after"], "  logger.info(v0);");
    // The two outliers: the dropped comment and the folded call.
    let reps: Vec<&str> = groups[..2]
        .iter()
        .map(|g| g["representative"]["before"].as_str().expect("before"))
        .collect();
    assert!(reps.contains(&"  console.log(c /* keep */);"), "{reps:?}");
    assert!(
        reps.contains(&"    console.log(\n      d,\n    );"),
        "{reps:?}"
    );
}

#[test]
fn apply_makes_the_accepted_sites_drops_the_rejected_and_leaves_the_undecided_pending() {
    let repo = corpus();
    let id = stage(&repo);
    let v = review(&repo, &[&id]);
    let (log, warn) = (key(&v, 2), key(&v, 3));
    // The comment's outlier rejected by its site's id, the folded call left undecided.
    let comment = (0..2)
        .find(|&i| {
            v["groups"][i]["representative"]["before"]
                .as_str()
                .is_some_and(|b| b.contains("keep"))
        })
        .expect("the comment's group");
    let page = review(&repo, &[&id, "--sites", &key(&v, comment)]);
    let site = page["sites"][0]["id"]
        .as_str()
        .expect("site id")
        .to_string();
    let d = review(
        &repo,
        &[&id, "--accept", &log, "--reject", &site, "--by", "me"],
    );
    assert_eq!(
        (&d["accepted"], &d["rejected"], &d["undecided"]),
        (&200.into(), &1.into(), &101.into())
    );
    assert_eq!(d["by"], "me");
    let shown = repo.run(&["show", &id]).assert_code(0).stdout.clone();
    assert!(
        shown.contains("review: 200 accepted, 1 rejected, 101 undecided (by me)\n"),
        "{shown}"
    );

    let out = repo.run(&["apply", &id]).assert_code(0).stdout.clone();
    assert!(out.contains("applied 200 sites accepted"), "{out}");
    assert!(out.contains("dropped 1 site rejected"), "{out}");
    assert!(
        out.contains("left 101 sites undecided, in 21 files"),
        "{out}"
    );
    // Exactly the accepted hunks: every console.log but odd.js's; no console.warn.
    for i in 0..20 {
        assert_eq!(
            repo.read_string(&format!("src/m{i:02}.js")),
            module(i, "logger.info", "console.warn")
        );
    }
    assert_eq!(repo.read_string("src/odd.js"), ODD);
    // The undecided sites are a pending preview of their own, on top of the applied part.
    let list = repo.run(&["--json", "list"]).assert_code(0).json();
    let previews = list["previews"].as_array().expect("previews");
    assert_eq!(previews.len(), 1, "{list:#}");
    let rest = previews[0]["id"].as_str().expect("id").to_string();
    let r = review(&repo, &[&rest]);
    assert_eq!(r["sites"], 101, "{r:#}");
    repo.run(&["apply", &rest]).assert_code(0);
    for i in 0..20 {
        assert_eq!(
            repo.read_string(&format!("src/m{i:02}.js")),
            module(i, "logger.info", "logger.warn")
        );
    }
    // The rejected comment site was dropped; the folded call was applied with the rest.
    assert_eq!(
        repo.read_string("src/odd.js"),
        "function odd() {\n  console.log(c /* keep */);\n  if (x) {\n    logger.info(d);\n  }\n}\n"
    );
    let _ = warn;
    repo.fsck();
}

#[test]
fn apply_all_ignores_decisions_and_nothing_accepted_is_refused() {
    let repo = corpus();
    let id = stage(&repo);
    review(&repo, &[&id, "--reject", "all"]);
    let out = repo.run(&["--json", "apply", &id]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "nothing-accepted");
    assert_eq!(
        repo.read_string("src/m00.js"),
        module(0, "console.log", "console.warn")
    );
    repo.run(&["apply", &id, "--all"]).assert_code(0);
    assert_eq!(
        repo.read_string("src/m00.js"),
        module(0, "logger.info", "logger.warn")
    );
}

#[test]
fn decisions_survive_a_refresh_after_an_unrelated_commit() {
    let repo = corpus();
    let id = stage(&repo);
    let v = review(&repo, &[&id]);
    let log = key(&v, 2);
    let warn_sites = review(&repo, &[&id, "--sites", &key(&v, 3), "--limit", "1"]);
    let one_warn = warn_sites["sites"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    review(&repo, &[&id, "--accept", &log, "--reject", &one_warn]);
    // Unrelated: a header above m05's function, and a function after it with a call
    // the preview did not see.
    let m05 = format!(
        "// header\n{}\nfunction extra() {{\n  console.log(extra);\n}}\n",
        module(5, "console.log", "console.warn")
    );
    repo.write("src/m05.js", &m05);
    repo.commit_all("unrelated");
    let r = repo.run(&["--json", "refresh", &id]).assert_code(0).json();
    let successor = r["successor"].as_str().expect("successor").to_string();
    let v = review(&repo, &[&successor]);
    assert_eq!(v["sites"], 303, "{v:#}");
    // Every site re-derived the same keeps its decision (m05's, a line lower, too);
    // the new one is undecided.
    assert_eq!(v["accepted"], 200, "{v:#}");
    assert_eq!(v["undecided"], 102, "{v:#}");
    assert_eq!(v["rejected"], 1, "{v:#}");
    assert_eq!(v["obeyed"], true);
    // Until it has decisions of its own, list says whose it inherits, not counts that
    // only a re-derivation could give; a batch of its own counts again.
    let list = repo.run(&["list"]).assert_code(0).stdout.clone();
    assert!(
        list.contains(&format!(
            "    review: decisions inherited from {id} (by terminal)\n"
        )),
        "{list}"
    );
    review(&repo, &[&successor, "--undecide", &one_warn]);
    let row = &repo.run(&["--json", "list"]).assert_code(0).json()["previews"][0]["review"];
    assert_eq!(
        (&row["accepted"], &row["rejected"], &row["undecided"]),
        (&200.into(), &0.into(), &103.into()),
        "{row}"
    );
    assert!(row["inherited_from"].is_null(), "{row}");
}

/// The ids of the pending previews.
pub(crate) fn pending(repo: &TestRepo) -> std::collections::BTreeSet<String> {
    repo.run(&["--json", "list"]).assert_code(0).json()["previews"]
        .as_array()
        .expect("previews")
        .iter()
        .map(|p| p["id"].as_str().expect("id").to_string())
        .collect()
}

/// The ids of every site of preview `id`'s groups (a group's sites paged whole).
fn site_ids(repo: &TestRepo, id: &str, only: &[String]) -> std::collections::BTreeSet<String> {
    let v = review(repo, &[id]);
    let mut out = std::collections::BTreeSet::new();
    for g in v["groups"].as_array().expect("groups") {
        let k = g["key"].as_str().expect("key");
        if !only.is_empty() && !only.iter().any(|o| o == k) {
            continue;
        }
        let sites = review(repo, &[id, "--sites", k, "--limit", "1000"]);
        for s in sites["sites"].as_array().expect("sites") {
            out.insert(s["id"].as_str().expect("id").to_string());
        }
    }
    out
}

fn ids(parts: &serde_json::Value) -> Vec<String> {
    parts
        .as_array()
        .expect("parts")
        .iter()
        .map(|p| p["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn split_replaces_the_preview_by_parts_whose_union_is_the_accepted_set() {
    let repo = corpus();
    let id = stage(&repo);
    let v = review(&repo, &[&id]);
    let (log, warn) = (key(&v, 2), key(&v, 3));
    review(&repo, &[&id, "--accept", &format!("{log},{warn}")]);
    let accepted = site_ids(&repo, &id, &[log.clone(), warn.clone()]);
    assert_eq!(accepted.len(), 300);
    // Per group: two previews, one per accepted group, of 200 and 100 sites, and one of
    // the two undecided outliers of odd.js.
    let s = review(&repo, &[&id, "--split"]);
    crate::contract::validate(&repo, "review", &s);
    let parts = ids(&s["parts"]);
    assert_eq!(parts.len(), 2, "{s:#}");
    let mut counts: Vec<u64> = parts
        .iter()
        .map(|p| {
            let r = review(&repo, &[p]);
            assert_eq!(r["groups"].as_array().map(Vec::len), Some(1), "{r:#}");
            r["sites"].as_u64().expect("sites")
        })
        .collect();
    counts.sort();
    assert_eq!(counts, vec![100, 200]);
    // Site by site, the parts' union is the accepted set, and they share none.
    let mut union = std::collections::BTreeSet::new();
    for p in &parts {
        for site in site_ids(&repo, p, &[]) {
            assert!(union.insert(site), "a site in two parts");
        }
    }
    assert_eq!(union, accepted);
    let rest = s["remainder"]["id"]
        .as_str()
        .expect("remainder")
        .to_string();
    assert_eq!(s["remainder"]["files"], serde_json::json!(["src/odd.js"]));
    let r = review(&repo, &[&rest]);
    assert_eq!(
        (&r["sites"], &r["undecided"]),
        (&2.into(), &2.into()),
        "{r:#}"
    );
    // The preview is replaced by its parts, as a partial apply replaces it.
    let mut want: std::collections::BTreeSet<String> = parts.iter().cloned().collect();
    want.insert(rest.clone());
    assert_eq!(pending(&repo), want);
    let log = repo.run(&["--json", "log"]).assert_code(0).json();
    let split = log["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["event"] == "split" && e["id"] == id.as_str())
        .expect("a split event")
        .clone();
    assert_eq!(
        split["children"].as_array().map(Vec::len),
        Some(3),
        "{split}"
    );
    for p in want {
        repo.run(&["discard", &p]).assert_code(0);
    }

    // Per pathspec: the parts cover disjoint files; applied one after the other they
    // make exactly the accepted sites. The accepted sites no pathspec selects (m1*) and
    // the undecided ones (odd.js) are the remainder, their decisions kept.
    let id = stage(&repo);
    review(
        &repo,
        &[&id, "--accept", &format!("{},{}", key(&v, 2), key(&v, 3))],
    );
    let s = review(&repo, &[&id, "--split", "--", "src/m0*"]);
    let parts = ids(&s["parts"]);
    assert_eq!(parts.len(), 1, "{s:#}");
    repo.run(&["apply", &parts[0]]).assert_code(0);
    for i in 0..10 {
        assert_eq!(
            repo.read_string(&format!("src/m{i:02}.js")),
            module(i, "logger.info", "logger.warn")
        );
    }
    for i in 10..20 {
        assert_eq!(
            repo.read_string(&format!("src/m{i:02}.js")),
            module(i, "console.log", "console.warn")
        );
    }
    assert_eq!(repo.read_string("src/odd.js"), ODD);
    let rest = s["remainder"]["id"]
        .as_str()
        .expect("remainder")
        .to_string();
    assert_eq!(pending(&repo), [rest.clone()].into_iter().collect());
    let r = review(&repo, &[&rest]);
    assert_eq!(
        (&r["sites"], &r["accepted"], &r["undecided"]),
        (&152.into(), &150.into(), &2.into()),
        "{r:#}"
    );
    repo.fsck();
}

#[test]
fn the_text_face_lists_groups_outliers_first() {
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n  console.log(a);\n  console.log(b + 1);\n  console.log(c /* keep */);\n}\n",
    );
    repo.commit_all("init");
    let id = stage(&repo);
    review(&repo, &[&id, "--accept", "all", "--by", "reviewer"]);
    let out = repo.run(&["review", &id, "--text"]);
    out.assert_code(0);
    let text = out.stdout.replace(&id, "<id>");
    let text: String = text
        .lines()
        .map(|l| match l.find("Last decided by reviewer at ") {
            Some(_) => "Last decided by reviewer at <time>",
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("review_text", text);
}

#[test]
fn the_html_file_holds_groups_counts_outliers_and_diffs_and_fetches_nothing() {
    let repo = corpus();
    let id = stage(&repo);
    let v = review(&repo, &[&id]);
    let file = repo.path().join("review.html");
    let out = repo.run(&["review", &id, "--html", file.to_str().expect("path")]);
    out.assert_code(0);
    assert_eq!(out.stdout, "");
    let html = std::fs::read_to_string(&file).expect("html written");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("<b>302</b> sites in <b>4</b> groups, <b>2</b> outliers"),
        "{html}"
    );
    for g in v["groups"].as_array().expect("groups") {
        let key = g["key"].as_str().expect("key");
        assert!(html.contains(&format!("id=\"g-{key}\"")), "{key}");
    }
    assert_eq!(html.matches("class=\"group outlier\"").count(), 2);
    // The representative diff, escaped.
    assert!(
        html.contains("<span class=\"del\">-  console.log(v0);</span>"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"add\">+  logger.info(v0);</span>"),
        "{html}"
    );
    assert!(html.contains("console.log(c /* keep */);"));
    // Nothing runs, nothing is fetched.
    assert!(!html.contains("<script"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("src="));
    assert!(html.contains("default-src 'none'"));
}

#[test]
fn fetched_decisions_are_shown_and_not_obeyed() {
    let repo = corpus();
    let id = stage(&repo);
    let v = review(&repo, &[&id]);
    let log = key(&v, 2);
    // A batch that arrived by fetch: the same shape, not in this repository's record.
    let page = review(&repo, &[&id, "--sites", &log, "--limit", "0"]);
    let sites: serde_json::Map<String, serde_json::Value> = page["sites"]
        .as_array()
        .expect("sites")
        .iter()
        .map(|s| (s["id"].as_str().expect("id").to_string(), "accept".into()))
        .collect();
    let body = serde_json::json!({"preview": id, "sites": sites}).to_string();
    std::fs::write(repo.path().join("decisions.json"), body).expect("write");
    let blob = repo.git(&["hash-object", "-w", "decisions.json"]);
    std::fs::remove_file(repo.path().join("decisions.json")).expect("rm");
    let tree = git_stdin(
        &repo,
        &["mktree"],
        &format!("100644 blob {}\tdecisions.json\n", blob.trim()),
    );
    let commit = repo.git(&["commit-tree", tree.trim(), "-m", "review from elsewhere"]);
    repo.git(&[
        "update-ref",
        &format!("refs/astedit-review/{id}"),
        commit.trim(),
    ]);

    let v = review(&repo, &[&id]);
    assert_eq!(v["accepted"], 200, "shown: {v:#}");
    assert_eq!(v["obeyed"], false);
    assert!(v["batches"][0]["by"]
        .as_str()
        .is_some_and(|b| b.ends_with("(fetched, not obeyed)")));
    // list and show say what was decided, and that it is not obeyed; how many sites
    // are undecided only a re-derivation would tell (the batch's own count is not
    // taken from elsewhere).
    let list = repo.run(&["list"]).assert_code(0).stdout.clone();
    let line = list
        .lines()
        .find(|l| l.starts_with("    review: "))
        .expect("a review line");
    assert!(
        line.starts_with("    review: 200 accepted, 0 rejected (by "),
        "{list}"
    );
    assert!(line.ends_with(" (fetched, not obeyed))"), "{list}");
    let row = &repo.run(&["--json", "list"]).assert_code(0).json()["previews"][0]["review"];
    assert_eq!(
        (&row["accepted"], &row["undecided"], &row["obeyed"]),
        (&200.into(), &serde_json::Value::Null, &false.into()),
        "{row}"
    );
    let shown = repo.run(&["show", &id]).assert_code(0).stdout.clone();
    assert!(shown.contains(line.trim_start()), "{shown}");
    // apply does not obey them: the whole preview is applied, and it says so.
    let out = repo.run(&["apply", &id]).assert_code(0).stdout.clone();
    assert!(out.contains("were not obeyed"), "{out}");
    assert_eq!(
        repo.read_string("src/m00.js"),
        module(0, "logger.info", "logger.warn")
    );
}

fn git_stdin(repo: &TestRepo, args: &[&str], input: &str) -> String {
    use std::io::Write as _;
    let mut cmd = std::process::Command::new("git");
    cmd.args(args).current_dir(repo.path());
    repo.env(&mut cmd);
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("git");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("git");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf8")
}

#[test]
fn the_mcp_tool_returns_groups_and_decides_by_group_under_the_agents_name() {
    let repo = corpus();
    let id = stage(&repo);
    let mut s = crate::mcp::Server::start(&repo);
    s.handshake("2025-06-18", "reviewer-agent");
    let v = s.ok("review", serde_json::json!({"id": id, "max_results": 3}));
    assert_eq!(v["total_groups"], 4, "{v:#}");
    assert_eq!(v["next_offset"], 3, "{v:#}");
    let groups = v["review"]["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 3);
    assert!(groups[0]["outlier"].is_string() && groups[1]["outlier"].is_string());
    assert_eq!(groups[2]["count"], 200);
    let log = groups[2]["key"].as_str().expect("key").to_string();
    // Every site of the 200-site group decided in one call.
    let v = s.ok(
        "review",
        serde_json::json!({"id": id, "decide": [{"target": log, "decision": "accept"}]}),
    );
    assert_eq!(v["decided"]["changed"], 200, "{v:#}");
    assert_eq!(v["review"]["accepted"], 200);
    assert!(v["decided"]["by"]
        .as_str()
        .is_some_and(|b| b.starts_with("reviewer-agent")));
    // A group's sites, paged.
    let v = s.ok(
        "review",
        serde_json::json!({"id": id, "group": log, "max_results": 5}),
    );
    assert_eq!(v["sites"]["total"], 200);
    assert_eq!(v["sites"]["sites"].as_array().map(Vec::len), Some(5));
    assert_eq!(v["next_offset"], 5);
    let bad = s.call(
        "review",
        serde_json::json!({"id": id, "decide": [{"target": "nope", "decision": "reject"}]}),
    );
    assert_eq!(bad["isError"], true);
    s.finish();
    // The batch's author is the agent.
    let who = repo.git(&[
        "log",
        "-1",
        "--format=%an",
        &format!("refs/astedit-review/{id}"),
    ]);
    assert!(who.trim().starts_with("reviewer-agent"), "{who}");
}
