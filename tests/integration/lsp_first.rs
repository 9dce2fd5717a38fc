//! The language server's first start in a project (no plan of its rules in the result
//! cache yet): the first document's diagnostics come from its language's rules alone,
//! compiled before the others; every rule is compiled after them (or after a second
//! without messages), which reports a rule file that does not load and stores the
//! plan a restart reads.

use serde_json::json;
use serde_json::Value;

use crate::lsp::uri;
use crate::lsp::Client;
use crate::util::TestRepo;

const BROKEN_PY: &str = "id: no-print\nlanguage: Python\nrule: {patern: 'print($A)'}\n";
const FIXED_PY: &str = "id: no-print\nlanguage: Python\nrule: {pattern: 'print($A)'}\n";

/// A JavaScript rule that loads beside a Python rule that does not.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/no-console.yml",
        "id: no-console\nlanguage: JavaScript\nseverity: warning\nmessage: console\n\
         rule: {pattern: 'console.log($A)'}\n",
    );
    repo.write("rules/no-print.yml", BROKEN_PY);
    repo.commit_all("project");
    repo
}

#[test]
fn the_first_document_is_checked_before_other_languages_rules_are_compiled() {
    let repo = project();
    let mut c = Client::initialized(&repo, json!({}));
    let js = uri(&repo, "src/e.js");
    c.open(&js, "javascript", "console.log(1);\n");
    // The JavaScript rule alone: the broken Python rule is not compiled yet.
    let first = c.diagnostics(&js);
    assert_eq!(first.len(), 1, "{first:#?}");
    assert_eq!(first[0]["code"], "no-console");
    // Then every rule: the Python file does not load, which is said there, and the
    // document is checked again with no rules, as at a start with that file.
    let rule_uri = uri(&repo, "rules/no-print.yml");
    let broken = c.diagnostics(&rule_uri);
    assert_eq!(broken.len(), 1, "{broken:#?}");
    assert_eq!(broken[0]["code"], "bad-rule", "{broken:#?}");
    assert!(
        broken[0]["message"].as_str().unwrap().contains("no-print"),
        "{broken:#?}"
    );
    assert_eq!(c.diagnostics(&js), Vec::<Value>::new());
    let said = c.wait(|m| m["method"] == "window/showMessage");
    assert!(
        said["params"]["message"]
            .as_str()
            .unwrap()
            .contains("the rules do not load: "),
        "{said}"
    );
    // Repaired: the diagnostic goes and the document has its finding again.
    repo.write("rules/no-print.yml", FIXED_PY);
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": rule_uri, "type": 2}]}),
    );
    assert_eq!(c.diagnostics(&rule_uri), Vec::<Value>::new());
    assert_eq!(c.diagnostics(&js).len(), 1);
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn rules_that_do_not_load_are_said_with_no_document_open() {
    let repo = project();
    let mut c = Client::initialized(&repo, json!({}));
    // Nothing opened: the rules are compiled once the server has been idle a while.
    let broken = c.diagnostics(&uri(&repo, "rules/no-print.yml"));
    assert_eq!(broken.len(), 1, "{broken:#?}");
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn the_plan_is_stored_once_every_rule_compiled() {
    let repo = project();
    repo.write("rules/no-print.yml", FIXED_PY);
    let cache = repo.path().join(".git/astedit/cache");
    let buckets = || {
        std::fs::read_dir(&cache)
            .map(|d| d.filter_map(Result::ok).count())
            .unwrap_or(0)
    };
    let mut c = Client::initialized(&repo, json!({}));
    let js = uri(&repo, "src/e.js");
    c.open(&js, "javascript", "console.log(1);\n");
    assert_eq!(c.diagnostics(&js).len(), 1);
    // Messages are handled in order: the rules settled before the shutdown's answer.
    assert_eq!(c.shutdown(), 0);
    assert_eq!(buckets(), 1, "the rules' plan in {}", cache.display());
    // A restart reads it and gives the same diagnostics, a Python document's too.
    let mut c = Client::initialized(&repo, json!({}));
    c.open(&js, "javascript", "console.log(1);\n");
    let again = c.diagnostics(&js);
    assert_eq!(again.len(), 1, "{again:#?}");
    let py = uri(&repo, "src/e.py");
    c.open(&py, "python", "print(1)\n");
    assert_eq!(c.diagnostics(&py).len(), 1);
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn a_document_of_another_language_gets_every_rule() {
    let repo = project();
    repo.write("rules/no-print.yml", FIXED_PY);
    let mut c = Client::initialized(&repo, json!({}));
    let js = uri(&repo, "src/e.js");
    let py = uri(&repo, "src/e.py");
    // In one write: the second document comes (most often) before the rules are
    // settled, and its language's rules are compiled then.
    let frame = |uri: &str, lang: &str, text: &str| {
        let body = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params":
            {"textDocument": {"uri": uri, "languageId": lang, "version": 1, "text": text}}})
        .to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    };
    let both = frame(&js, "javascript", "console.log(1);\n")
        + &frame(&py, "python", "print(1)\nprint(2)\n");
    c.send_bytes(both.as_bytes());
    assert_eq!(c.diagnostics(&js).len(), 1);
    assert_eq!(c.diagnostics(&py).len(), 2);
    // Hover on a rule compiled either way.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": py}, "position": {"line": 0, "character": 1}}),
    );
    assert!(
        h["result"]["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("no-print"),
        "{h}"
    );
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn a_document_is_decoded_from_its_message_once_and_bad_ones_are_dropped() {
    let repo = project();
    repo.write("rules/no-print.yml", FIXED_PY);
    let mut c = Client::initialized(&repo, json!({}));
    let js = uri(&repo, "src/e.js");
    // Parameters that do not decode (no version): dropped, as before.
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": js, "languageId": "javascript", "text": "x"}}),
    );
    // Sent as a request: not a method the server serves.
    let r = c.request(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": js, "languageId": "javascript", "version": 1, "text": "x"}}),
    );
    assert_eq!(r["error"]["code"], -32601, "{r}");
    // Escapes decode: quotes, a line break, a tab, non-ASCII as \u escapes (a
    // surrogate pair), the method after the parameters.
    let text = "const s = \"\u{1F600}\\\"\";\tconsole.log(s);\nconsole.log(2);\n";
    let params = json!({"textDocument": {"uri": js, "languageId": "javascript", "version": 3, "text": text}});
    let body = format!(
        "{{\"params\":{},\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\"}}",
        escape_non_ascii(&params.to_string())
    );
    c.send_bytes(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    let d = c.diagnostics(&js);
    assert_eq!(d.len(), 2, "{d:#?}");
    // After "const s = \"😀\\\"\";\t": 😀 is two UTF-16 units.
    assert_eq!(d[0]["range"]["start"], json!({"line": 0, "character": 18}));
    assert_eq!(d[1]["range"]["start"], json!({"line": 1, "character": 0}));
    assert_eq!(c.shutdown(), 0);
}

/// JSON text with every non-ASCII character written as `\u` escapes.
fn escape_non_ascii(json: &str) -> String {
    let mut out = String::new();
    for ch in json.chars() {
        if ch.is_ascii() {
            out.push(ch);
        } else {
            let mut units = [0u16; 2];
            for u in ch.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}
