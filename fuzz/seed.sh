#!/bin/sh
# Seeds fuzz/corpus/<target>/ at run time from the acceptance data (never committed)
# and a few hand-made inputs: sh fuzz/seed.sh [ACCEPTANCE_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
acc=${1:-/work/shared/acceptance}
c=$here/corpus
mkdir -p "$c/patch" "$c/pattern" "$c/rules" "$c/mcp_line" "$c/journal" "$c/record"
n=0
# patch: PATCH NUL FILE, the case's paths renamed to the target's f.txt.
for p in $(find "$acc/apply-patch" -name patch.txt 2>/dev/null | sort); do
  d=$(dirname "$p")
  f=$(find "$d/input" -type f 2>/dev/null | sort | head -n 1)
  n=$((n + 1))
  { sed -E 's/^\*\*\* (Update|Delete|Add) File: .*/*** \1 File: f.txt/' "$p"
    printf '\000'
    [ -n "$f" ] && cat "$f"; } > "$c/patch/acc-$n" || true
done
# rules: FORMAT-BYTE TEXT (odd: YAML); the repository's own astedit.toml as TOML.
n=0
for r in $(find "$acc/ast-grep-projects" -type f \( -name '*.yml' -o -name '*.yaml' \) 2>/dev/null | sort); do
  n=$((n + 1))
  { printf '\001'; cat "$r"; } > "$c/rules/acc-$n"
done
[ -f "$here/../fixtures/astedit.toml" ] && { printf '\000'; cat "$here/../fixtures/astedit.toml"; } > "$c/rules/fixtures-toml"
# pattern: LANG-BYTE PATTERN NUL SOURCE, from the rules' one-line patterns (JavaScript).
n=0
grep -rhoE '^\s*pattern:\s*.+$' "$acc/ast-grep-projects" 2>/dev/null | sed -E 's/^\s*pattern:\s*//' | sort -u | head -n 300 |
while IFS= read -r pat; do
  n=$((n + 1))
  { printf '\000%s\000' "$pat"; printf 'function f(a) { console.log(a, b); return g(a) + 1; }\n'; } > "$c/pattern/acc-$n"
done
printf '\002foo($A)\000fn main() { foo(foo(1)); }\n' > "$c/pattern/rust"
printf '\003print($$$A)\000print(1, 2)\n' > "$c/pattern/python"
# mcp_line: one JSON-RPC message a line.
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}' > "$c/mcp_line/initialize"
printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' > "$c/mcp_line/list"
printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"foo($A)"}}}' > "$c/mcp_line/call"
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' > "$c/mcp_line/notify"
# journal: event messages; record: an applying record.
printf '%s' '{"event":"applied","id":"3f9c2a1b7d0e","commit":"3f9c2a1b7d0e00000000000000000000000000ff","time":1767225600,"reason":"r","files":["a.js"],"who":"A <a@b>","kind":"edit","run":"abc","made_commit":"ab"}' > "$c/journal/applied"
printf '%s' '{"event":"recovered","id":"3f9c2a1b7d0e","commit":"","time":0,"op":"undo","action":"rolled-back","notes":["n"]}' > "$c/journal/staged"
z=0000000000000000000000000000000000000000
printf '%s' "{\"version\":1,\"op\":\"apply\",\"id\":\"3f9c2a1b7d0e\",\"commit\":\"$z\",\"kind\":\"edit\",\"run\":\"r1\",\"pid\":1,\"phase\":\"prepared\",\"ops\":[{\"path\":\"a/b.js\",\"from\":{\"blob\":\"$z\",\"mode\":\"regular\"},\"to\":null,\"temp\":null,\"perm\":420}],\"created_dirs\":[\"a\"]}" > "$c/record/apply"
for t in patch pattern rules mcp_line journal record; do
  echo "$t: $(ls "$c/$t" | wc -l) seeds"
done
