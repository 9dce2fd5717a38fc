#!/usr/bin/env python3
"""What recording a shell command's window costs (issue 54 item 1: budget 50 ms warm on
100,000 files): the `Bash` PreToolUse of `git astedit agent-hook claude-code`, which
records the work tree's state before the command (see `src/ops/agent_hook/shell.rs`).

    bench/agents-shell-window.py [--bin target/release/git-astedit] [--files 100000]
                                 [--per-dir 100] [--runs 7] [--dirty 0] [--keep DIR]

Builds a synthetic repository of FILES one-line files (`src/dNNNN/fNNN.ts`, PER_DIR a
folder, one commit), then runs the hook's Bash PreToolUse RUNS times after one cold
run; each run's CPU (user + sys of the child, from wait4) and wall time are printed, then
the median of the warm runs, beside `git status --porcelain` on the same tree. With
`--dirty N`, N tracked files are rewritten (other content, new stat data) before the
runs: their blobs are read and hashed on the first run and taken from the record's
cache after.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(argv, cwd, stdin=None):
    """(user + sys seconds, wall seconds, stdout) of one child run."""
    start = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out, err = p.communicate(stdin)
    wall = time.monotonic() - start
    # communicate() reaped it: the rusage of children grew by its use alone.
    return wall, out, err, p.returncode


def cpu_of(argv, cwd, stdin=None):
    before = os.times()
    wall, out, err, code = timed(argv, cwd, stdin)
    after = os.times()
    cpu = (after.children_user - before.children_user) + \
          (after.children_system - before.children_system)
    if code != 0:
        sys.exit(f"{argv[0]} exited {code}: {err.decode(errors='replace')}")
    return cpu, wall, out


def build(root, files, per_dir):
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", "init", "-q", root], check=True)
    for i in range(files):
        d = os.path.join(root, "src", f"d{i // per_dir:04d}")
        if i % per_dir == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i % per_dir:03d}.ts"), "w") as f:
            f.write(f"export const v{i} = {i};\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/git-astedit")
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--per-dir", type=int, default=100)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dirty", type=int, default=0)
    ap.add_argument("--keep", help="build the repository here and keep it")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    root = a.keep or tempfile.mkdtemp(prefix="astedit-window-")
    if not os.path.exists(os.path.join(root, ".git")):
        t = time.monotonic()
        build(root, a.files, a.per_dir)
        print(f"built {a.files} files in {time.monotonic() - t:.0f} s: {root}")
    for i in range(a.dirty):
        with open(os.path.join(root, "src", f"d{i // a.per_dir:04d}",
                               f"f{i % a.per_dir:03d}.ts"), "a") as f:
            f.write("// dirty\n")
    event = json.dumps({
        "session_id": "bench", "cwd": root, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_use_id": "toolu_bench",
        "tool_input": {"command": "true", "description": "bench"},
    }).encode()
    argv = [binary, "agent-hook", "claude-code"]
    cold = cpu_of(argv, root, event)
    warm = [cpu_of(argv, root, event) for _ in range(a.runs)]
    status = [cpu_of(["git", "status", "--porcelain"], root) for _ in range(3)]
    print(f"cold: cpu {cold[0] * 1000:.0f} ms, wall {cold[1] * 1000:.0f} ms")
    for i, (cpu, wall, _) in enumerate(warm, 1):
        print(f"warm {i}: cpu {cpu * 1000:.0f} ms, wall {wall * 1000:.0f} ms")
    med = lambda xs: statistics.median(xs) * 1000
    print(f"warm median: cpu {med([w[0] for w in warm]):.0f} ms, "
          f"wall {med([w[1] for w in warm]):.0f} ms")
    print(f"git status --porcelain median: cpu {med([s[0] for s in status]):.0f} ms, "
          f"wall {med([s[1] for s in status]):.0f} ms")
    print(json.dumps({"files": a.files, "dirty": a.dirty, "bin": binary,
                      "cold_cpu_ms": cold[0] * 1000,
                      "warm_cpu_ms": [w[0] * 1000 for w in warm],
                      "warm_wall_ms": [w[1] * 1000 for w in warm],
                      "git_status_cpu_ms": [s[0] * 1000 for s in status]}))


if __name__ == "__main__":
    main()
