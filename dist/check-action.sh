#!/usr/bin/env bash
# dist/check-action.sh WHEEL-OR-BINARY: runs the GitHub Action's steps (dist/action.sh,
# as action.yml runs them) the way a runner would, with GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY, GITHUB_PATH, GITHUB_WORKSPACE and RUNNER_TEMP pointed at temp
# files and a fixture repository whose rule finds something, and checks the outputs,
# the summary, the annotations and the SARIF file. The install step gets the argument as
# its `from` input (a wheel goes through the same pip-into-a-venv path as a release).
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: dist/check-action.sh WHEEL-OR-BINARY" >&2
    exit 2
fi
FROM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ACTION="$ROOT/dist/action.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/astedit-action.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILURES=0
fail() {
    printf 'FAIL [%s] %s\n' "$CASE" "$*" >&2
    FAILURES=$((FAILURES + 1))
}
ok() { printf 'ok   [%s] %s\n' "$CASE" "$*"; }

# The fixture: a rule (the README's scan example) that finds one `==` and fixes it.
REPO="$WORK/workspace"
mkdir -p "$REPO/src"
cd "$REPO" || exit 1
git init -q . && git config user.name check && git config user.email check@example.invalid
cat >astedit.toml <<'EOF'
[[rules]]
id = "strict-equality"
language = "javascript"
severity = "error"
message = "use === ($A)"
rule.pattern = "$A == $B"
constraints.B.not.kind = "null"
fix = "$A === $B"
EOF
printf 'function f(a, b) {\n  return a == b || a == null;\n}\n' >src/a.js
printf 'const x = 1;\n' >src/clean.js
git add . && git commit -qm fixture
cp src/a.js "$WORK/a.js.orig"

# A runner's environment: only the system's PATH plus what the install step added.
BASE_PATH=/usr/local/bin:/usr/bin:/bin
runner() {
    env -i HOME="$WORK/home" LANG=C.UTF-8 PATH="$STEP_PATH" GITHUB_ACTIONS=true \
        GITHUB_WORKSPACE="$REPO" RUNNER_TEMP="$WORK/runner-temp" \
        GITHUB_OUTPUT="$WORK/output" GITHUB_STEP_SUMMARY="$WORK/summary" GITHUB_PATH="$WORK/path" \
        GITHUB_ACTION_PATH="$ROOT" "$@"
}
# output NAME: the value the last step wrote for NAME.
output() { sed -n "s/^$1=//p" "$WORK/output" | tail -n1; }

CASE=install
mkdir -p "$WORK/home" "$WORK/runner-temp"
: >"$WORK/path"
STEP_PATH=$BASE_PATH
if runner INPUT_FROM="$FROM" INPUT_VERSION= bash "$ACTION" install >"$WORK/install.log" 2>&1; then
    ok "installed from $(basename "$FROM"): $(tail -n1 "$WORK/install.log")"
else
    cat "$WORK/install.log" >&2
    fail "install step"
fi
added=$(paste -sd: "$WORK/path")
[ -n "$added" ] && ok "GITHUB_PATH: $added" || fail "the install step added nothing to GITHUB_PATH"
STEP_PATH="$added:$BASE_PATH"

# scan CASE EXPECTED-EXIT INPUT=VALUE...: the scan step with fresh output files.
scan_step() {
    CASE=$1
    local want=$2
    shift 2
    : >"$WORK/output"
    : >"$WORK/summary"
    local got=0
    runner "$@" bash "$ACTION" scan >"$WORK/$CASE.out" 2>"$WORK/$CASE.err" || got=$?
    if [ "$got" = "$want" ]; then ok "exit $got"; else
        fail "exit $got, expected $want"
        cat "$WORK/$CASE.out" "$WORK/$CASE.err" >&2
    fi
}
expect_output() {
    local value
    value=$(output "$1")
    [ "$value" = "$2" ] && ok "output $1=$value" || fail "output $1='$value', expected '$2'"
}

# 1. check + github annotations: fails on the finding, outputs and summary written.
scan_step check-github 1 INPUT_MODE=check INPUT_FORMAT=github INPUT_FAIL_ON_FINDINGS=true
expect_output findings 1
expect_output errors 1
expect_output exit-code 1
expect_output sarif-file ""
grep -q '^::error file=src/a.js,line=2,.*title=strict-equality::use === (a)' "$WORK/check-github.out" &&
    ok "annotation printed" || fail "no ::error annotation for src/a.js:2 in: $(head -n5 "$WORK/check-github.out")"
grep -q '^+  return a === b || a == null;' "$WORK/check-github.out" && ok "the fix's diff printed" ||
    fail "no diff of the fix in the log"
grep -q '^| error | `strict-equality` | `src/a.js:2:10` | use === (a) |$' "$WORK/summary" &&
    ok "summary has the finding's row" || fail "summary: $(cat "$WORK/summary")"
cmp -s src/a.js "$WORK/a.js.orig" && ok "check wrote nothing" || fail "check changed src/a.js"

# 2. check + sarif, not failing: the SARIF file for code scanning.
scan_step check-sarif 0 INPUT_MODE=check INPUT_FORMAT=sarif INPUT_FAIL_ON_FINDINGS=false
expect_output findings 1
expect_output exit-code 1
sarif=$(output sarif-file)
expect_output sarif-file "$WORK/runner-temp/git-astedit.sarif"
if [ -s "$sarif" ] && python3 - "$sarif" <<'EOF'; then ok "SARIF 2.1.0 with one result for src/a.js"; else fail "SARIF: $(head -c 300 "$sarif")"; fi
import json, sys
log = json.load(open(sys.argv[1]))
assert log["version"] == "2.1.0"
results = log["runs"][0]["results"]
assert len(results) == 1, results
assert results[0]["ruleId"] == "strict-equality"
assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/a.js"
EOF
grep -q '^SARIF: ' "$WORK/summary" && ok "summary names the SARIF file" || fail "summary: $(cat "$WORK/summary")"

# 3. stage: the fix as a preview, the work tree untouched, the preview id output; not a
# failure (staging is what was asked).
scan_step stage 0 INPUT_MODE=stage INPUT_FORMAT=github
preview=$(output preview)
[[ "$preview" =~ ^[0-9a-f]{12}$ ]] && ok "output preview=$preview" || fail "output preview='$preview'"
cmp -s src/a.js "$WORK/a.js.orig" && ok "stage wrote nothing to the work tree" || fail "stage changed src/a.js"
if [ -n "$preview" ]; then
    STEP_PATH="$added:$BASE_PATH" runner git astedit --no-pager show "$preview" 2>&1 | grep -q '^+  return a === b' &&
        ok "git astedit show $preview has the fix" || fail "git astedit show $preview"
fi
grep -q "preview \`$preview\`" "$WORK/summary" && ok "summary names the preview" || fail "summary: $(cat "$WORK/summary")"

# 4. paths and config inputs: a clean path, a config file given by name.
cp astedit.toml "$WORK/rules.toml"
scan_step clean-path 0 INPUT_MODE=check INPUT_FORMAT=github INPUT_PATHS="src/clean.js" INPUT_CONFIG="$WORK/rules.toml"
expect_output findings 0
expect_output exit-code 0

# 5. baseline: the finding is old (it is in HEAD), so nothing fails; on a pull request
# (GITHUB_BASE_REF) auto is the default and a new `==` is the one finding.
scan_step baseline-head 0 INPUT_MODE=check INPUT_FORMAT=github INPUT_BASELINE=HEAD
expect_output findings 0
expect_output exit-code 0
printf 'function g(c, d) {\n  return c == d;\n}\n' >src/new.js
scan_step baseline-pr 1 INPUT_MODE=report INPUT_FORMAT=github GITHUB_BASE_REF=main
expect_output findings 1
grep -q '^::error file=src/new.js,line=2' "$WORK/baseline-pr.out" && ok "only the new finding annotated" ||
    fail "baseline-pr: $(cat "$WORK/baseline-pr.out")"
rm src/new.js

# 6. a bad input: exit 2, an error annotation.
scan_step bad-mode 2 INPUT_MODE=apply INPUT_FORMAT=github
grep -q "^::error title=git-astedit action::mode: 'apply'" "$WORK/bad-mode.out" && ok "bad mode named" ||
    fail "bad mode: $(cat "$WORK/bad-mode.out")"

echo
if [ "$FAILURES" -ne 0 ]; then
    echo "check-action.sh: $FAILURES check(s) FAILED" >&2
    exit 1
fi
echo "check-action.sh: the action's steps and outputs are as expected"
