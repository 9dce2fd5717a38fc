// Drives `git astedit lsp` with VS Code's protocol client library
// (vscode-languageserver-protocol, the one the VS Code extension's client is built on):
// the handshake, pushed and pulled diagnostics (the workspace's too, with result ids), a
// quick fix, stage-all and its undo, a stage-all cancelled through the library's
// cancellation token (nothing staged), shutdown. Run by tests/integration/js.rs with ASTEDIT_BIN and ASTEDIT_REPO set (a
// repository holding sgconfig.yml, rules/no-console.yml and src/a.js).
import { spawn } from "node:child_process";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  InitializeRequest,
  InitializedNotification,
  DidOpenTextDocumentNotification,
  DidCloseTextDocumentNotification,
  PublishDiagnosticsNotification,
  DocumentDiagnosticRequest,
  WorkspaceDiagnosticRequest,
  CancellationTokenSource,
  WorkDoneProgress,
  ErrorCodes,
  CodeActionRequest,
  ExecuteCommandRequest,
  ShutdownRequest,
  ExitNotification,
} from "vscode-languageserver-protocol/node.js";

const bin = process.env.ASTEDIT_BIN;
const repo = process.env.ASTEDIT_REPO;
const server = spawn(bin, ["lsp"], { cwd: repo, stdio: ["pipe", "pipe", "inherit"] });
const connection = createProtocolConnection(
  new StreamMessageReader(server.stdout),
  new StreamMessageWriter(server.stdin),
);
const pushed = new Map();
const waiting = new Map();
connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
  pushed.set(p.uri, p.diagnostics);
  waiting.get(p.uri)?.(p.diagnostics);
});
connection.onNotification("window/showMessage", () => {});
connection.listen();
const diagnosticsOf = (uri) =>
  new Promise((resolve) => {
    if (pushed.has(uri)) resolve(pushed.get(uri));
    else waiting.set(uri, resolve);
  });

let checks = 0;
const check = (f) => {
  f();
  checks += 1;
};

const init = await connection.sendRequest(InitializeRequest.type, {
  processId: process.pid,
  rootUri: `file://${repo}`,
  capabilities: {},
  clientInfo: { name: "vscode-protocol-test", version: "3.17" },
});
check(() => assert.equal(init.serverInfo.name, "git-astedit"));
check(() => assert.ok(init.capabilities.executeCommandProvider.commands.includes("astedit.stageAll")));
check(() => assert.equal(init.capabilities.textDocumentSync.change, 2));
await connection.sendNotification(InitializedNotification.type, {});

const uri = `file://${repo}/src/a.js`;
const text = 'const s = "😀"; console.log(s);\n';
await connection.sendNotification(DidOpenTextDocumentNotification.type, {
  textDocument: { uri, languageId: "javascript", version: 1, text },
});
const diagnostics = await diagnosticsOf(uri);
check(() => assert.equal(diagnostics.length, 1));
check(() => assert.equal(diagnostics[0].code, "no-console"));
// `console` after `const s = "😀"; `: 15 characters, 16 UTF-16 units.
check(() => assert.deepEqual(diagnostics[0].range.start, { line: 0, character: 16 }));

const pulled = await connection.sendRequest(DocumentDiagnosticRequest.type, {
  textDocument: { uri },
});
check(() => assert.equal(pulled.kind, "full"));
check(() => assert.deepEqual(pulled.items, diagnostics));

// The workspace's diagnostics: the open document from its text (with its version);
// asked again with the result ids it gave, everything is unchanged.
const workspace = await connection.sendRequest(WorkspaceDiagnosticRequest.type, {
  previousResultIds: [],
});
const mine = workspace.items.find((i) => i.uri === uri);
check(() => assert.equal(mine.kind, "full"));
check(() => assert.equal(mine.version, 1));
check(() => assert.deepEqual(mine.items, diagnostics));
const again = await connection.sendRequest(WorkspaceDiagnosticRequest.type, {
  previousResultIds: workspace.items.map((i) => ({ uri: i.uri, value: i.resultId })),
});
check(() => assert.ok(again.items.every((i) => i.kind === "unchanged")));
check(() => assert.equal(again.items.length, workspace.items.length));

const actions = await connection.sendRequest(CodeActionRequest.type, {
  textDocument: { uri },
  range: diagnostics[0].range,
  context: { diagnostics, only: ["quickfix"] },
});
const fix = actions.find((a) => a.title.startsWith("Fix `no-console`"));
check(() => assert.deepEqual(fix.edit.changes[uri], [
  { range: { start: { line: 0, character: 16 }, end: { line: 0, character: 30 } }, newText: "logger.log(s)" },
]));

const staged = await connection.sendRequest(ExecuteCommandRequest.type, {
  command: "astedit.stageAll",
  arguments: [],
});
check(() => assert.match(staged.id, /^[0-9a-f]+/));
// The open document's text is not the file's (unsaved edits): an apply that would write
// the file behind it is refused and writes nothing; once the editor closes (reverts) it,
// the apply goes through.
await assert.rejects(
  connection.sendRequest(ExecuteCommandRequest.type, { command: "astedit.apply", arguments: [staged.id] }),
  /src\/a\.js has unsaved changes in the editor/,
);
checks += 1;
check(() => assert.equal(readFileSync(`${repo}/src/a.js`, "utf8"), "console.log(1);\n"));
await connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
const applied = await connection.sendRequest(ExecuteCommandRequest.type, {
  command: "astedit.apply",
  arguments: [staged.id],
});
check(() => assert.equal(applied.action, "applied"));
check(() => assert.equal(readFileSync(`${repo}/src/a.js`, "utf8"), "logger.log(1);\n"));
await connection.sendRequest(ExecuteCommandRequest.type, { command: "astedit.undo", arguments: [] });
check(() => assert.equal(readFileSync(`${repo}/src/a.js`, "utf8"), "console.log(1);\n"));

// An unknown command is an error the client sees, not a crash.
await assert.rejects(
  connection.sendRequest(ExecuteCommandRequest.type, { command: "astedit.nope", arguments: [] }),
);
checks += 1;

await connection.sendRequest(ShutdownRequest.type);
await connection.sendNotification(ExitNotification.type);
const code = await new Promise((resolve) => server.on("exit", resolve));
check(() => assert.equal(code, 0));
connection.dispose();

// A stage-all the client cancels while it runs (a server whose staging waits, by the
// test-only delay, until it is cancelled): RequestCancelled, nothing staged.
const slow = spawn(bin, ["lsp"], {
  cwd: repo,
  stdio: ["pipe", "pipe", "inherit"],
  env: { ...process.env, GIT_ASTEDIT_TEST_STAGE_DELAY_MS: "600000" },
});
const second = createProtocolConnection(
  new StreamMessageReader(slow.stdout),
  new StreamMessageWriter(slow.stdin),
);
let begun;
const started = new Promise((resolve) => (begun = resolve));
second.onProgress(WorkDoneProgress.type, "stage", (value) => {
  if (value.kind === "begin") begun({ value });
});
second.onNotification("window/showMessage", () => {});
second.listen();
await second.sendRequest(InitializeRequest.type, {
  processId: process.pid,
  rootUri: `file://${repo}`,
  capabilities: {},
  clientInfo: { name: "vscode-protocol-test", version: "3.17" },
});
await second.sendNotification(InitializedNotification.type, {});
const refsOf = () =>
  execFileSync("git", ["for-each-ref", "refs/astedit/"], { cwd: repo, encoding: "utf8" });
const refsBefore = refsOf();
const source = new CancellationTokenSource();
const staging = second.sendRequest(
  ExecuteCommandRequest.type,
  { command: "astedit.stageAll", arguments: [], workDoneToken: "stage" },
  source.token,
);
const progress = await started;
check(() => assert.equal(progress.value.cancellable, true));
source.cancel();
await assert.rejects(staging, (e) => e.code === ErrorCodes.RequestCancelled || e.code === -32800);
checks += 1;
check(() => assert.equal(refsOf(), refsBefore));
check(() => assert.equal(readFileSync(`${repo}/src/a.js`, "utf8"), "console.log(1);\n"));
await second.sendRequest(ShutdownRequest.type);
await second.sendNotification(ExitNotification.type);
const secondCode = await new Promise((resolve) => slow.on("exit", resolve));
check(() => assert.equal(secondCode, 0));
console.log(`${checks} lsp checks passed`);
second.dispose();
