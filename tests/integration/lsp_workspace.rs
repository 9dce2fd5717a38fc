//! `git astedit lsp` beyond the open documents: `workspace/diagnostic` over the files
//! `scan` looks at (result ids, so an unchanged file is reported `unchanged`), and a
//! stage-all that a client cancels (`$/cancelRequest`, the cancel of its work-done
//! progress, or dying) stops and stages nothing.

use serde_json::json;
use serde_json::Value;

use crate::lsp::project;
use crate::lsp::uri;
use crate::lsp::Client;
use crate::util::TestRepo;

/// A client that pulls diagnostics.
fn puller(repo: &TestRepo) -> Client {
    Client::initialized(
        repo,
        json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}),
    )
}

/// The workspace report, with `previous` as the client's result ids.
fn workspace(c: &mut Client, previous: &[(String, String)]) -> Vec<Value> {
    let ids: Vec<Value> = previous
        .iter()
        .map(|(uri, id)| json!({"uri": uri, "value": id}))
        .collect();
    let r = c.request("workspace/diagnostic", json!({"previousResultIds": ids}));
    r["result"]["items"].as_array().expect("items").clone()
}

fn report<'a>(items: &'a [Value], uri: &str) -> &'a Value {
    items
        .iter()
        .find(|i| i["uri"] == uri)
        .unwrap_or_else(|| panic!("no report for {uri}: {items:#?}"))
}

fn codes(report: &Value) -> Vec<String> {
    report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

fn result_ids(items: &[Value]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|i| {
            (
                i["uri"].as_str().unwrap().to_string(),
                i["resultId"].as_str().expect("a result id").to_string(),
            )
        })
        .collect()
}

#[test]
fn workspace_diagnostics_cover_the_files_scan_looks_at_and_say_unchanged() {
    let repo = project();
    repo.write(".gitignore", "build/\n");
    repo.write("src/c.js", "console.log(1);\nconsole.log(2);\n");
    repo.write("src/clean.js", "let ok = 1;\n");
    repo.write("build/out.js", "console.log(3);\n");
    repo.commit_all("more");
    // Untracked files are scanned too; ignored ones are not.
    repo.write("src/new.js", "var n = 0;\n");
    let scan = repo.run(&["--json", "scan"]).json();
    let mut c = puller(&repo);
    // An open document is reported from its text, not the disk's.
    let a = uri(&repo, "src/a.js");
    c.open(&a, "javascript", "console.log(a);\nvar x = 1;\n");
    let first = workspace(&mut c, &[]);
    let by_disk = ["src/c.js", "src/new.js"];
    for path in by_disk {
        let r = report(&first, &uri(&repo, path));
        assert_eq!(r["kind"], "full", "{r}");
        assert_eq!(r["version"], Value::Null, "{r}");
        let from_scan: Vec<String> = scan["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["path"] == path)
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(codes(r), from_scan, "{path}");
    }
    assert_eq!(codes(report(&first, &uri(&repo, "src/c.js"))).len(), 2);
    let open = report(&first, &a);
    assert_eq!(open["version"], 1, "{open}");
    assert_eq!(codes(open), ["no-console", "no-var"]);
    let range = &report(&first, &uri(&repo, "src/c.js"))["items"][1]["range"];
    assert_eq!(
        *range,
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 14}})
    );
    let listed: Vec<&str> = first.iter().map(|i| i["uri"].as_str().unwrap()).collect();
    assert!(
        !listed
            .iter()
            .any(|u| u.ends_with("build/out.js") || u.ends_with("clean.js")),
        "{listed:?}"
    );
    assert_eq!(listed.len(), 3, "{listed:?}");

    // The same again: every file unchanged.
    let ids = result_ids(&first);
    let second = workspace(&mut c, &ids);
    assert_eq!(second.len(), 3, "{second:#?}");
    for r in &second {
        assert_eq!(r["kind"], "unchanged", "{r}");
        let held = ids.iter().find(|(u, _)| r["uri"] == u.as_str()).unwrap();
        assert_eq!(r["resultId"], held.1.as_str());
    }

    // A file fixed on disk: an empty full report clears it; the rest is unchanged.
    repo.write("src/c.js", "logger.log(1);\n");
    let third = workspace(&mut c, &ids);
    let c_js = report(&third, &uri(&repo, "src/c.js"));
    assert_eq!(c_js["kind"], "full", "{c_js}");
    assert_eq!(c_js["items"], json!([]));
    assert_eq!(
        report(&third, &uri(&repo, "src/new.js"))["kind"],
        "unchanged"
    );
    assert_eq!(report(&third, &a)["kind"], "unchanged");

    // The document pull says unchanged too when given the id it answered with.
    let d = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": a}}),
    );
    let id = d["result"]["resultId"].as_str().unwrap().to_string();
    let d = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": a}, "previousResultId": id}),
    );
    assert_eq!(d["result"]["kind"], "unchanged", "{d}");
    assert_eq!(c.shutdown(), 0);
}

/// A project whose stage-all waits (the test-only delay before staging each file)
/// until it is cancelled, so that a test can cancel it while it runs.
fn slow_server(repo: &TestRepo) -> Client {
    let mut cmd = repo.command(".", &["lsp"]);
    cmd.env("GIT_ASTEDIT_TEST_STAGE_DELAY_MS", "600000");
    let mut c = Client::spawn(cmd);
    let root = format!("file://{}", repo.path().display());
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": root, "capabilities": {},
               "clientInfo": {"name": "cancelling-test"}}),
    );
    assert!(r["result"]["capabilities"].is_object(), "{r}");
    c.notify("initialized", json!({}));
    c
}

/// Nothing was staged: no preview, no journal entry, files as they were.
fn nothing_staged(repo: &TestRepo) {
    assert!(repo.astedit_refs().is_empty(), "{:?}", repo.astedit_refs());
    let journal = repo.git_output(&["rev-parse", "--verify", "-q", "refs/astedit-journal"]);
    assert_ne!(journal.code, 0, "a journal was written");
    let list = repo.run(&["--json", "list"]).json();
    assert!(!list.to_string().contains("cancelling-test"), "{list}");
    assert_eq!(repo.read_string("src/a.js"), "var x = 1;\n");
    repo.fsck();
}

#[test]
fn a_cancelled_stage_all_answers_cancelled_and_stages_nothing() {
    let repo = project();
    let mut c = slow_server(&repo);
    let id = c.send_request(
        "workspace/executeCommand",
        json!({"command": "astedit.stageAll", "arguments": [], "workDoneToken": "s"}),
    );
    // Running (not cancelled before its turn): its progress has begun.
    c.wait(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin");
    c.notify("$/cancelRequest", json!({"id": id}));
    let r = c.wait(|m| m["id"] == json!(id));
    assert_eq!(r["error"]["code"], -32800, "{r}");
    nothing_staged(&repo);
    // The server goes on.
    let r = c.request("astedit/unknown", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn cancelling_a_stage_alls_progress_stops_it() {
    let repo = project();
    let mut c = slow_server(&repo);
    let id = c.send_request(
        "workspace/executeCommand",
        json!({"command": "astedit.stageAll", "arguments": [], "workDoneToken": "stage-1"}),
    );
    let begun = c.wait(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin");
    assert_eq!(begun["params"]["token"], "stage-1");
    assert_eq!(begun["params"]["value"]["cancellable"], true);
    c.notify(
        "window/workDoneProgress/cancel",
        json!({"token": "stage-1"}),
    );
    let r = c.wait(|m| m["id"] == json!(id));
    assert_eq!(r["error"]["code"], -32800, "{r}");
    let ended = c.wait(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    assert_eq!(ended["params"]["token"], "stage-1");
    nothing_staged(&repo);
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn a_client_that_dies_during_stage_all_leaves_nothing_staged() {
    let repo = project();
    let mut c = slow_server(&repo);
    c.send_request(
        "workspace/executeCommand",
        json!({"command": "astedit.stageAll", "arguments": [], "workDoneToken": 9}),
    );
    c.wait(|m| m["method"] == "$/progress");
    // The end of stdin while it runs: the server stops the staging and ends.
    assert_eq!(c.close(), 0);
    nothing_staged(&repo);
}

/// A server started again on the same rule files takes their plan from the result
/// cache and compiles only the rules of the first document's language, then every
/// rule for a document of another language: the diagnostics are the same as the
/// first server's, in both languages.
#[test]
fn a_restarted_server_compiles_rules_as_documents_need_them() {
    let repo = project();
    repo.write(
        "rules/py.yml",
        "id: no-print\nlanguage: Python\nseverity: info\nmessage: no print\n\
         rule: {pattern: 'print($A)'}\nfix: 'log($A)'\n",
    );
    repo.commit_all("python rule");
    let js = uri(&repo, "src/a.js");
    let py = uri(&repo, "src/p.py");
    let js_text = "console.log(a);\nvar x = 1;\n";
    let py_text = "print(1)\n";
    let mut seen = Vec::new();
    for _ in 0..2 {
        let mut c = Client::initialized(&repo, json!({}));
        c.open(&js, "javascript", js_text);
        let on_js = c.diagnostics(&js);
        let hover = c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": js}, "position": {"line": 0, "character": 2}}),
        );
        let actions = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": js},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
                   "context": {"diagnostics": [], "only": ["quickfix"]}}),
        );
        c.open(&py, "python", py_text);
        let on_py = c.diagnostics(&py);
        seen.push((
            on_js,
            hover["result"].clone(),
            actions["result"].clone(),
            on_py,
        ));
        assert_eq!(c.shutdown(), 0);
    }
    assert_eq!(seen[0].0.len(), 2, "{:#?}", seen[0].0);
    assert_eq!(seen[0].3.len(), 1, "{:#?}", seen[0].3);
    assert_eq!(seen[0].3[0]["code"], "no-print");
    assert!(
        seen[0].1["contents"]["value"].is_string(),
        "{:?}",
        seen[0].1
    );
    assert_eq!(
        seen[0].2.as_array().map(Vec::len),
        Some(1),
        "{:?}",
        seen[0].2
    );
    assert_eq!(seen[0], seen[1]);
}
