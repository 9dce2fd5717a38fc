#!/usr/bin/env bash
# dist/ci.sh: the distribution part of .ci/run (issue 23): installs the tools it needs
# into target/dist-tools (maturin, actionlint, PyYAML; pnpm when not on PATH), builds
# the Linux x86_64 artifacts (dist/build.sh, from the test build's binary), installs and
# exercises each (dist/check.sh), runs the Action's steps (dist/check-action.sh) and
# lints the workflows and action.yml (dist/lint.sh). Prints how long each part took.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TOOLS="$ROOT/target/dist-tools"
OUT="$ROOT/target/dist-out"
T0=$(date +%s)
lap() { echo "dist/ci.sh: $1 done at +$(($(date +%s) - T0)) s"; }

# The crates (issue 49): `cargo install git-astedit` needs every member the binary uses
# to be publishable. Each member is packaged in dependency order against the others'
# packages (versions in lockstep: the workspace pins them `=VERSION`); not rebuilt from
# the packages (the test build compiled the same sources). The library's façade
# documents with no warning (`missing_docs` is denied there).
if ! cargo package --workspace --no-verify --locked --quiet 2>target/package.log; then
    cat target/package.log >&2
    exit 1
fi
RUSTDOCFLAGS="-D warnings" cargo doc --locked --quiet --no-deps -p astedit
lap crates

# Tools, pinned (dist/tools.sh, shared with build.sh). The python of PATH makes the
# tools' venv; pip's own configuration (index, certificates) is used as it is.
DIST_TOOLS=$TOOLS
# shellcheck source=dist/tools.sh
. dist/tools.sh
dist_install_python_tools
if ! command -v pnpm >/dev/null 2>&1 && [ ! -x "$TOOLS/npm/bin/pnpm" ]; then
    npm install --global --silent --no-audit --no-fund --prefix "$TOOLS/npm" pnpm@12.23.0 >/dev/null 2>&1 ||
        echo "dist/ci.sh: pnpm could not be installed; check.sh skips its case" >&2
fi
export PATH="$TOOLS/venv/bin:$TOOLS/npm/bin:$PATH"
lap tools

# The binary of the test build (dev profile) is packaged: CI checks the packaging, and a
# release build here would compile the whole tree a third time (8.5 of 28 minutes on 2
# cores). DIST_PROFILE=release dist/ci.sh checks the real thing; the release workflow
# always builds release.
export DIST_PROFILE=${DIST_PROFILE:-dev}
export CARGO_PROFILE_RELEASE_DEBUG=0
rm -rf "$OUT"
MATURIN="$TOOLS/venv/bin/maturin" dist/build.sh "$OUT"
lap build.sh

# The path of a prebuilt binary (GIT_ASTEDIT_BIN): no cargo and no maturin on PATH, so
# nothing can compile; its wheel (dist/wheel.py) must equal maturin's but for the binary
# and the SBOM.
PREBUILT="$ROOT/target/dist-prebuilt"
rm -rf "$PREBUILT" && mkdir -p "$PREBUILT"
cp "$ROOT/target/dist/bin/git-astedit" "$PREBUILT/git-astedit"
NO_CARGO_PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -x -F "$(dirname "$(command -v cargo)")" |
    grep -v -x -F "$TOOLS/venv/bin" | paste -sd: -)
PATH="$NO_CARGO_PATH" GIT_ASTEDIT_BIN="$PREBUILT/git-astedit" MATURIN= dist/build.sh "$PREBUILT/out"
python3 dist/wheel.py compare "$(ls "$OUT"/git_astedit-*.whl)" "$(ls "$PREBUILT"/out/git_astedit-*.whl)"
lap "build.sh from a prebuilt binary"

dist/check.sh "$OUT"
lap check.sh

dist/check-action.sh "$(ls "$OUT"/git_astedit-*.whl)"
lap check-action.sh

ACTIONLINT="$TOOLS/venv/bin/actionlint" PATH="$TOOLS/venv/bin:$PATH" dist/lint.sh
lap lint.sh
