#!/usr/bin/env bash
# bench/build-times.sh BEFORE AFTER [ROUNDS]: debug rebuild and test-compile times of two
# checkouts of this repository (issue 49 item 4), taken alternately on the same machine:
# after a CLI file and after an engine file is touched (mtime only) and edited (a private
# function appended, then removed), `cargo build` and then `cargo test --no-run`. Each
# checkout is built and its tests compiled first (untimed). Prints a Markdown table of
# the median wall seconds over ROUNDS (default 3) and the load average at the start.
#
# Both checkouts must be at commits whose tests compile; the files are found in either
# layout (the single crate's `src/grep.rs` or the engine crate's `crates/engine/src/grep.rs`).
set -euo pipefail
BEFORE=$(cd "$1" && pwd)
AFTER=$(cd "$2" && pwd)
ROUNDS=${3:-3}
CLI_FILE=src/cli/grep.rs

engine_file() {
    for f in crates/engine/src/grep.rs src/grep.rs; do
        [ -f "$1/$f" ] && { echo "$f"; return; }
    done
    echo "no engine file in $1" >&2
    exit 2
}

secs() { # CMD… → wall seconds, one decimal
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

# One measurement: change FILE in TREE (touch|edit), time CMD, restore the file.
one() { # TREE FILE MODE CMD…
    local tree=$1 file=$2 mode=$3
    shift 3
    case $mode in
        touch) touch "$tree/$file" ;;
        edit) printf '\n#[allow(dead_code)]\nfn build_times_edit_%s() {}\n' "$RANDOM" >>"$tree/$file" ;;
    esac
    (cd "$tree" && secs "$@")
    git -C "$tree" checkout -q -- "$file"
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A ROWS
for tree in "$BEFORE" "$AFTER"; do
    (cd "$tree" && cargo build --quiet && cargo test --no-run --quiet) >/dev/null 2>&1
done
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
for _ in $(seq "$ROUNDS"); do
    for tree in "$BEFORE" "$AFTER"; do
        engine=$(engine_file "$tree")
        for mode in touch edit; do
            for what in cli engine; do
                file=$CLI_FILE
                [ "$what" = engine ] && file=$engine
                ROWS[$tree,$mode,$what,build]+=" $(one "$tree" "$file" "$mode" cargo build)"
                ROWS[$tree,$mode,$what,test]+=" $(one "$tree" "$file" "$mode" cargo test --no-run)"
            done
        done
    done
done

echo "Median of $ROUNDS rounds, wall seconds; load at the start: $LOAD; after the runs: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| tree | change | build, CLI file | build, engine file | test --no-run, CLI file | test --no-run, engine file |"
echo "|---|---|---:|---:|---:|---:|"
for tree in "$BEFORE" "$AFTER"; do
    name="$(basename "$tree") $(git -C "$tree" rev-parse --short HEAD)"
    for mode in touch edit; do
        printf '| %s | %s |' "$name" "$mode"
        for kind in build test; do
            for what in cli engine; do
                printf ' %s |' "$(echo "${ROWS[$tree,$mode,$what,$kind]}" | median)"
            done
        done
        echo
    done
done
