#!/usr/bin/env python3
"""What recording a shell command's window costs (issue 54 item 1: budget 50 ms warm on
100,000 files): the `Bash` PreToolUse of `git astedit agent-hook claude-code`, which
records the work tree's state before the command (see `crates/ops/src/ops/agent_hook/shell.rs`).

    bench/agents-shell-window.py [--bin target/release/git-astedit] [--files 100000]
                                 [--per-dir 100] [--runs 7] [--dirty 0] [--keep DIR]
                                 [--watchman] [--touch N]

Builds a synthetic repository of FILES one-line files (`src/dNNNN/fNNN.ts`, PER_DIR a
folder, one commit), then runs the hook's Bash PreToolUse RUNS times after one cold
run; each run's CPU (user + sys of the child, from wait4) and wall time are printed, then
the median of the warm runs, beside `git status --porcelain` on the same tree. With
`--dirty N`, N tracked files are rewritten (other content, new stat data) before the
runs: their blobs are read and hashed on the first run and taken from the record's
cache after.

With `--watchman`, a Watchman service of the bench's own is started (socket, state and
log in a temporary folder, given to the hook as `WATCHMAN_SOCK`; stopped at the end)
and watches the tree, so the record asks it what changed since the last record's
clock instead of looking at every file; the service's own CPU (from /proc) is printed
beside the hook's. With `--touch N`, N files are rewritten before each warm run (what
changed between two records). Each run prints how the record was taken (`monitor`
in the window's file: `watchman` or `stat`).
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from watchman_service import Watchman


def cpu_of(argv, cwd, stdin=None, env=None):
    """(user + sys seconds, wall seconds, stdout) of one child run, the child's own
    CPU and its reaped children's (the watchman client it runs), from wait4."""
    start = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    if stdin:
        p.stdin.write(stdin)
    p.stdin.close()
    out, err = p.stdout.read(), p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"{argv[0]} exited {p.returncode}: {err.decode(errors='replace')}")
    return ru.ru_utime + ru.ru_stime, wall, out


def monitor(root):
    """How the last record was taken (the window's file of the bench's session)."""
    for f in glob.glob(os.path.join(root, ".git", "astedit-agents", "*", "shell-*.json")):
        with open(f) as fh:
            return json.load(fh).get("monitor")
    return None


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
    ap.add_argument("--watchman", action="store_true",
                    help="run a Watchman service watching the tree")
    ap.add_argument("--touch", type=int, default=0,
                    help="files rewritten before each warm run")
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
    env = dict(os.environ)
    wm = None
    if a.watchman:
        wm = Watchman()
        wm.watch(root)
        env["WATCHMAN_SOCK"] = wm.sock
    else:
        env.pop("WATCHMAN_SOCK", None)
    try:
        cold = cpu_of(argv, root, event, env)
        print(f"cold: monitor {monitor(root)}")
        warm, served = [], []
        for i in range(a.runs):
            for j in range(a.touch):
                k = (i * a.touch + j) % a.files
                with open(os.path.join(root, "src", f"d{k // a.per_dir:04d}",
                                       f"f{k % a.per_dir:03d}.ts"), "a") as f:
                    f.write(f"// touched {i}\n")
            before = wm.cpu() if wm else 0
            warm.append(cpu_of(argv, root, event, env))
            served.append((wm.cpu() - before) if wm else 0)
            print(f"warm {i + 1}: monitor {monitor(root)}")
    finally:
        if wm:
            wm.stop()
    status = [cpu_of(["git", "status", "--porcelain"], root) for _ in range(3)]
    print(f"cold: cpu {cold[0] * 1000:.0f} ms, wall {cold[1] * 1000:.0f} ms")
    for i, (cpu, wall, _) in enumerate(warm, 1):
        print(f"warm {i}: cpu {cpu * 1000:.0f} ms, wall {wall * 1000:.0f} ms")
    med = lambda xs: statistics.median(xs) * 1000
    print(f"warm median: cpu {med([w[0] for w in warm]):.0f} ms, "
          f"wall {med([w[1] for w in warm]):.0f} ms")
    print(f"git status --porcelain median: cpu {med([s[0] for s in status]):.0f} ms, "
          f"wall {med([s[1] for s in status]):.0f} ms")
    if wm:
        print(f"watchman service: cpu median {med(served):.1f} ms a run")
    print(json.dumps({"files": a.files, "dirty": a.dirty, "bin": binary,
                      "cold_cpu_ms": cold[0] * 1000,
                      "warm_cpu_ms": [w[0] * 1000 for w in warm],
                      "warm_wall_ms": [w[1] * 1000 for w in warm],
                      "watchman": a.watchman, "touch": a.touch,
                      "watchman_service_cpu_ms": [x * 1000 for x in served],
                      "git_status_cpu_ms": [s[0] * 1000 for s in status]}))


if __name__ == "__main__":
    main()
