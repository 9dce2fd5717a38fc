//! `git astedit lsp` driven by a real editor: headless neovim (Debian's 0.7, whose
//! client is `vim.lsp.start_client` + `buf_attach_client`). It reads the diagnostics
//! neovim holds, requests a code action and applies its edit with neovim's own
//! function, runs stage-all, sees `git astedit list` show the preview, applies it and
//! undoes it. `.ci/run` installs neovim and sets ASTEDIT_REQUIRE_NVIM=1; elsewhere
//! the test is skipped without it.

use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use serde_json::Value;

use crate::lsp::project;
use crate::util::bin;
use crate::util::TestRepo;

/// The client script of [`neovim_shows_fixes_stages_applies_and_undoes`]: every step's
/// result goes into `out` (see [`EPILOGUE`]).
const SCRIPT: &str = r#"
local out = {}
local function main()
  local bin, root = vim.env.ASTEDIT_BIN, vim.env.ASTEDIT_ROOT
  local id = vim.lsp.start_client({
    name = 'git-astedit',
    cmd = { bin, 'lsp' },
    root_dir = root,
    handlers = { ['window/showMessage'] = function() end },
  })
  vim.cmd('edit ' .. root .. '/src/n.js')
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, id)
  local client = vim.lsp.get_client_by_id(id)
  out.waited = vim.wait(60000, function() return #vim.diagnostic.get(buf) >= 2 end, 50)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(out.diagnostics, {
      code = d.code, lnum = d.lnum, col = d.col, end_col = d.end_col,
      severity = d.severity, source = d.source, message = d.message,
    })
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 200 } },
    context = { diagnostics = {}, only = { 'quickfix' } },
  }
  local resp = client.request_sync('textDocument/codeAction', params, 30000, buf)
  out.titles = {}
  local chosen
  for _, a in ipairs(resp.result or {}) do
    table.insert(out.titles, a.title)
    if not chosen and a.title:find('^Fix `no%-console`') then chosen = a end
  end
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
  out.line = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  -- Saved before the preview is applied: a buffer with unsaved edits refuses it.
  vim.cmd('write')
  local staged = client.request_sync('workspace/executeCommand',
    { command = 'astedit.stageAll', arguments = {} }, 60000, buf)
  out.staged = staged.result
  out.list = vim.fn.system({ bin, '--json', 'list' })
  local applied = client.request_sync('workspace/executeCommand',
    { command = 'astedit.apply', arguments = { staged.result.id } }, 60000, buf)
  out.applied = applied.result ~= nil and applied.err == nil
  out.disk_after_apply = table.concat(vim.fn.readfile(root .. '/src/a.js'), '\n')
  local undone = client.request_sync('workspace/executeCommand',
    { command = 'astedit.undo', arguments = {} }, 60000, buf)
  out.undone = undone.result ~= nil and undone.err == nil
  out.disk_after_undo = table.concat(vim.fn.readfile(root .. '/src/a.js'), '\n')
  out.log = vim.fn.system({ bin, '--json', 'log' })
  client.stop()
end
"#;

fn nvim() -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("nvim"))
            .find(|p| p.is_file())
    })
}

/// How every client script ends: `main`'s results (and its error, if any) go into
/// the JSON file the test reads, and neovim always quits.
const EPILOGUE: &str = r#"
local ok, err = pcall(main)
out.ok = ok
out.err = err and tostring(err) or nil
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.ASTEDIT_OUT)
vim.cmd('qa!')
"#;

/// The results neovim's run of the client script `lua` (a `main` filling `out`,
/// then [`EPILOGUE`]) in `repo` wrote (`None`: no neovim here, and none required).
fn run(repo: &TestRepo, lua: &str) -> Option<Value> {
    let Some(nvim) = nvim() else {
        assert!(
            std::env::var_os("ASTEDIT_REQUIRE_NVIM").is_none(),
            "neovim is required but not on PATH"
        );
        eprintln!("skipped: no nvim on PATH");
        return None;
    };
    let state = tempfile::tempdir().unwrap();
    let script = state.path().join("client.lua");
    std::fs::write(&script, format!("{lua}{EPILOGUE}")).unwrap();
    let out_file = state.path().join("out.json");
    let mut cmd = std::process::Command::new(nvim);
    repo.env(&mut cmd);
    cmd.current_dir(repo.path())
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("ASTEDIT_BIN", bin())
        .env("ASTEDIT_ROOT", repo.path())
        .env("ASTEDIT_OUT", &out_file)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_DATA_HOME", state.path())
        .env("XDG_CACHE_HOME", state.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start nvim");
    let deadline = Instant::now() + Duration::from_secs(300);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("neovim did not finish");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&out_file).expect("the script wrote its results");
    Some(serde_json::from_str(&text).unwrap())
}

#[test]
fn neovim_shows_fixes_stages_applies_and_undoes() {
    let repo = project();
    // 😀 is two UTF-16 units and four bytes: neovim turns the server's UTF-16
    // columns into byte columns.
    repo.write("src/n.js", "let s = \"😀\"; console.log(s);\nvar z = 2;\n");
    repo.commit_all("n");
    let Some(out) = run(&repo, SCRIPT) else {
        return;
    };
    assert_eq!(out["ok"], true, "{out:#}");
    assert_eq!(out["waited"], true, "{out:#}");
    let diagnostics = out["diagnostics"].as_array().unwrap();
    let console = diagnostics
        .iter()
        .find(|d| d["code"] == "no-console")
        .unwrap_or_else(|| panic!("{out:#}"));
    // Byte column of `console` after `let s = "😀"; `.
    assert_eq!(console["col"], "let s = \"😀\"; ".len(), "{out:#}");
    assert_eq!(console["lnum"], 0);
    assert_eq!(console["severity"], 2, "warning: {out:#}");
    assert_eq!(console["source"], "git-astedit");
    assert!(diagnostics
        .iter()
        .any(|d| d["code"] == "no-var" && d["lnum"] == 1));
    assert_eq!(out["line"], "let s = \"😀\"; logger.log(s);", "{out:#}");
    let id = out["staged"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{out:#}"));
    assert!(out["list"].as_str().unwrap().contains(id), "{out:#}");
    assert_eq!(out["applied"], true, "{out:#}");
    assert_eq!(out["disk_after_apply"], "let x = 1", "{out:#}");
    assert_eq!(out["undone"], true, "{out:#}");
    assert_eq!(out["disk_after_undo"], "var x = 1;", "{out:#}");
    // Journalled with the editor's name.
    assert!(out["log"].as_str().unwrap().contains("Neovim"), "{out:#}");
}

/// The client script of [`buffers_follow_apply_and_undo`]: `src/a.js` open while a
/// preview that changes it is applied, undone, and applied over unsaved edits.
const BUFFERS: &str = r#"
local out = { messages = {} }
local function text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end
local function codes(buf)
  local t = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(t, d.code) end
  table.sort(t)
  return table.concat(t, ',')
end
local function main()
  local bin, root = vim.env.ASTEDIT_BIN, vim.env.ASTEDIT_ROOT
  local disk = function() return table.concat(vim.fn.readfile(root .. '/src/a.js'), '\n') end
  local id = vim.lsp.start_client({
    name = 'git-astedit',
    cmd = { bin, 'lsp' },
    root_dir = root,
    handlers = { ['window/showMessage'] = function(_, r) table.insert(out.messages, r.message) end },
  })
  vim.cmd('edit ' .. root .. '/src/a.js')
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, id)
  local client = vim.lsp.get_client_by_id(id)
  out.before = vim.wait(60000, function() return codes(buf) == 'no-var' end, 50)
  local function run(command, args)
    local r = client.request_sync('workspace/executeCommand',
      { command = command, arguments = args }, 60000, buf)
    return r.result, r.err and r.err.message or nil
  end
  local staged = run('astedit.stageAll', {})
  local pid = staged.id
  out.pid = pid
  local _, err = run('astedit.apply', { pid })
  out.apply_err = err
  out.disk_after_apply = disk()
  out.followed_apply = vim.wait(30000, function() return text(buf) == out.disk_after_apply end, 50)
  out.buffer_after_apply = text(buf)
  out.modified_after_apply = vim.bo[buf].modified
  out.fresh_after_apply = vim.wait(30000, function() return codes(buf) == '' end, 50)
  _, err = run('astedit.undo', {})
  out.undo_err = err
  out.disk_after_undo = disk()
  out.followed_undo = vim.wait(30000, function() return text(buf) == out.disk_after_undo end, 50)
  out.buffer_after_undo = text(buf)
  out.fresh_after_undo = vim.wait(30000, function() return codes(buf) == 'no-var' end, 50)
  local actions = client.request_sync('textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
    context = { diagnostics = {}, only = { 'source.astedit' } },
  }, 30000, buf)
  out.titles = {}
  for _, a in ipairs(actions.result or {}) do table.insert(out.titles, a.title) end
  -- An unsaved edit (the server has it once its diagnostics show it).
  vim.api.nvim_buf_set_lines(buf, 1, 1, false, { 'console.log(x);' })
  out.edited = vim.wait(30000, function() return codes(buf) == 'no-console,no-var' end, 50)
  _, err = run('astedit.apply', { pid })
  out.refused = err
  out.disk_after_refusal = disk()
  out.buffer_after_refusal = text(buf)
  client.stop()
end
"#;

/// Apply and undo from the editor change the open buffer of the file they write
/// (`workspace/applyEdit`) and its diagnostics follow; undo offers the apply again;
/// an apply over a buffer with unsaved edits is refused, naming the file, and
/// writes nothing.
#[test]
fn buffers_follow_apply_and_undo() {
    let repo = project();
    let Some(out) = run(&repo, BUFFERS) else {
        return;
    };
    assert_eq!(out["ok"], true, "{out:#}");
    assert_eq!(out["before"], true, "{out:#}");
    assert_eq!(out["apply_err"], Value::Null, "{out:#}");
    assert_eq!(out["disk_after_apply"], "let x = 1", "{out:#}");
    assert_eq!(out["followed_apply"], true, "{out:#}");
    // Neovim marks a buffer changed by the server as modified until it is saved.
    assert_eq!(out["modified_after_apply"], true, "{out:#}");
    assert_eq!(out["fresh_after_apply"], true, "{out:#}");
    assert_eq!(out["undo_err"], Value::Null, "{out:#}");
    assert_eq!(out["disk_after_undo"], "var x = 1;", "{out:#}");
    assert_eq!(out["followed_undo"], true, "{out:#}");
    assert_eq!(out["fresh_after_undo"], true, "{out:#}");
    let pid = out["pid"].as_str().unwrap();
    let titles = out["titles"].as_array().unwrap();
    assert!(
        titles.iter().any(|t| *t == format!("Apply preview {pid}")),
        "{out:#}"
    );
    assert_eq!(out["edited"], true, "{out:#}");
    let refused = out["refused"].as_str().unwrap_or_else(|| panic!("{out:#}"));
    assert!(refused.contains("src/a.js"), "{out:#}");
    assert!(refused.contains("unsaved"), "{out:#}");
    assert_eq!(out["disk_after_refusal"], "var x = 1;", "{out:#}");
    assert_eq!(
        out["buffer_after_refusal"], "var x = 1;\nconsole.log(x);",
        "{out:#}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("src/a.js")).unwrap(),
        "var x = 1;\n"
    );
}
