"use strict";
// Optional speed-up, never required: replaces the launcher bin/git-astedit by the
// platform binary itself (a hard link, else a copy), so `git-astedit` starts without
// node. Only under npm and not on Windows (where npm's .cmd shims run the bin file with
// node); pnpm and yarn write shims that run the bin file with node too, so there the
// launcher stays. Any failure leaves the launcher, which works on its own; this script
// never fails the install.
const fs = require("fs");
const path = require("path");

function main() {
  if (process.platform === "win32") return "Windows: the launcher stays";
  const agent = process.env.npm_config_user_agent || "";
  if (!agent.startsWith("npm/")) return `not npm (${agent || "unknown"}): the launcher stays`;
  const { binaryPath } = require("./lib/platform.js");
  const binary = binaryPath();
  const launcher = path.join(__dirname, "bin", "git-astedit");
  const temporary = `${launcher}.${process.pid}.tmp`;
  try {
    fs.linkSync(binary, temporary);
  } catch (_) {
    fs.copyFileSync(binary, temporary);
  }
  fs.chmodSync(temporary, 0o755);
  fs.renameSync(temporary, launcher);
  return `linked ${binary}`;
}

try {
  const what = main();
  if (process.env.GIT_ASTEDIT_POSTINSTALL_DEBUG) process.stderr.write(`git-astedit postinstall: ${what}\n`);
} catch (error) {
  process.stderr.write(`git-astedit postinstall: ${error.message} (the launcher stays)\n`);
}
