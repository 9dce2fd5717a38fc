#!/usr/bin/env bash
# Builds the benchmark corpora and finds (or installs) the tools the benchmark compares.
#
#   bench/corpus.sh [rust|ts|py|tools]...   (default: all of them)
#
# Each corpus is a git repository with one commit under ${BENCH_DIR:-/tmp/astedit-bench}/corpus/,
# unpacked from packages pinned in bench/pins/ (crates.io, npm, PyPI). A corpus whose
# `.git/bench-built` stamp exists is left alone, so running this again is cheap; delete the folder to
# rebuild. Tools: ast-grep (npm, pinned), ripgrep, hyperfine and GNU time (apt, only when
# missing). Prints one `name=path` line per tool at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/astedit-bench}
AST_GREP_VERSION=${AST_GREP_VERSION:-0.51.1}
corpora="$BENCH_DIR/corpus"
mkdir -p "$corpora"

log() { printf '[corpus] %s\n' "$*" >&2; }

# Removes nested ignore files (so git, rg and ast-grep see one file set) and commits
# everything as one snapshot with fixed dates, so two builds give the same commit.
snapshot() {
    local dir=$1
    find "$dir" -type f \( -name .gitignore -o -name .ignore -o -name .rgignore \
        -o -name .gitattributes -o -name .cargo-ok \) -delete
    git -C "$dir" init -q -b main
    git -C "$dir" add -A
    GIT_AUTHOR_DATE=2025-01-01T00:00:00Z GIT_COMMITTER_DATE=2025-01-01T00:00:00Z \
        git -C "$dir" -c user.name=bench -c user.email=bench@example.invalid \
        -c commit.gpgsign=false commit -q -m "corpus snapshot"
}

# Runs "$2" to fill a fresh temp folder, then moves it to $corpora/$1 atomically.
build() {
    local name=$1 fill=$2 dest="$corpora/$1"
    if [ -e "$dest/.git/bench-built" ]; then
        log "$name: already built ($dest)"
        return
    fi
    local work
    work=$(mktemp -d "$corpora/.$name.XXXXXX")
    log "$name: building in $work"
    "$fill" "$work"
    snapshot "$work/tree"
    git -C "$work/tree" ls-files | wc -l | xargs printf '%s tracked files\n' > "$work/tree/.git/bench-stats"
    rm -rf "$dest"
    mv "$work/tree" "$dest"
    rm -rf "$work"
    touch "$dest/.git/bench-built"
    log "$name: $(cat "$dest/.git/bench-stats") in $dest"
}

fill_rust() {  # every crate of a pinned dependency graph, as `cargo fetch` unpacks them
    local work=$1
    mkdir -p "$work/proj/src" "$work/tree"
    cp "$here/pins/rust/Cargo.toml" "$here/pins/rust/Cargo.lock" "$work/proj/"
    echo 'fn main() {}' > "$work/proj/src/main.rs"
    CARGO_HOME="$work/cargo-home" cargo fetch --locked --quiet \
        --target x86_64-unknown-linux-gnu --manifest-path "$work/proj/Cargo.toml"
    cp -a "$work"/cargo-home/registry/src/*/. "$work/tree/"
}

fill_ts() {  # the installed trees of pinned npm packages
    local work=$1
    mkdir -p "$work/proj" "$work/tree"
    cp "$here/pins/ts/package.json" "$here/pins/ts/package-lock.json" "$work/proj/"
    (cd "$work/proj" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
        --cache "$work/npm-cache" >/dev/null)
    rm -rf "$work/proj/node_modules/.bin" "$work/proj/node_modules/.package-lock.json"
    cp -a "$work/proj/node_modules/." "$work/tree/"
}

fill_py() {  # the hash-pinned sdists of django and sympy, unpacked
    local work=$1
    mkdir -p "$work/dl" "$work/tree"
    python3 -m pip download --quiet --no-binary :all: --no-deps --require-hashes \
        -r "$here/pins/py/requirements.txt" -d "$work/dl"
    for t in "$work"/dl/*.tar.gz; do tar -xzf "$t" -C "$work/tree"; done
}

tools() {
    local tooldir="$BENCH_DIR/tools"
    local sg="$tooldir/bin/ast-grep"
    if [ -n "${AST_GREP:-}" ]; then
        sg=$AST_GREP
    elif [ ! -x "$sg" ]; then
        log "installing @ast-grep/cli@$AST_GREP_VERSION into $tooldir"
        npm install -g --prefix "$tooldir" --no-audit --no-fund --loglevel=error \
            "@ast-grep/cli@$AST_GREP_VERSION" >/dev/null
    fi
    local missing=()
    command -v rg >/dev/null || missing+=(ripgrep)
    command -v hyperfine >/dev/null || missing+=(hyperfine)
    [ -x /usr/bin/time ] || missing+=(time)
    if [ ${#missing[@]} -gt 0 ]; then
        log "apt-get install ${missing[*]}"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    echo "ast-grep=$sg ($("$sg" --version))"
    echo "rg=$(command -v rg) ($(rg --version | sed -n 1p))"
    echo "hyperfine=$(command -v hyperfine) ($(hyperfine --version))"
    echo "time=/usr/bin/time"
}

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(tools rust ts py)
for w in "${what[@]}"; do
    case $w in
        rust) build rust fill_rust ;;
        ts) build ts fill_ts ;;
        py) build py fill_py ;;
        tools) tools ;;
        *) echo "usage: $0 [rust|ts|py|tools]..." >&2; exit 2 ;;
    esac
done
for c in rust ts py; do
    [ -e "$corpora/$c/.git/bench-built" ] && echo "$c=$corpora/$c"
done
exit 0
