#!/usr/bin/env python3
"""The codemod bench (issue 37): real migrations on pinned public repositories.

Each migration (migrations.toml) is staged by `git astedit scan --stage` with its rule
file and checked by `git astedit verify` with the repository's own compiler or linter;
then the same rule file without our keys (`imports`, `edits`) is run by ast-grep
(`ast-grep scan -r RULE -U`) on a fresh checkout and checked by the same command.
Prints the table (sites, files, check result, ours and theirs).

    python3 bench/codemods/run.py [--work DIR] [--only NAME…] [--json]

Needs git, npm, python3 (venv), go and cargo on PATH; `git astedit` (or
$GIT_ASTEDIT). The tools are installed into the work folder on first use (npm:
typescript, the packages vue's compiler types import, @ast-grep/cli; PyPI: ruff).
Repositories are cloned from $ASTEDIT_BENCH_MIRRORS/OWNER+NAME/repo when that exists,
else from GitHub, and checked out at the pinned commit. Nothing of them is committed.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
NPM = [
    "typescript@6.0.3",
    "@babel/parser@7.29.8",
    "@babel/types@7.29.8",
    "entities@7.0.1",
    "estree-walker@2.0.2",
    "source-map-js@1.2.1",
    "@ast-grep/cli@0.51.1",
]
RUFF = "ruff==0.17.6"
OUR_KEYS = ("imports:", "edits:")


def sh(cmd, cwd=None, env=None, check=True):
    """Runs `cmd` (a list), returns (exit code, stdout + stderr)."""
    p = subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if check and p.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{p.stdout}")
    return p.returncode, p.stdout


def tools(work: Path) -> dict:
    """Installs the checkers into `work` once; the environment that finds them."""
    if not (work / "node_modules/.bin/ast-grep").exists():
        (work / "package.json").write_text('{"private": true}\n')
        sh(["npm", "install", "--silent", "--no-audit", "--no-fund", *NPM], cwd=work)
    if not (work / "venv/bin/ruff").exists():
        sh([sys.executable, "-m", "venv", str(work / "venv")])
        sh([str(work / "venv/bin/pip"), "install", "-q", RUFF])
    env = dict(os.environ)
    env["PATH"] = f"{work / 'node_modules/.bin'}:{work / 'venv/bin'}:{env['PATH']}"
    # verify's worktrees go under the work folder, so that module resolution walks up
    # to its node_modules (the repositories' own are not installed).
    (work / "tmp").mkdir(exist_ok=True)
    env["TMPDIR"] = str(work / "tmp")
    env.setdefault("GIT_AUTHOR_NAME", "bench")
    env.setdefault("GIT_AUTHOR_EMAIL", "bench@example.invalid")
    env["GIT_COMMITTER_NAME"] = env["GIT_AUTHOR_NAME"]
    env["GIT_COMMITTER_EMAIL"] = env["GIT_AUTHOR_EMAIL"]
    return env


def checkout(work: Path, name: str, repo: dict, env: dict) -> Path:
    """The repository at its pinned commit plus the bench's setup, on branch `bench`."""
    dest = work / "repos" / name
    if (dest / ".git").exists():
        return dest
    owner_name = repo["url"].removeprefix("https://github.com/")
    mirror = Path(os.environ.get("ASTEDIT_BENCH_MIRRORS", "/nonexistent"))
    source = mirror / owner_name.replace("/", "+") / "repo"
    dest.parent.mkdir(parents=True, exist_ok=True)
    sh(["git", "clone", "-q", str(source) if source.exists() else repo["url"], str(dest)])
    sh(["git", "checkout", "-q", "-b", "bench", repo["commit"]], cwd=dest)
    if "files" in repo:
        shutil.copytree(HERE / repo["files"], dest, dirs_exist_ok=True)
    for path, text in repo.get("append", {}).items():
        with open(dest / path, "a") as f:
            f.write(text)
    if repo.get("lock"):
        sh(["cargo", "generate-lockfile"], cwd=dest, env=env)
        sh(["cargo", "fetch", "--quiet"], cwd=dest, env=env)
    sh(["git", "add", "-A", "-f", "."], cwd=dest)
    sh(["git", "commit", "-q", "--allow-empty", "-m", "bench setup"], cwd=dest, env=env)
    return dest


def reset(dest: Path):
    sh(["git", "reset", "-q", "--hard", "bench"], cwd=dest)
    sh(["git", "clean", "-q", "-fd"], cwd=dest)


def plain_rule(ours: Path, out: Path):
    """`ours` without our keys: the closest rule ast-grep can run."""
    kept, skipping = [], False
    for line in ours.read_text().splitlines(keepends=True):
        if line.startswith(OUR_KEYS):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "\t", "-  ")) or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    out.write_text("".join(kept))


def first_error(output: str) -> str:
    for line in output.splitlines():
        if re.search(r"error|Error|undefined|not used|F821|F401|E402|E999|invalid", line):
            return line.strip()[:160]
    lines = [l for l in output.splitlines() if l.strip()]
    return lines[0].strip()[:160] if lines else ""


# A diagnostic line of the checks: ruff's and go vet's `path:line:col: …`, rustc's and
# tsc's errors, a file `cargo fmt --check` would change.
DIAGNOSTIC = re.compile(
    r"^\S+:\d+:\d+: |^error(\[E\d+\])?: |error TS\d+|^Diff in |^warning: unused"
)


def errors(output: str) -> int:
    """How many diagnostics a check printed (summary lines aside)."""
    return sum(1 for line in output.splitlines() if DIAGNOSTIC.search(line))


def fmt_args(dest, m, astedit, env):
    """With the migration's `fmt`: its [fmt] in the checkout, allowed there as the
    trust chapter says (`git astedit allow`), and `--fmt` for scan."""
    if "fmt" not in m:
        return []
    lines = ["[fmt]"] + [f"{lang} = {json.dumps(cmd)}" for lang, cmd in m["fmt"].items()]
    (dest / "astedit.toml").write_text("\n".join(lines) + "\n")
    sh([*astedit, "allow"], cwd=dest, env=env)
    return ["--fmt"]


def ours(dest, m, check, astedit, env):
    rule = HERE / "migrations" / m["name"] / "ours.yml"
    fmt = fmt_args(dest, m, astedit, env)
    code, out = sh(
        [*astedit, "scan", "--stage", *fmt, "--no-cache", "--config", str(rule), "--json", "--", *m["paths"]],
        cwd=dest, env=env, check=False,
    )
    report = json.loads(out[out.index("{"):])
    pid = report.get("id")
    if not pid:
        return {"sites": 0, "files": 0, "pass": None, "why": "nothing staged"}
    code, out = sh(
        [*astedit, "verify", pid, "--", "sh", "-c", check], cwd=dest, env=env, check=False
    )
    sh([*astedit, "discard", pid], cwd=dest, env=env, check=False)
    return {
        "sites": report.get("fixes", 0),
        "files": len(report.get("files") or []),
        "pass": code == 0,
        "errors": errors(out),
        "why": "" if code == 0 else first_error(out),
    }


def theirs(dest, m, check, work, env):
    rule = work / f"{m['name']}.plain.yml"
    plain_rule(HERE / "migrations" / m["name"] / "ours.yml", rule)
    code, out = sh(
        ["ast-grep", "scan", "-r", str(rule), "-U", *m["paths"]], cwd=dest, env=env, check=False
    )
    applied = re.search(r"Applied (\d+) change", out)
    _, names = sh(["git", "diff", "--name-only"], cwd=dest)
    code, out = sh(["sh", "-c", check], cwd=dest, env=env, check=False)
    return {
        "sites": int(applied.group(1)) if applied else 0,
        "files": len(names.split()),
        "pass": code == 0,
        "errors": errors(out),
        "why": "" if code == 0 else first_error(out),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/astedit-codemods-bench")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    spec = tomllib.loads((HERE / "migrations.toml").read_text())
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = tools(work)
    astedit = [os.environ["GIT_ASTEDIT"]] if "GIT_ASTEDIT" in os.environ else ["git", "astedit"]
    rows = []
    for m in spec["migration"]:
        if args.only and m["name"] not in args.only:
            continue
        repo = spec["repos"][m["repo"]]
        dest = checkout(work, m["repo"], repo, env)
        check = m.get("check", repo["check"])
        reset(dest)
        # The base's own diagnostics under the same check: a repository whose check
        # fails already is judged by whether the migration adds any.
        _, out = sh(["sh", "-c", check], cwd=dest, env=env, check=False)
        base = errors(out)
        a = ours(dest, m, check, astedit, env)
        reset(dest)
        b = theirs(dest, m, check, work, env)
        reset(dest)
        rows.append({"name": m["name"], "repo": f"{repo['url'].removeprefix('https://github.com/')}@{repo['commit'][:10]}", "fmt": "fmt" in m, "base_errors": base, "ours": a, "theirs": b})
        print(f"{m['name']}: ours {a} theirs {b}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    word = {True: "pass", False: "FAIL", None: "-"}
    same = lambda n, base: f"{'yes' if n <= base else 'NO'} ({base}→{n})"
    print("| migration | repository | sites | files | ours passes | ours: same error count as the base | ast-grep (sites/files) | ast-grep passes | ast-grep: same error count as the base | why one fails |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        a, b, base = r["ours"], r["theirs"], r["base_errors"]
        name = r["name"] + (" (--fmt)" if r["fmt"] else "")
        print(
            f"| {name} | {r['repo']} | {a['sites']} | {a['files']} | {word[a['pass']]} "
            f"| {same(a.get('errors', 0), base)} "
            f"| {b['sites']}/{b['files']} | {word[b['pass']]} | {same(b['errors'], base)} "
            f"| {a['why'] or b['why']} |"
        )


if __name__ == "__main__":
    main()
