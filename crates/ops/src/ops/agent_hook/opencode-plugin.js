// git-astedit for OpenCode: written by `git astedit agent-hook install opencode`.
//
// Around OpenCode's own read/edit/write and bash tools, asks `git astedit agent-hook
// opencode`, which refuses an edit of a file changed since this session last read it
// (the stale write that drops another agent's edit) and journals every edit, and what
// each bash command changed, as an applied transaction (`git astedit log` shows it,
// `git astedit undo` takes it back).
import { spawnSync } from "node:child_process";

const TOOLS = new Set(["read", "edit", "multiedit", "write", "bash"]);
// tool.execute.after does not carry the arguments: they are kept from before, by call.
const pending = new Map();

function ask(directory, event) {
  const run = spawnSync("git", ["astedit", "agent-hook", "opencode"], {
    cwd: directory,
    input: JSON.stringify(event),
    encoding: "utf8",
  });
  if (run.status !== 0 || !run.stdout) return {};
  try {
    return JSON.parse(run.stdout);
  } catch {
    return {};
  }
}

export const GitAstedit = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    if (!TOOLS.has(input.tool)) return;
    pending.set(input.callID, output.args);
    const answer = ask(directory, {
      hook: "tool.execute.before",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: output.args,
      directory,
    });
    if (answer.decision === "deny") {
      pending.delete(input.callID);
      throw new Error(answer.reason);
    }
    // bash: the same command with the session in its environment, so that a
    // `git astedit` command it runs is journalled as this session's.
    if (input.tool === "bash" && typeof answer.command === "string") {
      output.args.command = answer.command;
    }
  },
  "tool.execute.after": async (input) => {
    if (!TOOLS.has(input.tool)) return;
    const args = pending.get(input.callID);
    pending.delete(input.callID);
    if (!args) return;
    ask(directory, {
      hook: "tool.execute.after",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args,
      directory,
    });
  },
});
