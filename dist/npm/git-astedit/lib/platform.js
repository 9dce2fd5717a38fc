"use strict";
// Which per-platform package carries the git-astedit binary for this machine, and where
// that binary is. Shared by the launcher (bin/git-astedit) and postinstall.js.
//
// The per-platform packages are optional dependencies of git-astedit, each declaring
// `os`, `cpu` (and `libc` on Linux), so npm, pnpm and yarn install only the one that
// fits: the layout ast-grep's npm packages use.
const path = require("path");

// process.platform-process.arch → the package's suffix (the release targets).
const PACKAGES = {
  "linux-x64-gnu": "@git-astedit/linux-x64-gnu",
  "linux-arm64-gnu": "@git-astedit/linux-arm64-gnu",
  "darwin-x64": "@git-astedit/darwin-x64",
  "darwin-arm64": "@git-astedit/darwin-arm64",
  "win32-x64": "@git-astedit/win32-x64-msvc",
};

function libc() {
  // glibcVersionRuntime is set only where node runs on glibc.
  try {
    const report = process.report && process.report.getReport();
    const header = report && (typeof report === "string" ? JSON.parse(report) : report).header;
    return header && header.glibcVersionRuntime ? "gnu" : "musl";
  } catch (_) {
    return "gnu";
  }
}

function platformKey() {
  const { platform, arch } = process;
  return platform === "linux" ? `${platform}-${arch}-${libc()}` : `${platform}-${arch}`;
}

function executableName() {
  return process.platform === "win32" ? "git-astedit.exe" : "git-astedit";
}

// The binary's absolute path; throws an Error saying what is missing and why.
function binaryPath() {
  const key = platformKey();
  const pkg = PACKAGES[key];
  if (!pkg) {
    throw new Error(
      `git-astedit: no prebuilt binary for ${key} (there are: ${Object.keys(PACKAGES).join(", ")}). ` +
        "Install from source instead: cargo install git-astedit"
    );
  }
  try {
    // Resolved from this package's folder, so a sibling global install of the platform
    // package (npm i -g git-astedit @git-astedit/...) is found too.
    return require.resolve(`${pkg}/${executableName()}`, { paths: [path.join(__dirname, "..")] });
  } catch (_) {
    throw new Error(
      `git-astedit: the package ${pkg}, which carries the binary for ${key}, is not installed. ` +
        "It is an optional dependency of git-astedit: install without --no-optional / " +
        `--omit=optional, or add it yourself (npm i ${pkg}).`
    );
  }
}

module.exports = { PACKAGES, platformKey, binaryPath, executableName };
