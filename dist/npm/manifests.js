"use strict";
// Writes the package.json files of the npm packages, at the version of Cargo.toml:
// git-astedit (the launcher; every per-platform package as an optional dependency) and
// the per-platform packages that dist/build.sh (or the release workflow) staged in $NPM.
//   VERSION=0.1.0 NPM=target/dist/npm node dist/npm/manifests.js
const fs = require("fs");
const path = require("path");

const version = process.env.VERSION;
const root = process.env.NPM;
if (!version || !root) throw new Error("set VERSION and NPM");

const repository = { type: "git", url: "git+https://github.com/git-astedit/git-astedit.git" };
const common = {
  version,
  license: "MIT",
  homepage: "https://github.com/git-astedit/git-astedit#readme",
  repository,
};

// suffix → the fields npm, pnpm and yarn choose an optional dependency by.
const platforms = {
  "linux-x64-gnu": { os: ["linux"], cpu: ["x64"], libc: ["glibc"] },
  "linux-arm64-gnu": { os: ["linux"], cpu: ["arm64"], libc: ["glibc"] },
  "darwin-x64": { os: ["darwin"], cpu: ["x64"] },
  "darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
  "win32-x64-msvc": { os: ["win32"], cpu: ["x64"] },
};

const write = (dir, manifest) =>
  fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);

// The main package, when staged (dist/build.sh does; dist/package-target.sh stages
// only a per-platform package).
const main = path.join(root, "git-astedit");
const man = fs.existsSync(main)
  ? fs
      .readdirSync(path.join(main, "man"))
      .filter((f) => f.endsWith(".1"))
      .sort()
      .map((f) => `./man/${f}`)
  : [];

if (fs.existsSync(main)) write(main, {
  name: "git-astedit",
  ...common,
  description:
    "Structural search and rewrites staged as git objects: preview, apply, undo (`git astedit`)",
  keywords: ["git", "ast-grep", "codemod", "refactoring", "tree-sitter"],
  bin: { "git-astedit": "bin/git-astedit" },
  // npm installs these into PREFIX/share/man/man1 on a global install.
  man,
  files: ["bin/", "lib/", "man/", "postinstall.js", "README.md", "LICENSE"],
  scripts: { postinstall: "node postinstall.js" },
  engines: { node: ">=16" },
  optionalDependencies: Object.fromEntries(
    Object.keys(platforms).map((suffix) => [`@git-astedit/${suffix}`, version])
  ),
});

for (const [suffix, fields] of Object.entries(platforms)) {
  const dir = path.join(root, suffix);
  if (!fs.existsSync(dir)) continue;
  const exe = suffix.startsWith("win32") ? "git-astedit.exe" : "git-astedit";
  write(dir, {
    name: `@git-astedit/${suffix}`,
    ...common,
    description: `The git-astedit binary for ${suffix} (installed by the git-astedit package)`,
    ...fields,
    files: [exe, "LICENSE"],
    preferUnplugged: true,
    publishConfig: { access: "public" },
  });
}
