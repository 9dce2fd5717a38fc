//! Integration tests: changes beyond the match (issue 37): imports fixed up in the files
//! a rewrite changes, list elements deleted with their comma, a moved `$$$` capture
//! keeping its layout; checked on the preview's blobs and through `refresh`.

use crate::util::TestRepo;

mod fmt;
mod imports;
mod layout;

fn staged_id(out: &crate::util::Output) -> String {
    out.json()["id"].as_str().expect("an id").to_string()
}

fn blob_at(repo: &TestRepo, id: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")])
}

/// Stages `edit` with `args` in `repo` and returns the preview id.
fn stage(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["edit"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = repo.run(&all);
    out.assert_code(0);
    staged_id(&out)
}

/// The MCP tool takes `edit --selector` too (issue 53 item 6): Python annotations.
#[test]
fn the_mcp_ast_edit_takes_a_selector() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "def f(x: List[int]) -> List[str]:\n    return List[int]\n",
    );
    repo.commit_all("init");
    let op = serde_json::json!([{"pattern": "x: List[$T]", "rewrite": "list[$T]"}]);
    let reply = ast_edit(
        &repo,
        serde_json::json!({"ops": op, "lang": "python", "selector": "generic_type"}),
    );
    let id = reply["result"]["structuredContent"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(
        blob_at(&repo, id, "a.py"),
        "def f(x: list[int]) -> list[str]:\n    return List[int]\n"
    );
    // Without `lang` each language is tried, as `edit --selector` does.
    let reply = ast_edit(
        &repo,
        serde_json::json!({"ops": op, "selector": "generic_type", "paths": ["a.py"]}),
    );
    assert_eq!(reply["result"]["isError"], false, "{reply}");
}

/// `ast_edit` with `arguments`, called on an `mcp` server in `repo`: the reply.
fn ast_edit(repo: &TestRepo, arguments: serde_json::Value) -> serde_json::Value {
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ast_edit", "arguments": arguments}});
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "codemods-test", "version": "1"}}});
    let ready = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    mcp_call(repo, &[init, ready, call], 2)
}

/// Sends `messages` to a `mcp` server in `repo` and returns the reply with `id`
/// (stdin stays open until then: a closed stdin cancels the call).
fn mcp_call(repo: &TestRepo, messages: &[serde_json::Value], id: u64) -> serde_json::Value {
    mcp_call_with(repo, &["mcp"], messages, id)
}

/// [`mcp_call`] to a server started with `argv` (`mcp --allow-run`).
fn mcp_call_with(
    repo: &TestRepo,
    argv: &[&str],
    messages: &[serde_json::Value],
    id: u64,
) -> serde_json::Value {
    use std::io::BufRead as _;
    use std::io::Write as _;
    let mut child = repo
        .command(".", argv)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    for m in messages {
        writeln!(stdin, "{m}").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let reply = stdout
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(&l).ok())
        .find(|v| v["id"] == id)
        .expect("a reply to the call");
    drop(stdin);
    let _ = child.wait();
    reply
}

/// The id of the preview `scan --stage --json` staged.
pub(crate) fn scan_stage(repo: &TestRepo, config: &str) -> String {
    let out = repo.run(&["scan", "--stage", "--config", config, "--json"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let v = out.json();
    v["id"]
        .as_str()
        .or_else(|| v["staged"]["id"].as_str())
        .unwrap_or_else(|| panic!("an id in {v}"))
        .to_string()
}
