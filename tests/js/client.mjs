// Drives `git astedit mcp` with the official MCP TypeScript SDK client over stdio, as a
// real agent host would, and checks every tool's schemas under Ajv 2020 strict mode.
//
// Run by tests/integration/js.rs, which makes the repository and sets:
//   ASTEDIT_BIN   the git-astedit binary
//   ASTEDIT_REPO  a git repository holding src/a.rs and src/b.rs (committed)
// Exits 0 when every check passed; otherwise prints the failed check and exits 1.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv2020 from "ajv/dist/2020.js";

// Every warning anyone prints (Ajv, the SDK's own validator) is a failure: the
// schemas must compile cleanly, not merely compile.
const warnings = [];
console.warn = (...args) => warnings.push(args.map(String).join(" "));

const bin = process.env.ASTEDIT_BIN;
const repo = process.env.ASTEDIT_REPO;
assert.ok(bin && repo, "ASTEDIT_BIN and ASTEDIT_REPO must be set");

const read = (p) => fs.readFileSync(path.join(repo, p), "utf8");
const git = (...args) => execFileSync("git", args, { cwd: repo, encoding: "utf8" });

let checks = 0;
const check = (what, fn) => {
  try {
    fn();
    checks += 1;
  } catch (e) {
    throw new Error(`check failed: ${what}: ${e.message}`, { cause: e });
  }
};

// Strict: unknown keywords and formats, union types, ignored keywords, required
// properties that are not defined — all errors, not warnings.
const ajv = new Ajv2020({ strict: true });
const validators = new Map();

const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp"],
  cwd: repo,
  env: { ...process.env },
  stderr: "pipe",
});
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);

try {
  check("server info", () => {
    assert.equal(client.getServerVersion()?.name, "git-astedit");
    assert.ok(client.getServerCapabilities()?.tools, "tools capability");
  });

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check("tool list", () => {
    for (const n of ["ast_grep", "ast_edit", "apply_patch", "previews", "resolve", "undo", "pr", "read", "edit_lines", "replace", "write", "ast_apply"]) {
      assert.ok(names.includes(n), `no tool ${n} in ${names}`);
    }
    const pr = tools.find((t) => t.name === "pr");
    assert.equal(pr.annotations?.openWorldHint, true);
    assert.equal(pr.annotations?.destructiveHint, true);
  });

  for (const tool of tools) {
    check(`${tool.name} inputSchema compiles in strict mode`, () => {
      ajv.compile(tool.inputSchema);
    });
    check(`${tool.name} outputSchema compiles in strict mode`, () => {
      assert.ok(tool.outputSchema, "has an outputSchema");
      validators.set(tool.name, ajv.compile(tool.outputSchema));
    });
  }

  // Calls a tool; the SDK validates structuredContent against the outputSchema
  // itself; we validate again with the strict validator.
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    if (!result.isError) {
      const validate = validators.get(name);
      check(`${name} output validates`, () => {
        assert.ok(validate(result.structuredContent), JSON.stringify(validate.errors));
      });
    }
    return result;
  };
  const ok = async (name, args) => {
    const result = await call(name, args);
    assert.equal(result.isError ?? false, false, `${name} failed: ${result.content?.[0]?.text}`);
    return result.structuredContent;
  };

  const before = read("src/a.rs");
  const grep = await ok("ast_grep", { pattern: "foo($A)" });
  check("ast_grep", () => {
    assert.equal(grep.total, 3);
    assert.equal(grep.matches[0].path, "src/a.rs");
    assert.equal(grep.matches[0].line, 1);
  });
  const paged = await ok("ast_grep", { pattern: "foo($A)", limit: 1, offset: 1 });
  check("ast_grep paging", () => {
    assert.equal(paged.matches.length, 1);
    assert.equal(paged.capped, true);
  });

  const staged = await ok("ast_edit", {
    ops: [{ pattern: "foo($A)", rewrite: "bar($A)" }],
    reason: "rename foo",
  });
  check("ast_edit stages without writing", () => {
    assert.equal(staged.staged, true);
    assert.match(staged.id, /^[0-9a-f]+$/);
    assert.equal(read("src/a.rs"), before);
  });

  const listed = await ok("previews", {});
  check("previews list", () => {
    assert.equal(listed.previews[0].id, staged.id);
    assert.equal(listed.previews[0].agent, "ts-sdk-test/1.0.0");
  });
  const shown = await ok("previews", { action: "show", id: staged.id });
  check("previews show", () => assert.equal(shown.files.length, 2));

  const applied = await ok("resolve", { action: "apply", reason: "tests pass" });
  check("resolve apply writes", () => {
    assert.equal(applied.id, staged.id);
    assert.equal(applied.action, "applied");
    assert.equal(read("src/a.rs"), "fn main() { bar(1); bar(2); }\n");
  });

  const undone = await ok("undo", { reason: "not yet" });
  check("undo restores", () => {
    assert.equal(undone.action, "undone");
    assert.equal(read("src/a.rs"), before);
  });

  // The undone preview is pending again but never picked without its id.
  const noId = await call("resolve", { action: "apply", reason: "again" });
  check("no-id resolve after undo refuses", () => {
    assert.equal(noId.isError, true);
    assert.equal(noId.structuredContent, undefined);
    assert.match(noId.content[0].text, /undone|name/);
  });
  await ok("resolve", { action: "discard", id: staged.id, reason: "superseded" });

  const nothing = await ok("ast_edit", { ops: [{ pattern: "nope($A)", rewrite: "x($A)" }] });
  check("nothing staged", () => {
    assert.equal(nothing.staged, false);
    assert.equal(nothing.id ?? null, null);
  });

  // A commit with the audit trailers, through the server.
  const again = await ok("ast_edit", {
    ops: [{ pattern: "foo($A)", rewrite: "baz($A)" }],
    paths: ["src/b.rs"],
  });
  const committed = await ok("resolve", {
    action: "apply",
    id: again.id,
    reason: "ship it",
    commit: true,
    message: "Use baz in b",
  });
  check("resolve commit", () => {
    assert.equal(git("rev-parse", "HEAD").trim(), committed.commit);
    const trailers = git("log", "-1", "--format=%(trailers:only,unfold)");
    assert.match(trailers, new RegExp(`Astedit-Id: ${again.id}`));
    assert.match(trailers, /Astedit-Agent: ts-sdk-test\/1\.0\.0/);
    assert.equal(git("show", "HEAD:src/b.rs"), "fn b() { baz(3); }\n");
  });

  const patched = await ok("apply_patch", {
    patch: "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-fn main() { foo(1); foo(2); }\n+fn main() { foo(1); foo(20); }\n*** End Patch\n",
  });
  check("apply_patch stages", () => assert.equal(patched.staged, true));
  await ok("resolve", { action: "discard", id: patched.id, reason: "only a test" });

  // Edits addressed by content: read gives the lines and the blob id, edit_lines
  // stages ranges of that blob.
  const lines = await ok("read", { path: "src/a.rs" });
  check("read", () => {
    assert.equal(lines.text, read("src/a.rs"));
    assert.equal(lines.blob, git("hash-object", "src/a.rs").trim());
    assert.equal(lines.start, 1);
  });
  const byLines = await ok("edit_lines", {
    path: "src/a.rs",
    blob: lines.blob,
    edits: [{ start: 1, end: 1, text: "fn main() { foo(1); foo(21); }" }],
    reason: "line edit",
  });
  check("edit_lines stages", () => {
    assert.equal(byLines.kind, "lines");
    assert.equal(byLines.staged, true);
    assert.equal(read("src/a.rs"), lines.text);
  });
  await ok("resolve", { action: "apply", id: byLines.id, reason: "line edit" });
  check("edit_lines applied", () => {
    assert.equal(read("src/a.rs"), "fn main() { foo(1); foo(21); }\n");
  });
  const staleRead = await call("edit_lines", {
    path: "src/a.rs",
    blob: lines.blob,
    edits: [{ start: 1, end: 1, text: "fn main() {}" }],
  });
  check("a stale read names read as the next call", () => {
    assert.equal(staleRead.isError, true);
    const json = JSON.parse(staleRead.content[1].text);
    assert.equal(json.error.code, "stale-read");
    assert.equal(json.error.next.tool, "read");
  });

  // Claude Code's Edit and Write shapes, staged like every other tool.
  const replaced = await ok("replace", {
    file_path: "src/a.rs",
    old_string: "foo(21)",
    new_string: "foo(22)",
    reason: "replace",
  });
  check("replace stages", () => {
    assert.equal(replaced.kind, "replace");
    assert.equal(read("src/a.rs"), "fn main() { foo(1); foo(21); }\n");
  });
  await ok("resolve", { action: "apply", id: replaced.id, reason: "replace" });
  check("replace applied", () => assert.equal(read("src/a.rs"), "fn main() { foo(1); foo(22); }\n"));
  const missing = await call("replace", { path: "src/a.rs", old_string: "foo(23)", new_string: "x" });
  check("replace not found names the closest lines and a next replace", () => {
    assert.equal(missing.isError, true);
    const json = JSON.parse(missing.content[1].text);
    assert.equal(json.error.code, "text-not-found");
    assert.equal(json.error.details.near.start, 1);
    assert.equal(json.error.next.tool, "replace");
  });
  const written = await ok("write", { path: "src/w.rs", content: "fn w() {}\n", apply: true });
  check("write creates", () => {
    assert.equal(written.kind, "write");
    assert.equal(read("src/w.rs"), "fn w() {}\n");
  });

  const bad = await call("resolve", { action: "apply", reason: "x", id: "abc123" });
  check("tool errors are results with the fix", () => {
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /^error: /);
    const json = JSON.parse(bad.content[1].text);
    assert.equal(json.error.code, "unknown-id");
  });

  check("no warnings while compiling or validating", () => {
    assert.deepEqual(warnings, []);
  });
} finally {
  await client.close();
}

console.log(`ok: ${checks} checks passed (TypeScript SDK client, Ajv 2020 strict)`);
