#!/usr/bin/env bash
# dist/exercise.sh LABEL [--man]: what dist/check.sh runs against each installed
# artifact, in the environment it set up (env -i, a minimal PATH holding only the
# install's bin folder and the system's). Checks `git astedit --version`, a `grep`, an
# `edit` / `apply` / `undo` round on a fixture repository made here with `git init` (the
# file's bytes on disk after each step), and with --man `git astedit --help` opening the
# manual page through man-db (MANPAGER=cat).
set -uo pipefail

LABEL=${1:?usage: exercise.sh LABEL [--man]}
MAN=${2:-}
FAILED=0
fail() {
    printf 'FAIL [%s] %s\n' "$LABEL" "$*" >&2
    FAILED=1
}
ok() { printf 'ok   [%s] %s\n' "$LABEL" "$*"; }

if command -v cargo >/dev/null 2>&1; then
    fail "cargo is on PATH ($(command -v cargo)): not a clean place"
fi
where=$(command -v git-astedit) || { fail "git-astedit is not on PATH ($PATH)"; exit 1; }
ok "git-astedit on PATH: $where"

expected="git-astedit ${GIT_ASTEDIT_VERSION:?}"
got=$(git astedit --version 2>&1) || fail "git astedit --version exited $?: $got"
[ "$got" = "$expected" ] && ok "git astedit --version: $got" || fail "git astedit --version: '$got', expected '$expected'"

repo=$(mktemp -d "${TMPDIR:-/tmp}/astedit-fixture.XXXXXX")
cd "$repo" || exit 1
git init -q . && git config user.name check && git config user.email check@example.invalid
printf 'function f(a, b) {\n  if (a == b) {\n    console.log(a);\n  }\n}\n' >a.js
printf 'def g(x):\n    print(x)\n' >b.py
git add . && git commit -qm fixture
cp a.js "$repo.a.before"
printf 'function f(a, b) {\n  if (a == b) {\n    logger.info(a);\n  }\n}\n' >"$repo.a.after"

out=$(git astedit grep -p 'console.log($X)' 2>&1)
[ "$out" = 'a.js:3:5: console.log(a)' ] && ok "grep: $out" || fail "grep printed: $out"

json=$(git astedit --json edit -p 'console.log($X)' -r 'logger.info($X)' 2>&1)
id=$(printf '%s' "$json" | sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p')
if [ -n "$id" ]; then ok "edit staged $id"; else fail "edit printed no id: $json"; fi
cmp -s a.js "$repo.a.before" && ok "edit left a.js as it was" || fail "edit changed a.js"

out=$(git astedit apply "$id" 2>&1) || fail "apply exited non-zero: $out"
cmp -s a.js "$repo.a.after" && ok "apply wrote a.js" || fail "a.js after apply: $(cat a.js)"

out=$(git astedit undo "$id" 2>&1) || fail "undo exited non-zero: $out"
cmp -s a.js "$repo.a.before" && ok "undo restored a.js byte for byte" || fail "a.js after undo: $(cat a.js)"
[ -z "$(git status --porcelain)" ] && ok "work tree clean after undo" || fail "git status after undo: $(git status --porcelain)"

if [ "$MAN" = --man ]; then
    # git turns `git astedit --help` into `man git-astedit`; man-db finds the page in
    # BIN/../share/man for each BIN on PATH.
    found=$(man -w git-astedit 2>&1)
    case "$found" in
        "${MAN_PREFIX:-/}"*) ok "man -w git-astedit: $found" ;;
        *) fail "man -w git-astedit: '$found', not under ${MAN_PREFIX:-/}" ;;
    esac
    page=$(MANPAGER=cat MANWIDTH=80 git astedit --help 2>&1)
    if printf '%s' "$page" | grep -q '^GIT-ASTEDIT(1)'; then
        ok "git astedit --help opened the manual ($(printf '%s\n' "$page" | wc -l) lines)"
    else
        fail "git astedit --help: $(printf '%s' "$page" | head -n5)"
    fi
    # shellcheck disable=SC2209 # MANPAGER=cat is an assignment for man, not a value
    page=$(MANPAGER=cat man git-astedit-grep 2>&1)
    printf '%s' "$page" | grep -q '^GIT-ASTEDIT-GREP(1)' && ok "man git-astedit-grep" || fail "man git-astedit-grep: $(printf '%s' "$page" | head -n3)"
fi

rm -rf "$repo" "$repo.a.before" "$repo.a.after"
exit "$FAILED"
