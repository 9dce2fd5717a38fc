#!/usr/bin/env bash
# Builds the benchmark corpora and finds (or installs) the tools the benchmark compares.
#
#   bench/corpus.sh [rust|ts|py|gson|essentials|tools]...   (default: all of them)
#
# Each corpus is a git repository with one commit under ${BENCH_DIR:-/tmp/astedit-bench}/corpus/,
# unpacked from packages pinned in bench/pins/ (crates.io, npm, PyPI). A corpus whose
# `.git/bench-built` stamp exists is left alone, so running this again is cheap; delete the folder to
# rebuild. Tools: ast-grep (npm, pinned), ripgrep, hyperfine and GNU time (apt, only when
# missing). Prints one `name=path` line per tool at the end.
#
# `gson` (a Java corpus) and `essentials` (the ast-grep-essentials rule collection) are
# git repositories fetched at pinned commits from GitHub, or from a local mirror of bare
# repositories (`$BENCH_MIRROR/<owner>+<name>/repo`, default /work/.mirror) when GitHub
# cannot be reached. Their code is never committed here.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/astedit-bench}
AST_GREP_VERSION=${AST_GREP_VERSION:-0.51.1}
BENCH_MIRROR=${BENCH_MIRROR:-/work/.mirror}
# Pinned commits of the fetched repositories.
GSON_COMMIT=9835b6f90192f79cdf5300c528fc6212455fb6c1
ESSENTIALS_COMMIT=73120109bf45c284d0cd8a37bdd7082e80e92e87
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
    if ! "$fill" "$work"; then rm -rf "$work"; return 1; fi
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

# Writes the tree of github.com/$1 at commit $2 into folder $3: from GitHub, else from the
# local mirror.
fetch_tree() {
    local repo=$1 commit=$2 dest=$3 src tmp
    tmp=$(mktemp -d)
    if git clone -q --bare --filter=blob:none "https://github.com/$repo" "$tmp/repo.git" 2>/dev/null; then
        src="$tmp/repo.git"
    elif [ -d "$BENCH_MIRROR/${repo/\//+}/repo" ]; then
        src="$BENCH_MIRROR/${repo/\//+}/repo"
        log "github.com unreachable: using the mirror $src"
    else
        log "cannot fetch $repo: no network and no mirror at $BENCH_MIRROR/${repo/\//+}/repo"
        rm -rf "$tmp"
        return 1
    fi
    mkdir -p "$dest"
    git --git-dir="$src" archive "$commit" | tar -x -C "$dest"
    rm -rf "$tmp"
}

fill_gson() {  # google/gson at a pinned commit (Java)
    fetch_tree google/gson "$GSON_COMMIT" "$1/tree"
}

# The ast-grep-essentials rules, made loadable by ast-grep 0.51.1 the way issue 16 did:
# the `ast-grep-essentials: true` key (not a rule field) removed from every file, and the
# files ast-grep 0.51.1 refuses (pins/essentials/refused.txt: kinds or fields that its
# grammars or schema do not have) left out. Each file is then checked against ast-grep
# itself: a kept file it refuses, or a left-out file it loads, stops the build.
essentials() {
    local dest="$BENCH_DIR/rules/essentials" sg=$1
    if [ -e "$dest/.bench-built" ]; then
        log "essentials: already built ($dest)"
        echo "essentials=$dest"
        return
    fi
    local work empty f loads bad=0
    work=$(mktemp -d "$BENCH_DIR/.essentials.XXXXXX")
    fetch_tree coderabbitai/ast-grep-essentials "$ESSENTIALS_COMMIT" "$work/src"
    mkdir -p "$work/tree"
    cp -a "$work/src/rules" "$work/src/utils" "$work/src/sgconfig.yml" "$work/tree/"
    find "$work/tree/rules" "$work/tree/utils" -name '*.yml' -exec sed -i '/^ast-grep-essentials:/d' {} +
    empty="$work/empty"
    mkdir -p "$empty"
    while read -r f; do
        [ -n "$f" ] || continue
        if "$sg" scan -r "$work/tree/$f" "$empty" >/dev/null 2>&1; then
            log "essentials: ast-grep loads $f, listed as refused"; bad=1
        fi
        rm "$work/tree/$f"
    done < "$here/pins/essentials/refused.txt"
    loads=0
    for f in $(cd "$work/tree" && find rules -name '*.yml' | sort); do
        if "$sg" scan -r "$work/tree/$f" "$empty" >/dev/null 2>&1; then
            loads=$((loads + 1))
        else
            log "essentials: ast-grep refuses $f"; bad=1
        fi
    done
    if [ "$bad" != 0 ]; then
        log "essentials: the refused list does not fit ast-grep $("$sg" --version); not built"
        rm -rf "$work"
        return 1
    fi
    rm -rf "$dest"
    mkdir -p "$(dirname "$dest")"
    mv "$work/tree" "$dest"
    rm -rf "$work"
    echo "$loads" > "$dest/.bench-rules"
    touch "$dest/.bench-built"
    log "essentials: $loads rule files in $dest"
    echo "essentials=$dest"
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

ast_grep_bin() {
    if [ -n "${AST_GREP:-}" ]; then echo "$AST_GREP"; else echo "$BENCH_DIR/tools/bin/ast-grep"; fi
}

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(tools rust ts py gson essentials)
for w in "${what[@]}"; do
    case $w in
        rust) build rust fill_rust ;;
        ts) build ts fill_ts ;;
        py) build py fill_py ;;
        gson) build gson fill_gson || log "gson: not built" ;;
        essentials) essentials "$(ast_grep_bin)" || log "essentials: not built" ;;
        tools) tools ;;
        *) echo "usage: $0 [rust|ts|py|gson|essentials|tools]..." >&2; exit 2 ;;
    esac
done
for c in rust ts py gson; do
    [ -e "$corpora/$c/.git/bench-built" ] && echo "$c=$corpora/$c"
done
exit 0
