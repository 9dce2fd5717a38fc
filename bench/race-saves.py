#!/usr/bin/env python3
"""The save-during-apply race (issue 21, item 2), measured.

A repository of N files is rewritten by one preview; while `apply` renames, a writer
saves some of the targets, each once, at a random instant after the run's point of no
return (the applying record turns `committed`). After the run, each save is one of:

  in place      the file holds the save (it landed after the file's rename, or the run
                put it back)
  named         the file does not hold it, but the run's report names the file
  lost          the file does not hold it and nothing names it: the failure

Usage: bench/race-saves.py [--files N] [--rounds R] [--saves S] [--style in-place|rename]
                           BINARY [BINARY ...]
Prints one row per binary. Timing-dependent by nature: run it on an idle machine and
read the counts, not single rounds.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(n):
    repo = tempfile.mkdtemp(prefix="astedit-race-")
    git(repo, "init", "-q")
    git(repo, "config", "user.name", "race")
    git(repo, "config", "user.email", "race@example.com")
    os.makedirs(os.path.join(repo, "src"))
    for i in range(n):
        with open(os.path.join(repo, "src", f"f{i:05}.ts"), "w") as f:
            f.write(f"export function f{i}() {{\n  return foo({i});\n}}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def save(path, content, style):
    if style == "in-place":
        with open(path, "w") as f:
            f.write(content)
    else:
        tmp = path + ".editor-tmp"
        with open(tmp, "w") as f:
            f.write(content)
        os.rename(tmp, path)


def round_(binary, repo, n, saves, style, window, rng):
    git(repo, "checkout", "-qf", "HEAD", "--", ".")
    git(repo, "clean", "-qfdx", "src")
    staged = subprocess.run(
        [binary, "edit", "-p", "foo($A)", "-r", "bar($A)", "src"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    if staged.returncode != 0:
        sys.exit(f"staging failed: {staged.stderr}")
    record = os.path.join(repo, ".git", "astedit-applying.json")
    targets = rng.sample(range(n), saves)
    delays = sorted(rng.uniform(0, window) for _ in targets)
    written = {}

    finished = threading.Event()

    def writer():
        while not finished.is_set():
            try:
                with open(record) as f:
                    if '"committed"' in f.read():
                        break
            except OSError:
                pass
        else:
            return  # the run ended before it was seen committed: no save this round
        start = time.monotonic()
        for i, d in zip(targets, delays):
            while time.monotonic() - start < d:
                pass
            path = os.path.join(repo, "src", f"f{i:05}.ts")
            content = f"// saved by the writer: {i}\n"
            save(path, content, style)
            written[path] = content

    t = threading.Thread(target=writer)
    t.start()
    applied = subprocess.run(
        [binary, "--json", "apply"], cwd=repo, capture_output=True, text=True
    )
    finished.set()
    t.join()
    report = applied.stdout + applied.stderr
    counts = {"in place": 0, "named": 0, "lost": 0, "missed": 0 if written or not saves else 1}
    for path, content in written.items():
        with open(path) as f:
            now = f.read()
        rel = os.path.relpath(path, repo)
        if now == content:
            counts["in place"] += 1
        elif rel in report:
            counts["named"] += 1
        else:
            counts["lost"] += 1
    # An unfinished run waits for `recover`: drop it so the next round starts clean.
    if applied.returncode == 3:
        subprocess.run([binary, "recover", "--abandon"], cwd=repo, capture_output=True)
    subprocess.run([binary, "discard"], cwd=repo, capture_output=True)
    return applied.returncode, counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=80)
    ap.add_argument("--saves", type=int, default=1)
    ap.add_argument("--style", choices=["in-place", "rename"], default="in-place")
    ap.add_argument(
        "--window",
        type=float,
        default=None,
        help="seconds after the commit point within which saves land "
        "(default: the rename phase of a trial run)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    repo = make_repo(args.files)
    try:
        print(
            f"{args.files} files, {args.rounds} rounds, {args.saves} save(s) a round, "
            f"{args.style} saves, load {os.getloadavg()[0]:.2f}"
        )
        print(
            "| binary | saves | in place | named | lost | exit 0 / 3 / other "
            "| rounds without a save |"
        )
        print("|---|---:|---:|---:|---:|---|---:|")
        window = args.window
        if window is None:
            # A quarter of a whole round (staging included) of the first binary with no
            # writer; the same window for every binary, so their rows compare.
            t0 = time.monotonic()
            round_(args.binaries[0], repo, args.files, 0, args.style, 0, random.Random(0))
            window = max(0.005, (time.monotonic() - t0) / 4)
        print(f"saves land within {window * 1000:.0f} ms of the commit point")
        for binary in args.binaries:
            rng = random.Random(args.seed)
            totals = {"in place": 0, "named": 0, "lost": 0, "missed": 0}
            exits = {0: 0, 3: 0, "other": 0}
            for _ in range(args.rounds):
                code, counts = round_(
                    binary, repo, args.files, args.saves, args.style, window, rng
                )
                exits[code if code in (0, 3) else "other"] += 1
                for k, v in counts.items():
                    totals[k] += v
            n = totals["in place"] + totals["named"] + totals["lost"]
            print(
                f"| {os.path.basename(binary)} | {n} | {totals['in place']} | "
                f"{totals['named']} | {totals['lost']} | "
                f"{exits[0]} / {exits[3]} / {exits['other']} | {totals['missed']} |"
            )
    finally:
        shutil.rmtree(repo, ignore_errors=True)


if __name__ == "__main__":
    main()
