//! Unbounded inputs of issue 48 item 11, built as the attack was: the language server
//! given a document larger than scan reads, or one with a flood of findings; a preview
//! whose recipe was forged to record `max_passes = 2^64-1`.

use serde_json::json;
use serde_json::Value;

use crate::lsp::project;
use crate::lsp::uri;
use crate::lsp::Client;
use crate::util::TestRepo;

/// Starts the server with `args` and runs the handshake.
fn server(repo: &TestRepo, args: &[&str]) -> Client {
    let mut c = Client::start(repo, args);
    let root = format!("file://{}", repo.path().display());
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": root, "capabilities": {},
               "clientInfo": {"name": "bounds-test", "version": "1"}}),
    );
    assert!(r["result"]["capabilities"].is_object(), "{r}");
    c.notify("initialized", json!({}));
    c
}

#[test]
fn a_document_over_the_size_bound_gets_one_diagnostic_and_no_parse() {
    let repo = project();
    // 5 MB of findings: over the 4 MiB bound scan skips files at.
    let line = "console.log(1);\n";
    let big = line.repeat(5 * 1024 * 1024 / line.len() + 1);
    let mut c = Client::initialized(&repo, json!({}));
    let a = uri(&repo, "src/big.js");
    c.open(&a, "javascript", &big);
    let got = c.diagnostics(&a);
    assert_eq!(got.len(), 1, "{:?}", got.first());
    assert_eq!(got[0]["code"], "file-too-large", "{:#}", got[0]);
    let message = got[0]["message"].as_str().unwrap_or("");
    assert!(message.contains(&big.len().to_string()), "{message}");
    // A quick fix of it makes nothing.
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": a},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
               "context": {"diagnostics": []}}),
    );
    let edits = r["result"].to_string();
    assert!(!edits.contains("logger.log"), "{edits}");
    // A change that brings it under the bound is checked again.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 2}, "contentChanges": [{"text": line}]}),
    );
    let got = c.diagnostics(&a);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["code"], "no-console");
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn the_size_bound_follows_max_filesize_and_the_findings_are_capped() {
    let repo = project();
    let line = "console.log(1);\n";
    // 1,500 findings in 24 KB: under the default bound, over --max-filesize 10000.
    let many = line.repeat(1500);
    let mut c = server(&repo, &["--max-filesize", "10000"]);
    let a = uri(&repo, "src/many.js");
    c.open(&a, "javascript", &many);
    let got = c.diagnostics(&a);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["code"], "file-too-large", "{:#}", got[0]);
    assert_eq!(c.shutdown(), 0);
    // Default bound: 1,000 diagnostics, then one saying how many were left out.
    let mut c = Client::initialized(&repo, json!({}));
    c.open(&a, "javascript", &many);
    let got: Vec<Value> = c.diagnostics(&a);
    assert_eq!(got.len(), 1001);
    assert!(got[..1000].iter().all(|d| d["code"] == "no-console"));
    assert_eq!(got[1000]["code"], "too-many-findings", "{:#}", got[1000]);
    assert!(
        got[1000]["message"]
            .as_str()
            .unwrap_or("")
            .contains("500 more"),
        "{:#}",
        got[1000]
    );
    assert_eq!(c.shutdown(), 0);
    // The same file on disk, pulled with workspace/diagnostic: capped the same way.
    repo.write("src/many.js", &many);
    let mut c = Client::initialized(&repo, json!({}));
    let r = c.request("workspace/diagnostic", json!({"previousResultIds": []}));
    let items = r["result"]["items"].as_array().expect("items").clone();
    let file = items
        .iter()
        .find(|i| i["uri"] == a.as_str())
        .unwrap_or_else(|| panic!("no report for {a}: {r}"));
    let got = file["items"].as_array().expect("diagnostics");
    assert_eq!(got.len(), 1001);
    assert_eq!(got[1000]["code"], "too-many-findings", "{:#}", got[1000]);
    assert_eq!(c.shutdown(), 0);
    // Above scan's ceiling: refused at start, as scan refuses it.
    let out = repo.run(&["lsp", "--max-filesize", "100000000"]);
    out.assert_code(2);
    assert!(out.stderr.contains("ceiling"), "{}", out.stderr);
}

/// Runs `git-astedit args`, killed (and the test failed) if it is still running after
/// `PATIENCE`: a bound that does not hold is a hang.
fn run_or_hang(repo: &TestRepo, args: &[&str]) -> crate::util::Output {
    const PATIENCE: std::time::Duration = std::time::Duration::from_secs(300);
    let mut child = repo
        .command(".", args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still ran after {PATIENCE:?}: the pass bound did not hold");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    crate::util::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn max_passes_is_bounded_in_the_flag_the_config_and_a_forged_recipe() {
    let repo = TestRepo::new();
    // Two rules that undo each other: the rounds end only at the pass bound.
    let rules = "[[rules]]\nid = \"ab\"\nlanguage = \"javascript\"\nrule.pattern = \"a($X)\"\n\
                 fix = \"b($X)\"\n\n[[rules]]\nid = \"ba\"\nlanguage = \"javascript\"\n\
                 rule.pattern = \"b($X)\"\nfix = \"a($X)\"\n\n[[rules]]\nid = \"cd\"\n\
                 language = \"javascript\"\nrule.pattern = \"c($X)\"\nfix = \"d($X)\"\n";
    repo.write("astedit.toml", rules);
    repo.write("x.js", "c(1);\n");
    repo.commit_all("init");
    // The flag and the config refuse more than 100.
    let out = repo.run(&["--json", "scan", "--check", "--max-passes", "101"]);
    out.assert_code(2);
    assert!(out.stdout.contains("1 to 100"), "{}", out.stdout);
    repo.write("astedit.toml", format!("max-passes = 1000\n{rules}"));
    let out = repo.run(&["--json", "scan", "--check"]);
    out.assert_code(2);
    assert!(out.stdout.contains("1 to 100"), "{}", out.stdout);
    repo.write("astedit.toml", rules);
    let out = repo.run(&["--json", "scan", "--stage"]);
    let id = out.json()["id"].as_str().expect("staged").to_string();
    // A recipe forged to run 2^64-1 passes: not re-run (said why), and over.
    let forged = crate::provenance::forge(&repo, &id, |meta| {
        meta["details"]["refresh"]["max_passes"] = json!(u64::MAX);
    });
    repo.write("y.js", "a(2);\n");
    let out = run_or_hang(&repo, &["--json", "refresh", "--all", &forged]);
    assert!(
        out.stdout.contains("max_passes = 18446744073709551615"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
}
