#!/usr/bin/env python3
"""Replays `scan --baseline PARENT` over a repository's recent history (issue 39).

For each of the last N first-parent commits C of a repository (a clone is made, the
repository itself is not touched), C is checked out and
`git astedit --json scan -c RULES --baseline C^1` runs. Its verdicts are compared with a
ground truth taken from git's own diff: a finding is truly new only when one of its
lines is an added line of `git diff -w --color-moved=plain
--color-moved-ws=ignore-all-space C^1 C` that git does not show as moved (re-indented
lines are no change under -w; moved lines have their own colour). Counted:

* false new:  `new` by the scan, but its lines only moved or were re-indented;
* missed new: `unchanged` by the scan, but a line of it was added by the commit.

Then the speed: on the newest commit, a plain scan and `scan --baseline HEAD~1`, each
cold (an empty cache folder) and warm (run again), median of --runs.

Standard library only. Example:

    bench/baseline.py --repo /work/.mirror/psf+requests/repo \\
        --rules bench/baseline/rules.yml --bin target/release/git-astedit
"""

import argparse
import difflib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Colours we set, so that the moved lines can be told from the new ones.
COLOURS = [
    "color.diff.new=green",
    "color.diff.old=red",
    "color.diff.newMoved=blue",
    "color.diff.newMovedAlternative=blue",
    "color.diff.oldMoved=magenta",
    "color.diff.oldMovedAlternative=magenta",
    "color.diff.newMovedDimmed=blue",
    "color.diff.newMovedAlternativeDimmed=blue",
    "color.diff.meta=normal",
    "color.diff.frag=normal",
    "color.diff.func=normal",
    "color.diff.context=normal",
    "color.diff.whitespace=normal",
]
GREEN = "\x1b[32m"


def git(repo, *args, check=True):
    cmd = ["git", "-C", repo]
    for c in COLOURS:
        cmd += ["-c", c]
    out = subprocess.run(cmd + list(args), capture_output=True, text=True, errors="replace")
    if check and out.returncode != 0:
        sys.exit(f"git {' '.join(args)} failed: {out.stderr}")
    return out.stdout


def added_lines(repo, parent, commit):
    """path -> the line numbers (in `commit`) added by it, moved and whitespace-only
    changes left out; and of those, the lines of hunks that delete nothing."""
    diff = git(
        repo, "diff", "--color=always", "-w", "-M", "--color-moved=plain",
        "--color-moved-ws=ignore-all-space", "-U0", "--no-ext-diff", parent, commit, "--",
    )
    added = {}
    pure = {}
    path = None
    line = 0
    inserting = False
    for raw in diff.split("\n"):
        plain = ANSI.sub("", raw)
        if plain.startswith("+++ "):
            name = plain[4:]
            path = name[2:] if name.startswith("b/") else None
            continue
        if plain.startswith("--- ") or plain.startswith("diff --git"):
            continue
        m = HUNK.match(plain)
        if m:
            line = int(m.group(2))
            # A hunk that deletes nothing only inserts: its lines are new whole.
            inserting = m.group(1) == "0"
            continue
        if path is None:
            continue
        if plain.startswith("+"):
            # A new line is green; a moved one has the moved colour.
            if raw.lstrip().startswith(GREEN) or raw.startswith(GREEN):
                added.setdefault(path, set()).add(line)
                if inserting:
                    pure.setdefault(path, set()).add(line)
            line += 1
        elif plain.startswith(" "):
            line += 1
    return added, pure


TOKEN = re.compile(r"\w+|\S")


def tokens_added(old, new):
    """The character offsets of `new` inside tokens that a token-level diff of `old`
    and `new` shows as inserted or replaced."""
    a = [m.group(0) for m in TOKEN.finditer(old)]
    spans = [(m.start(), m.end()) for m in TOKEN.finditer(new)]
    b = [new[s:e] for s, e in spans]
    added = set()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("insert", "replace"):
            for s, e in spans[j1:j2]:
                added.update(range(s, e))
    return added


def offset(text, line, column):
    """The character offset of a 1-based line and column."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts[min(line, len(starts)) - 1] + column - 1


class Truth:
    """Whether a finding at a commit is truly new: a line of it is a (not moved, not
    only re-indented) added line, and a token of its text is one the token-level diff
    of the file adds."""

    def __init__(self, repo, parent, commit):
        self.repo, self.parent, self.commit = repo, parent, commit
        self.added, self.pure = added_lines(repo, parent, commit)
        self.sources = {}
        for row in git(repo, "diff", "--name-status", "-M", parent, commit).splitlines():
            parts = row.split("\t")
            if parts[0].startswith("R") and len(parts) == 3:
                self.sources[parts[2]] = parts[1]
        self.tokens = {}

    def new(self, f):
        lines = set(range(f["line"], f["end_line"] + 1))
        if not lines & self.added.get(f["path"], set()):
            return False
        # Lines only inserted are new; in a changed hunk, the tokens tell.
        if lines & self.pure.get(f["path"], set()):
            return True
        path = f["path"]
        if path not in self.tokens:
            old_path = self.sources.get(path, path)
            old = git(self.repo, "show", f"{self.parent}:{old_path}", check=False)
            new = git(self.repo, "show", f"{self.commit}:{path}", check=False)
            self.tokens[path] = (new, tokens_added(old, new))
        text, added = self.tokens[path]
        start = offset(text, f["line"], f["column"])
        end = offset(text, f["end_line"], f["end_column"])
        return any(i in added for i in range(start, max(end, start + 1)))


def scan(binary, repo, rules, extra, cache):
    cmd = [binary, "--json", "--cache-dir", cache, "scan", "-c", rules] + extra
    start = time.monotonic()
    out = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    took = time.monotonic() - start
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr}")
    return json.loads(out.stdout), took


def replay(args, work, cache):
    commits = git(work, "rev-list", "--first-parent", "-n", str(args.commits), "HEAD").split()
    commits.reverse()
    totals = dict(commits=0, touched=0, findings=0, new=0, truly_new=0,
                  false_new=0, missed_new=0, absent=0)
    examples = []
    for c in commits:
        parents = git(work, "rev-list", "--parents", "-n", "1", c).split()[1:]
        if not parents:
            continue
        parent = parents[0]
        git(work, "checkout", "-q", "--force", c)
        git(work, "clean", "-q", "-fdx")
        report, _ = scan(args.bin, work, args.rules, ["--baseline", parent], cache)
        truth = Truth(work, parent, c)
        totals["commits"] += 1
        b = report["baseline"]
        if b["new"] or b["absent"]:
            totals["touched"] += 1
        totals["absent"] += b["absent"]
        for f in report["findings"]:
            totals["findings"] += 1
            truly = truth.new(f)
            said_new = f["baseline"] == "new"
            totals["new"] += said_new
            totals["truly_new"] += truly
            if said_new and not truly:
                totals["false_new"] += 1
                examples.append(("false new", c[:10], f["path"], f["line"], f["rule"]))
            if truly and not said_new:
                totals["missed_new"] += 1
                examples.append(("missed new", c[:10], f["path"], f["line"], f["rule"]))
    return totals, examples


def median_time(args, work, extra, cold):
    times = []
    for _ in range(args.runs):
        cache = tempfile.mkdtemp(prefix="astedit-cache-")
        try:
            if not cold:
                scan(args.bin, work, args.rules, extra, cache)
            _, took = scan(args.bin, work, args.rules, extra, cache)
            times.append(took)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return statistics.median(times)


def speed(args, work):
    git(work, "checkout", "-q", "--force", args.tip)
    out = {}
    for cold in (True, False):
        plain = median_time(args, work, [], cold)
        base = median_time(args, work, ["--baseline", "HEAD~1"], cold)
        out["cold" if cold else "warm"] = (plain, base, base / plain)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repo", required=True, help="a repository (path or URL) to clone")
    p.add_argument("--rules", required=True, help="the rule file to scan with")
    p.add_argument("--bin", default="target/release/git-astedit")
    p.add_argument("--commits", type=int, default=200)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--no-speed", action="store_true")
    p.add_argument("--out", help="also write the tables (Markdown) to this file")
    args = p.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.rules = os.path.abspath(args.rules)
    tmp = tempfile.mkdtemp(prefix="astedit-baseline-")
    work = os.path.join(tmp, "repo")
    subprocess.run(["git", "clone", "-q", "--no-checkout", args.repo, work], check=True)
    args.tip = git(work, "rev-parse", "HEAD").strip()
    cache = os.path.join(tmp, "cache")
    totals, examples = replay(args, work, cache)
    name = args.repo.rstrip("/").removesuffix("/repo").rsplit("/", 1)[-1]
    lines = [
        f"Replay of `scan --baseline PARENT` over the last {totals['commits']} first-parent "
        f"commits of {name} (tip {args.tip[:10]}), rules `{os.path.basename(args.rules)}`:",
        "",
        "| commits | with a new or fixed finding | findings checked | new (scan) "
        "| truly new (diff) | false new | missed new | absent |",
        "|---|---|---|---|---|---|---|---|",
        f"| {totals['commits']} | {totals['touched']} | {totals['findings']} | {totals['new']} "
        f"| {totals['truly_new']} | {totals['false_new']} | {totals['missed_new']} "
        f"| {totals['absent']} |",
    ]
    for e in examples[:20]:
        lines.append(f"* {e[0]}: {e[1]} {e[2]}:{e[3]} [{e[4]}]")
    if not args.no_speed:
        s = speed(args, work)
        lines += [
            "",
            f"Speed at the tip (median of {args.runs}): plain `scan` against "
            "`scan --baseline HEAD~1`:",
            "",
            "| cache | plain | --baseline HEAD~1 | ratio |",
            "|---|---|---|---|",
        ]
        for k in ("warm", "cold"):
            plain, base, ratio = s[k]
            lines.append(f"| {k} | {plain * 1000:.0f} ms | {base * 1000:.0f} ms | {ratio:.2f}× |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
