// Drives `git astedit lsp` with VS Code's protocol client library
// (vscode-languageserver-protocol, the one the VS Code extension's client is built on):
// the handshake, pushed and pulled diagnostics, a quick fix, stage-all and its undo,
// shutdown. Run by tests/integration/js.rs with ASTEDIT_BIN and ASTEDIT_REPO set (a
// repository holding sgconfig.yml, rules/no-console.yml and src/a.js).
import { spawn } from "node:child_process";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  InitializeRequest,
  InitializedNotification,
  DidOpenTextDocumentNotification,
  PublishDiagnosticsNotification,
  DocumentDiagnosticRequest,
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
console.log(`${checks} lsp checks passed`);
connection.dispose();
