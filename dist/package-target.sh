#!/usr/bin/env bash
# dist/package-target.sh TARGET WHEEL SHARE COMPLETIONS OUTDIR: the release archive and
# the npm per-platform package of one target, from the wheel maturin built for it (so
# each target is compiled once). The release workflow runs it for the targets other
# than Linux x86_64 (which dist/build.sh makes whole). SHARE and COMPLETIONS are the
# man pages / completions folders dist/build.sh generated (target/dist/wheel-data/data/share,
# target/dist/completions): they are the same on every platform, and a cross-built
# binary could not be run here to make them.
#
#   TARGET    a Rust target triple (aarch64-unknown-linux-gnu, x86_64-apple-darwin,
#             aarch64-apple-darwin, x86_64-pc-windows-msvc)
#   OUTDIR    gets git-astedit-VERSION-TARGET.tar.gz (.zip for Windows) with its .sha256,
#             and git-astedit-SUFFIX-VERSION.tgz (npm pack)
set -euo pipefail

if [ $# -ne 5 ]; then
    echo "usage: dist/package-target.sh TARGET WHEEL SHARE COMPLETIONS OUTDIR" >&2
    exit 2
fi
TARGET=$1
WHEEL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
SHARE=$(cd "$3" && pwd)
COMPLETIONS=$(cd "$4" && pwd)
mkdir -p "$5"
OUT=$(cd "$5" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VERSION=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' Cargo.toml | head -n1)
PYTHON=$(command -v python3 || command -v python) # Windows runners have `python`

case "$TARGET" in
    x86_64-unknown-linux-gnu) SUFFIX=linux-x64-gnu ;;
    aarch64-unknown-linux-gnu) SUFFIX=linux-arm64-gnu ;;
    x86_64-apple-darwin) SUFFIX=darwin-x64 ;;
    aarch64-apple-darwin) SUFFIX=darwin-arm64 ;;
    x86_64-pc-windows-msvc) SUFFIX=win32-x64-msvc ;;
    *) echo "package-target.sh: unknown target $TARGET" >&2; exit 2 ;;
esac
EXE=git-astedit
case "$TARGET" in *windows*) EXE=git-astedit.exe ;; esac

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/astedit-package.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

# The binary, out of the wheel (`git_astedit-VERSION.data/scripts/EXE`).
"$PYTHON" - "$WHEEL" "$EXE" "$STAGE/$EXE" <<'EOF'
import sys, zipfile
wheel, exe, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".data/scripts/" + exe)]
    if len(names) != 1:
        sys.exit(f"{wheel}: no single .data/scripts/{exe} in {z.namelist()}")
    with z.open(names[0]) as src, open(dest, "wb") as out:
        out.write(src.read())
EOF
chmod 755 "$STAGE/$EXE"

# The archive.
NAME="git-astedit-$VERSION-$TARGET"
mkdir -p "$STAGE/$NAME/man/man1" "$STAGE/$NAME/completions"
cp "$STAGE/$EXE" README.md LICENSE "$STAGE/$NAME/"
[ -f CHANGELOG.md ] && cp CHANGELOG.md "$STAGE/$NAME/"
cp "$SHARE"/man/man1/*.1 "$STAGE/$NAME/man/man1/"
cp "$COMPLETIONS"/* "$STAGE/$NAME/completions/"
case "$TARGET" in
    *windows*)
        ARCHIVE="$NAME.zip"
        (cd "$STAGE" && "$PYTHON" -m zipfile -c "$OUT/$ARCHIVE" "$NAME")
        ;;
    *)
        ARCHIVE="$NAME.tar.gz"
        tar -C "$STAGE" -cf - "$NAME" | gzip -n -9 >"$OUT/$ARCHIVE"
        ;;
esac
(cd "$OUT" && "$PYTHON" -c '
import hashlib, sys
name = sys.argv[1]
digest = hashlib.sha256(open(name, "rb").read()).hexdigest()
open(name + ".sha256", "w").write(f"{digest}  {name}\n")
' "$ARCHIVE")

# The npm per-platform package.
mkdir -p "$STAGE/npm/$SUFFIX"
cp "$STAGE/$EXE" LICENSE "$STAGE/npm/$SUFFIX/"
VERSION="$VERSION" NPM="$STAGE/npm" node dist/npm/manifests.js
(cd "$STAGE/npm/$SUFFIX" && npm pack --silent --pack-destination "$OUT" >/dev/null)
ls -l "$OUT" >&2
