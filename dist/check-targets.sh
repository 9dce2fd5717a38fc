#!/usr/bin/env bash
# dist/check-targets.sh [TARGET…]: type-checks and lints the crate for the release
# targets that are not this machine (macOS, Windows), without their C toolchains or
# SDKs: the grammars' C code is "compiled" by dist/xcheck/cc, a stand-in writing empty
# objects, which `cargo check` never links. What it catches is what breaks a release
# build on those systems in our own Rust code (an unconditional `std::os::unix`, a libc
# item Windows lacks); what it cannot catch is C that does not compile there.
#
# Needs the targets' standard libraries (`rustup target add …`, done here when
# missing). Default targets: x86_64-apple-darwin aarch64-apple-darwin
# x86_64-pc-windows-msvc. Uses target/xcheck as its target folder.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc)
export CARGO_TARGET_DIR="$ROOT/target/xcheck"
for t in "${TARGETS[@]}"; do
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
    var=$(echo "$t" | tr '-' '_')
    export "CC_$var=$ROOT/dist/xcheck/cc" "CXX_$var=$ROOT/dist/xcheck/cc" "AR_$var=$ROOT/dist/xcheck/ar"
    echo "== check-targets.sh: $t" >&2
    cargo clippy --locked --target "$t" --lib --bins -- -D warnings
done
