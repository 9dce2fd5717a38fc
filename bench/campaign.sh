#!/usr/bin/env bash
# Campaign benchmark (issue 27): stages one campaign over N generated local bare
# repositories (default 200, each a few TypeScript files, half of them with matches)
# and reports wall time, peak RSS and the cost per repository.
#   bench/campaign.sh [N] [BINARY]     (BINARY default: target/release/git-astedit)
# AT_ONCE="1 4 8" (the default "1 4") stages the campaign once per value, each time
# from scratch (a fresh state repository and workspace): one at a time vs at once.
set -euo pipefail
n=${1:-200}
AT_ONCE=${AT_ONCE:-1 4}
bin=$(realpath "${2:-$(dirname "$0")/../target/release/git-astedit}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
spec="$tmp/campaign.toml"
cat > "$spec" <<'TOML'
name = "bench"
[change]
ops = [{ pattern = "console.log($A)", rewrite = "logger.info($A)" }]
lang = "ts"
TOML
for i in $(seq 1 "$n"); do
  w="$tmp/src/r$i"
  mkdir -p "$w/src"
  for f in 1 2 3 4 5; do
    if [ $((i % 2)) -eq 0 ]; then
      printf 'export function f%s(x: number) {\n  console.log(x);\n  return x + %s;\n}\n' "$f" "$f" > "$w/src/f$f.ts"
    else
      printf 'export function f%s(x: number) {\n  return x + %s;\n}\n' "$f" "$f" > "$w/src/f$f.ts"
    fi
  done
  git -C "$w" init -q -b main
  git -C "$w" add -A
  git -C "$w" commit -q -m init
  git clone -q --bare -- "$w" "$tmp/r$i.git"
  printf '[[repos]]\nurl = "%s"\n' "$tmp/r$i.git" >> "$spec"
done
# One fresh state repository and workspace per run: each clones every repository.
for k in $AT_ONCE; do
  rm -rf "$tmp/state" "$tmp/ws"
  mkdir "$tmp/state"
  git -C "$tmp/state" init -q -b main
  git -C "$tmp/state" commit -q --allow-empty -m init
  (cd "$tmp/state" && /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$bin" --json campaign stage "$spec" --workspace "$tmp/ws" --at-once "$k" > "$tmp/out.json" 2> "$tmp/err") || { cat "$tmp/err" >&2; }
  read -r wall rss user sys < "$tmp/time"
  totals=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"])' "$tmp/out.json")
  commits=$(git -C "$tmp/state" rev-list --count refs/astedit-campaign/bench)
  python3 - "$n" "$k" "$wall" "$rss" "$totals" "$commits" "$user" "$sys" <<'PY'
import sys
n, k, wall, rss, totals, commits = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
cpu = float(sys.argv[7]) + float(sys.argv[8])
print(f"at once {k}: repositories {n}  totals {totals}  state commits {commits}")
print(f"  wall {wall:.2f} s  CPU (user+system, git children included) {cpu:.2f} s  peak RSS {rss/1024:.1f} MiB  per repository {1000*wall/n:.1f} ms")
PY
done
