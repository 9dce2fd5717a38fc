// Drives the OpenCode plugin `git astedit agent-hook install opencode` writes, the way
// OpenCode calls a plugin's hooks: node runs it, and it runs `git astedit agent-hook
// opencode` (the binary under test, first on PATH). Usage: node opencode-plugin.mjs
// PLUGIN.mjs REPO. Exits non-zero on a failed check.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [plugin, repo] = process.argv.slice(2);
const { GitAstedit } = await import(pathToFileURL(plugin).href);
const hooks = await GitAstedit({ directory: repo });
const file = path.join(repo, "a.txt");
let call = 0;

async function tool(name, args, session, run) {
  const input = { tool: name, sessionID: session, callID: `c${++call}` };
  await hooks["tool.execute.before"](input, { args });
  if (run) run();
  await hooks["tool.execute.after"](input, { title: "", output: "", metadata: {} });
}

await tool("read", { filePath: file }, "s1");
await tool("read", { filePath: file }, "s2");
// Session 2 edits; session 1 then tries to write from its stale read.
await tool("edit", { filePath: file, oldString: "one", newString: "two" }, "s2", () =>
  fs.writeFileSync(file, "two\n"),
);
await assert.rejects(
  tool("write", { filePath: file, content: "one\nmore\n" }, "s1", () => {
    throw new Error("the tool must not run after a denial");
  }),
  /since this session last read it/,
);
assert.equal(fs.readFileSync(file, "utf8"), "two\n");
// After a fresh read it goes through.
await tool("read", { filePath: file }, "s1");
await tool("write", { filePath: file, content: "two\nthree\n" }, "s1", () =>
  fs.writeFileSync(file, "two\nthree\n"),
);
console.log("ok: the OpenCode plugin refused the stale write and let the fresh one through");
