#!/usr/bin/env bash
# Issue 50: how long `review` takes to group a preview, against how long staging that
# preview took, measured in the same run on the same binary; the page's first screen
# in headless Chromium; the size of the `--html` file.
#
#   bench/review.sh [synthetic] [BIN] [FILES] [CALLS_PER_FILE]
#   bench/review.sh vue|codemods|essentials|npm|real [BIN]
#
# synthetic (the default): FILES JavaScript files of CALLS_PER_FILE `console.log(...)`
#   calls (arguments vary; one file in 50 holds a call over three lines and one keeps
#   a comment), one commit. Staging is `edit --no-cache -p 'console.log($$$A)' -r
#   'logger.info($$$A)'`. RUNS runs (default 3).
# vue: the same edit, `console.log($A)` and `console.log($$$A)`, over vuejs/core
#   ($VUE_CORE, default /work/corpus/vuejs-core: a clone of github.com/vuejs/core).
# codemods: the stage-all (`scan --stage`) of the codemods rule project
#   ($CODEMODS, default /work/shared/acceptance/ast-grep-projects/codemods: 43081j/codemods'
#   76 fixable rules) over vuejs/core.
# essentials: the stage-all of the ast-grep-essentials rules (pinned commit, made
#   loadable as bench/corpus.sh does) over a C++ repository ($ESSENTIALS_REPO, default
#   github.com/doxygen/doxygen from the local mirror): its only fixable rule is C++.
# npm: thousands of sites in real code: the benchmark's ts corpus ($TS_CORPUS, default
#   $BENCH_DIR/corpus/ts, built by `bench/corpus.sh ts` when missing: the installed trees
#   of the npm packages pinned in bench/pins/ts, 12,113 files) as a repository. Two
#   stage-alls over it: the codemods rule project's, and that of a one-rule project
#   turning `var X = V` declarations into `let` ones (the rule ast-grep's own tests use)
#   over rxjs and date-fns (about 14,000 sites in 1,400 files: CommonJS, ES5 modules,
#   UMD and minified bundles, locale tables). NPM_PREVIEWS (default "codemods let")
#   picks which.
# real: vue, codemods, essentials and npm.
#
# Grouping is `review ID --json` (the sites read from the record staging made, or the
# recipe re-run on the before blobs and matched with the after blobs; the `derived`
# column says which), grouped; each row gives wall and CPU (user + system) time of both,
# the ratio of their CPU times and of their wall times, the `--html` file's size, and,
# when Chromium is on PATH, the page's first screen (bench/review-page.py: the local
# page's server started, the page opened, until it has drawn the first groups) and
# the static file's load time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=synthetic
case ${1:-} in synthetic | vue | codemods | essentials | npm | real) mode=$1; shift ;; esac
BIN=${1:-target/release/git-astedit}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
FILES=${2:-500}
CALLS=${3:-20}
RUNS=${RUNS:-3}
VUE_CORE=${VUE_CORE:-/work/corpus/vuejs-core}
TS_CORPUS=${TS_CORPUS:-${BENCH_DIR:-/tmp/astedit-bench}/corpus/ts}
CODEMODS=${CODEMODS:-/work/shared/acceptance/ast-grep-projects/codemods}
BENCH_MIRROR=${BENCH_MIRROR:-/work/.mirror}
ESSENTIALS_COMMIT=73120109bf45c284d0cd8a37bdd7082e80e92e87
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log() { printf '[review] %s\n' "$*" >&2; }
now() { date +%s.%N; }
# CPU seconds (user + sys) of the last timed command, beside the wall time: on a loaded
# machine the wall time says more about the neighbours than about us.
cpu() { awk '{print $1 + $2}' "$dir/cpu.txt"; }
timed() { /usr/bin/time -f "%U %S" -o "$dir/cpu.txt" "$@"; }
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)

header() {
    echo "| preview | files | sites | groups | outliers | derived | staging wall / CPU (s) | grouping wall / CPU (s) | grouping / staging (CPU, wall) | html bytes | page first screen (ms) | html load (ms) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
}

# Stages with "$@" (a git-astedit command line, JSON out) in the current repository,
# groups the preview, writes its HTML file, opens the page; prints one row named $1.
measure() {
    local name=$1
    shift
    local t0 t1 t2 c1 c2 id page=""
    t0=$(now)
    timed "$BIN" --json --no-cache "$@" >"$dir/stage.json"
    c1=$(cpu)
    t1=$(now)
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("id") or "")' "$dir/stage.json")
    if [ -z "$id" ]; then
        python3 - "$name" "$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v.get("summary") or v.get("fixes") or "")' "$dir/stage.json")" "$t0" "$t1" "$c1" <<'PY'
import sys
name, summary, t0, t1, c1 = sys.argv[1:]
print(f"| {name} | – | 0 ({summary}: nothing staged) | – | – | – | {float(t1) - float(t0):.2f} / {float(c1):.2f} | – | – | – | – | – |")
PY
        return
    fi
    t1=$(now)
    timed "$BIN" --json review "$id" >"$dir/review.json"
    c2=$(cpu)
    t2=$(now)
    "$BIN" review "$id" --html "$dir/review.html"
    # KEEP_REVIEW=DIR keeps each grouping's JSON (to compare two builds' groups).
    if [ -n "${KEEP_REVIEW:-}" ]; then
        mkdir -p "$KEEP_REVIEW"
        cp "$dir/review.json" "$KEEP_REVIEW/$(printf '%s' "$name" | tr -c 'A-Za-z0-9' '-' | cut -c1-60).${KEEP_TAG:-run}-$$.json"
    fi
    # The record of sites staging made (a blob in the before commit's parent), if any.
    if git cat-file -e "refs/astedit/$id~2:sites" 2>/dev/null; then
        log "$name: record of sites $(git cat-file -s "refs/astedit/$id~2:sites") bytes, $(git rev-parse "refs/astedit/$id~2:sites" | git cat-file --batch-check='%(objectsize:disk)') on disk"
    fi
    if [ -n "$chromium" ]; then
        page=$(CHROMIUM=$chromium python3 "$here/review-page.py" "$BIN" "$PWD" "$id" "$dir/review.html" || echo '{}')
    fi
    python3 - "$name" "$dir/review.json" "$t0" "$t1" "$t2" "$c1" "$c2" "$(wc -c <"$dir/review.html")" "$page" <<'PY'
import json, sys
name, review, t0, t1, t2, c1, c2, html, page = sys.argv[1:]
v = json.load(open(review))
files = len({f for g in v["groups"] for f in g["files"]})
stage, group = float(t1) - float(t0), float(t2) - float(t1)
c1, c2 = float(c1), float(c2)
p = json.loads(page) if page else {}
screen = p.get("first_screen_ms", "–")
load = p.get("html_load_ms", "–")
print(f"| {name} | {files} | {v['sites']} | {len(v['groups'])} | {v['outliers']} | {v.get('derived', '–')} | {stage:.2f} / {c1:.2f} "
      f"| {group:.2f} / {c2:.2f} | {c2 / max(c1, 0.005):.2f}, {group / stage:.2f} | {html} | {screen} | {load} |")
PY
    "$BIN" discard "$id" >/dev/null
}

# A throwaway clone of repository $1 in $2 (objects shared, nothing copied), with the
# files whose blobs the source lacks (a mirror keeps its largest files out) dropped
# from the snapshot in one more commit.
clone() {
    git clone -q --no-checkout --shared "$1" "$2"
    git -C "$2" config user.email bench@example.com
    git -C "$2" config user.name bench
    local missing
    missing=$(git -C "$2" ls-tree -r HEAD | awk '$2 == "blob" {print $3 " " $4}' |
        while read -r oid path; do
            git -C "$2" cat-file -e "$oid" 2>/dev/null || printf '%s\n' "$path"
        done)
    if [ -n "$missing" ]; then
        log "$(printf '%s\n' "$missing" | wc -l) files absent from $1, left out"
        git -C "$2" read-tree HEAD
        printf '%s\n' "$missing" | git -C "$2" rm -q --cached --pathspec-from-file=-
        git -C "$2" commit -qm "the files absent from the source left out"
    fi
    git -C "$2" checkout -q -f HEAD
}

vue_clone() {
    cd /
    rm -rf "$dir/vue"
    if [ ! -d "$VUE_CORE/.git" ]; then
        log "no vuejs/core at $VUE_CORE: cloning it"
        git clone -q https://github.com/vuejs/core "$VUE_CORE" ||
            git clone -q "$BENCH_MIRROR/vuejs+core/repo" "$VUE_CORE"
    fi
    clone "$VUE_CORE" "$dir/vue"
    log "vuejs/core at $(git -C "$dir/vue" rev-parse --short HEAD)"
}

synthetic() {
    mkdir -p "$dir/syn/src"
    cd "$dir/syn"
    git init -q && git config user.email bench@example.com && git config user.name bench
    for ((f = 0; f < FILES; f++)); do
        {
            echo "export function f$f(a, b) {"
            for ((c = 0; c < CALLS; c++)); do
                echo "  console.log(\"f$f call $c\", a + $c, b);"
            done
            if ((f % 50 == 0)); then
                printf '  console.log(\n    a,\n  );\n  console.log(b /* why */);\n'
            fi
            echo "}"
        } >"src/m$f.js"
    done
    git add -A && git commit -qm corpus
    header
    for ((r = 1; r <= RUNS; r++)); do
        measure "synthetic, run $r" edit -p 'console.log($$$A)' -r 'logger.info($$$A)'
    done
}

vue() {
    vue_clone
    cd "$dir/vue"
    measure "vuejs/core, console.log(\$A) → logger.info(\$A)" edit -p 'console.log($A)' -r 'logger.info($A)'
    measure "vuejs/core, console.log(\$\$\$A) → logger.info(\$\$\$A)" edit -p 'console.log($$$A)' -r 'logger.info($$$A)'
}

codemods() {
    vue_clone
    cd "$dir/vue"
    # Inside the repository: review re-runs a scan's rules only from there.
    mkdir .codemods
    cp -r "$CODEMODS/codemods" "$CODEMODS/sgconfig.yml" .codemods/
    git add .codemods && git commit -qm "the codemods rule project"
    measure "vuejs/core, codemods stage-all ($(cat .codemods/codemods/*.yml | grep -c '^id:') rules)" \
        scan --config .codemods/sgconfig.yml --stage
}

essentials() {
    local src=${ESSENTIALS_REPO:-$BENCH_MIRROR/doxygen+doxygen/repo} rules="$dir/essentials"
    [ -d "$src" ] || { log "no repository at $src (ESSENTIALS_REPO)"; return 1; }
    clone "$src" "$dir/cpp"
    mkdir -p "$rules"
    if git clone -q --bare --filter=blob:none https://github.com/coderabbitai/ast-grep-essentials "$dir/ess.git" 2>/dev/null; then
        git --git-dir="$dir/ess.git" archive "$ESSENTIALS_COMMIT" | tar -x -C "$rules"
    else
        git --git-dir="$BENCH_MIRROR/coderabbitai+ast-grep-essentials/repo" archive "$ESSENTIALS_COMMIT" | tar -x -C "$rules"
    fi
    cd "$dir/cpp"
    mkdir .essentials
    cp -r "$rules/rules" "$rules/utils" "$rules/sgconfig.yml" .essentials/
    find .essentials -name '*.yml' -exec sed -i '/^ast-grep-essentials:/d' {} +
    while read -r f; do [ -z "$f" ] || rm -f ".essentials/$f"; done <"$here/pins/essentials/refused.txt"
    git add .essentials && git commit -qm "the ast-grep-essentials rules"
    local n fixable
    n=$(find .essentials/rules -name '*.yml' | wc -l)
    fixable=$(grep -rl '^fix:' .essentials/rules | wc -l)
    log "essentials: $n rule files, $fixable with a fix; repository $(git rev-parse --short HEAD~2)"
    measure "$(basename "$(dirname "$src")" | tr + /), essentials stage-all ($n rule files, $fixable fixable)" \
        scan --config .essentials/sgconfig.yml --stage
}

npm() {
    if [ ! -d "$TS_CORPUS/.git" ]; then
        log "no ts corpus at $TS_CORPUS: building it"
        BENCH_DIR=$(dirname "$(dirname "$TS_CORPUS")") bash "$here/corpus.sh" ts >/dev/null
    fi
    cd /
    rm -rf "$dir/npm"
    clone "$TS_CORPUS" "$dir/npm"
    cd "$dir/npm"
    log "ts corpus: $(git ls-files | wc -l) files"
    mkdir -p .rules/codemods .rules/let/rules
    cp -r "$CODEMODS/codemods" "$CODEMODS/sgconfig.yml" .rules/codemods/
    printf 'ruleDirs:\n  - rules\n' >.rules/let/sgconfig.yml
    cat >.rules/let/rules/use-let.yml <<'YAML'
id: use-let
message: Use let instead of var
severity: warning
language: JavaScript
rule:
  pattern: var $VAR = $VAL
fix: let $VAR = $VAL
YAML
    git add .rules && git commit -qm "the rule projects"
    case " ${NPM_PREVIEWS:-codemods let} " in *" codemods "*)
        measure "npm packages (ts corpus), codemods stage-all ($(cat .rules/codemods/codemods/*.yml | grep -c '^id:') rules)" \
            scan --config .rules/codemods/sgconfig.yml --stage ;;
    esac
    case " ${NPM_PREVIEWS:-codemods let} " in *" let "*)
        measure "npm packages (ts corpus), use-let stage-all over rxjs and date-fns" \
            scan --config .rules/let/sgconfig.yml --stage -- rxjs date-fns ;;
    esac
}

case $mode in
    synthetic) synthetic ;;
    vue) header; vue ;;
    codemods) header; codemods ;;
    essentials) header; essentials ;;
    npm) header; npm ;;
    real) header; vue; codemods; essentials; npm ;;
esac
