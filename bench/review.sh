#!/usr/bin/env bash
# Issue 50 item 6: how long `review` takes to group a ~10,000-site preview, against how
# long staging that preview took, measured in the same run on the same binary.
#
#   bench/review.sh [BIN] [FILES] [CALLS_PER_FILE]
#
# A synthetic corpus: FILES JavaScript files of CALLS_PER_FILE `console.log(...)` calls
# (arguments vary; one file in 50 holds a call over three lines and one keeps a
# comment), one commit. Staging is `edit --no-cache -p 'console.log($$$A)' -r
# 'logger.info($$$A)'`; grouping is `review ID --json` (the recipe re-run on the before
# blobs, matched with the after blobs, grouped). Prints one markdown row a run.
set -euo pipefail
BIN=${1:-target/debug/git-astedit}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
FILES=${2:-500}
CALLS=${3:-20}
RUNS=${RUNS:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
git init -q && git config user.email bench@example.com && git config user.name bench
mkdir -p src
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
now() { date +%s.%N; }
# CPU seconds (user + sys) of the last command, beside the wall time: on a loaded
# machine the wall time says more about the neighbours than about us.
cpu() { awk '{print $1 + $2}' cpu.txt; }
echo "| run | files | sites | groups | outliers | staging wall / CPU (s) | grouping wall / CPU (s) | grouping / staging (CPU) | html bytes |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((r = 1; r <= RUNS; r++)); do
  t0=$(now)
  /usr/bin/time -f "%U %S" -o cpu.txt "$BIN" --json --no-cache edit -p 'console.log($$$A)' -r 'logger.info($$$A)' >edit.json
  c1=$(cpu)
  id=$(python3 -c 'import json; print(json.load(open("edit.json"))["id"])')
  t1=$(now)
  /usr/bin/time -f "%U %S" -o cpu.txt "$BIN" --json review "$id" >review.json
  c2=$(cpu)
  t2=$(now)
  "$BIN" review "$id" --html review.html
  read -r sites groups outliers < <(python3 -c 'import json; v=json.load(open("review.json")); print(v["sites"], len(v["groups"]), v["outliers"])')
  python3 - "$r" "$FILES" "$sites" "$groups" "$outliers" "$t0" "$t1" "$t2" "$c1" "$c2" "$(wc -c <review.html)" <<'PY'
import sys
r, files, sites, groups, outliers, t0, t1, t2, c1, c2, html = sys.argv[1:]
stage, group = float(t1) - float(t0), float(t2) - float(t1)
c1, c2 = float(c1), float(c2)
print(f"| {r} | {files} | {sites} | {groups} | {outliers} | {stage:.2f} / {c1:.2f} | {group:.2f} / {c2:.2f} | {c2 / c1:.2f} | {html} |")
PY
  "$BIN" discard "$id" >/dev/null
done
