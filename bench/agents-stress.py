#!/usr/bin/env python3
"""Many agents on one work tree (issue 40 item 7): N concurrent sessions make many small
edits to the same few files, some through `git astedit mcp` servers (read, replace,
resolve), some with their own tools as Claude Code makes them, guarded by
`git astedit agent-hook claude-code`; servers are killed with SIGKILL at random. At the
end every edit that was reported applied must be in the tree.

    bench/agents-stress.py [--bin PATH] [--sessions 10] [--hook-share 0.5]
                           [--edits 15] [--files 3] [--functions 6] [--kill-every 0.8]
                           [--runs 3] [--seed 1] [--json OUT] [--keep]

Each file holds functions like

    def f3():
        t_f3 = ["f3"]
        return t_f3

and each edit adds one unique tag (`s04e011`) to a function, either to its `t_` line
(two sessions picking the same function edit the same line) or as a comment line right
under its `def` line. Tags are never removed, so an edit reported applied whose tag is
missing from the final tree is a **lost update**. Edits refused, reported as conflicts,
or cut short by a kill are counted as such and expected nowhere.

A server session: `read` the file (text and blob), wait a little, `replace` with
`old_string`/`new_string` and the blob (a preview), then `resolve` apply with
`refresh: true`; the resolve's wall time is the latency reported. A hook session, as
Claude Code runs its Read and Edit/Write tools: reads the file and sends the
`PostToolUse` Read event, waits a little, sends `PreToolUse` Edit (or Write); if
allowed, does what Claude Code's tool does — refuses when the file changed since its
read ("File has been modified since read"), else writes the new text in place — and
sends `PostToolUse` (or `PostToolUseFailure`); between its read and its write it
waits up to `--tool-delay` (the harness's own steps there). A `decision: "block"` after the write
(the hook saw its turn end and others write meanwhile) counts as a conflict reported.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def default_bin():
    for cand in ("target/release/git-astedit", "target/debug/git-astedit"):
        p = os.path.join(HERE, "..", cand)
        if os.path.exists(p):
            return os.path.abspath(p)
    return shutil.which("git-astedit") or "git-astedit"


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_repo(root, files, functions):
    repo = os.path.join(root, "repo")
    os.makedirs(os.path.join(repo, "src"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "stress")
    git(repo, "config", "user.email", "stress@example.com")
    paths = []
    for i in range(files):
        rel = f"src/m{i}.py"
        with open(os.path.join(repo, rel), "w") as f:
            for j in range(functions):
                f.write(f"def f{j}():\n    t_f{j} = [\"f{j}\"]\n    return t_f{j}\n\n\n")
        paths.append(rel)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo, paths


def plan_edit(text, func, tag, kind):
    """(old_string, new_string) adding `tag` to function `func` of `text`, or None."""
    if kind == "line":
        m = re.search(rf"^    t_f{func} = \[.*\]\n", text, re.M)
        if not m:
            return None
        old = m.group(0)
        return old, old.replace("]\n", f", \"{tag}\"]\n")
    old = f"def f{func}():\n"
    if text.count(old) != 1:
        return None
    return old, f"{old}    # {tag}\n"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.applied = {}  # tag -> (path, session kind)
        self.counts = {}
        self.latency = []  # resolve wall times (s)
        self.hook_latency = []  # pre-hook wall times (s)
        self.errors = {}

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def error(self, code):
        with self.lock:
            self.errors[code] = self.errors.get(code, 0) + 1


class Server:
    """One `git astedit mcp` process, spoken to one call at a time."""

    def __init__(self, bin_, repo, name):
        self.p = subprocess.Popen([bin_, "mcp"], cwd=repo, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.call_raw("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": name, "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def call_raw(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("server gone")
            m = json.loads(line)
            if m.get("id") == self.next_id and "method" not in m:
                return m

    def tool(self, name, args):
        """(ok, structured content or error JSON)."""
        r = self.call_raw("tools/call", {"name": name, "arguments": args})["result"]
        if r.get("isError"):
            err = {}
            for c in r.get("content", []):
                try:
                    err = json.loads(c["text"]).get("error", {})
                except (ValueError, KeyError, AttributeError):
                    continue
            return False, err
        return True, r.get("structuredContent", {})

    def kill(self):
        try:
            self.p.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()


def mcp_session(ctx, sid, rng):
    name = f"stress-s{sid:02d}"
    server = None
    for k in range(ctx.edits):
        tag = f"s{sid:02d}e{k:03d}"
        path = rng.choice(ctx.paths)
        func = rng.randrange(ctx.functions)
        kind = "line" if rng.random() < 0.5 else "insert"
        try:
            if server is None or server.p.poll() is not None:
                server = Server(ctx.bin, ctx.repo, name)
                with ctx.live_lock:
                    ctx.live[sid] = server
            ok, read = server.tool("read", {"path": path})
            if not ok:
                ctx.stats.error("read:" + read.get("code", "?"))
                continue
            plan = plan_edit(read["text"], func, tag, kind)
            if plan is None:
                ctx.stats.add("plan-failed")
                continue
            time.sleep(rng.random() * ctx.think)
            ok, staged = server.tool("replace", {"path": path, "old_string": plan[0],
                                                 "new_string": plan[1], "blob": read["blob"],
                                                 "reason": f"stress {tag}"})
            if not ok:
                ctx.stats.add("conflict")
                ctx.stats.error("replace:" + staged.get("code", "?"))
                continue
            t0 = time.monotonic()
            ok, done = server.tool("resolve", {"action": "apply", "id": staged["id"],
                                               "reason": f"stress {tag}", "refresh": True})
            dt = time.monotonic() - t0
            with ctx.stats.lock:
                ctx.stats.latency.append(dt)
            if ok:
                with ctx.stats.lock:
                    ctx.stats.applied[tag] = (path, "mcp")
                ctx.stats.add("applied-mcp")
            else:
                ctx.stats.add("conflict")
                ctx.stats.error("resolve:" + done.get("code", "?"))
        except (EOFError, BrokenPipeError, OSError, ValueError):
            # Killed under us: the outcome of the call in flight is unknown.
            ctx.stats.add("cut-by-kill")
            server = None
    if server is not None:
        with ctx.live_lock:
            ctx.live.pop(sid, None)
        server.close()


def hook(ctx, event):
    t0 = time.monotonic()
    r = subprocess.run([ctx.bin, "agent-hook", "claude-code"], cwd=ctx.repo,
                       input=json.dumps(event).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        ctx.stats.error("hook-exit-%d" % r.returncode)
        sys.stderr.write(r.stderr.decode(errors="replace"))
    out = r.stdout.decode().strip()
    return (json.loads(out) if out else {}), dt


def claude_event(ctx, session, name, tool, tool_input, response=None, error=None):
    ev = {"session_id": session, "transcript_path": f"/tmp/{session}.jsonl",
          "cwd": ctx.repo, "permission_mode": "acceptEdits", "hook_event_name": name,
          "tool_name": tool, "tool_input": tool_input,
          "tool_use_id": f"toolu_{random.getrandbits(48):012x}"}
    if response is not None:
        ev["tool_response"] = response
    if error is not None:
        ev["error"] = error
    return ev


def hook_session(ctx, sid, rng):
    session = f"stress-{sid:02d}-{os.getpid()}"
    for k in range(ctx.edits):
        tag = f"s{sid:02d}e{k:03d}"
        path = rng.choice(ctx.paths)
        func = rng.randrange(ctx.functions)
        kind = "line" if rng.random() < 0.5 else "insert"
        tool = "Write" if rng.random() < 0.3 else "Edit"
        abspath = os.path.join(ctx.repo, path)
        # Read: the tool reads, then PostToolUse.
        with open(abspath) as f:
            seen = f.read()
        hook(ctx, claude_event(ctx, session, "PostToolUse", "Read", {"file_path": abspath},
                               {"type": "text", "file": {"filePath": abspath,
                                                         "content": seen}}))
        plan = plan_edit(seen, func, tag, kind)
        if plan is None:
            ctx.stats.add("plan-failed")
            continue
        time.sleep(rng.random() * ctx.think)
        new_text = seen.replace(plan[0], plan[1], 1)
        if tool == "Edit":
            tool_input = {"file_path": abspath, "old_string": plan[0], "new_string": plan[1],
                          "replace_all": False}
        else:
            tool_input = {"file_path": abspath, "content": new_text}
        answer, dt = hook(ctx, claude_event(ctx, session, "PreToolUse", tool, tool_input))
        with ctx.stats.lock:
            ctx.stats.hook_latency.append(dt)
        decision = answer.get("hookSpecificOutput", {})
        if decision.get("permissionDecision") == "deny":
            ctx.stats.add("conflict")
            busy = "busy" in decision.get("permissionDecisionReason", "")
            ctx.stats.error("hook-denied-busy" if busy else "hook-denied-stale")
            continue
        # The tool itself, as Claude Code runs it.
        with open(abspath) as f:
            now = f.read()
        if now != seen:
            ctx.stats.add("conflict")
            ctx.stats.error("tool:modified-since-read")
            hook(ctx, claude_event(ctx, session, "PostToolUseFailure", tool, tool_input,
                                   error="File has been modified since read"))
            continue
        if tool == "Edit":
            new_text = now.replace(plan[0], plan[1], 1)
        # The harness's own steps between its read and its write (Claude Code backs the
        # file up for its checkpoints, among other awaits).
        time.sleep(rng.random() * ctx.tool_delay)
        with open(abspath, "w") as f:
            f.write(new_text)
        response = ({"filePath": abspath, "oldString": plan[0], "newString": plan[1],
                     "originalFile": now, "structuredPatch": [], "userModified": False,
                     "replaceAll": False} if tool == "Edit" else
                    {"type": "update", "filePath": abspath, "content": new_text,
                     "structuredPatch": []})
        answer, _ = hook(ctx, claude_event(ctx, session, "PostToolUse", tool, tool_input,
                                           response))
        with ctx.stats.lock:
            ctx.stats.applied[tag] = (path, "hook")
        ctx.stats.add("applied-hook")
        if answer.get("decision") == "block":
            # Reported to the model: its write may have replaced others' edits.
            ctx.stats.add("post-warned")


def killer(ctx, rng, stop):
    while not stop.wait(rng.random() * 2 * ctx.kill_every):
        with ctx.live_lock:
            victims = list(ctx.live.items())
        if not victims:
            continue
        sid, server = rng.choice(victims)
        server.kill()
        ctx.stats.add("kills")


class Ctx:
    pass


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def one_run(args, seed):
    root = tempfile.mkdtemp(prefix="astedit-stress-")
    ctx = Ctx()
    ctx.bin = args.bin
    ctx.repo, ctx.paths = make_repo(root, args.files, args.functions)
    ctx.functions = args.functions
    ctx.edits = args.edits
    ctx.think = args.think
    ctx.tool_delay = args.tool_delay
    ctx.kill_every = args.kill_every
    ctx.stats = Stats()
    ctx.live = {}
    ctx.live_lock = threading.Lock()
    rng = random.Random(seed)
    n_hook = round(args.sessions * args.hook_share)
    threads = []
    started = time.monotonic()
    for sid in range(args.sessions):
        fn = hook_session if sid < n_hook else mcp_session
        t = threading.Thread(target=fn, args=(ctx, sid, random.Random(rng.random())))
        threads.append(t)
    stop = threading.Event()
    k = threading.Thread(target=killer, args=(ctx, random.Random(rng.random()), stop))
    if args.kill_every > 0:
        k.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    if k.is_alive():
        k.join()
    wall = time.monotonic() - started
    # What a killed server left: the next command finishes or rolls it back.
    status = subprocess.run([ctx.bin, "recover", "--status"], cwd=ctx.repo,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    subprocess.run([ctx.bin, "list"], cwd=ctx.repo, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    left = subprocess.run([ctx.bin, "recover", "--status"], cwd=ctx.repo,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    tree = {p: open(os.path.join(ctx.repo, p)).read() for p in ctx.paths}
    s = ctx.stats
    lost = sorted(tag for tag, (path, _) in s.applied.items()
                  if f"\"{tag}\"" not in tree[path] and f"# {tag}\n" not in tree[path])
    fsck = subprocess.run(["git", "-C", ctx.repo, "fsck", "--no-progress"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    row = {
        "seed": seed,
        "sessions": args.sessions,
        "hook_sessions": n_hook,
        "edits_tried": args.sessions * args.edits,
        "applied_mcp": s.counts.get("applied-mcp", 0),
        "applied_hook": s.counts.get("applied-hook", 0),
        "conflicts": s.counts.get("conflict", 0),
        "post_warned": s.counts.get("post-warned", 0),
        "cut_by_kill": s.counts.get("cut-by-kill", 0),
        "kills": s.counts.get("kills", 0),
        "lost": len(lost),
        "lost_tags": lost,
        "errors": s.errors,
        "resolve_p50_ms": round(pct(s.latency, 50) * 1000),
        "resolve_p95_ms": round(pct(s.latency, 95) * 1000),
        "pre_hook_p50_ms": round(pct(s.hook_latency, 50) * 1000),
        "pre_hook_p95_ms": round(pct(s.hook_latency, 95) * 1000),
        "unfinished_at_end": "interrupted" in left.stdout.decode().lower()
                             and "nothing" not in left.stdout.decode().lower(),
        "recover_status_before": status.stdout.decode().strip()[:300],
        "fsck_ok": fsck.returncode == 0,
        "wall_s": round(wall, 1),
    }
    if args.keep:
        row["repo"] = ctx.repo
    else:
        shutil.rmtree(root, ignore_errors=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=default_bin())
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--hook-share", type=float, default=0.5)
    ap.add_argument("--edits", type=int, default=15, help="edits per session")
    ap.add_argument("--files", type=int, default=3)
    ap.add_argument("--functions", type=int, default=6)
    ap.add_argument("--think", type=float, default=0.05,
                    help="most seconds between a read and the edit made from it")
    ap.add_argument("--tool-delay", type=float, default=0.02,
                    help="most seconds between a hook session's tool reading the file "
                         "and writing it")
    ap.add_argument("--kill-every", type=float, default=0.8,
                    help="mean seconds between kills of a server (0: none)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write every run's row here")
    ap.add_argument("--keep", action="store_true", help="keep the repositories")
    args = ap.parse_args()
    rows = []
    for r in range(args.runs):
        row = one_run(args, args.seed + r)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    print(f"git-astedit {subprocess.run([args.bin, '--version'], stdout=subprocess.PIPE).stdout.decode().strip()}; "
          f"{args.sessions} sessions ({rows[0]['hook_sessions']} hook-driven), "
          f"{args.edits} edits each, {args.files} files x {args.functions} functions")
    print()
    print("| run | applied (mcp + hook) | conflicts reported | cut by kill -9 | kills "
          "| **lost** | resolve p50 / p95 | pre-hook p50 / p95 | unfinished left | wall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows, 1):
        print(f"| {i} | {r['applied_mcp'] + r['applied_hook']} ({r['applied_mcp']} + "
              f"{r['applied_hook']}) | {r['conflicts'] + r['post_warned']} | {r['cut_by_kill']} "
              f"| {r['kills']} | **{r['lost']}** | {r['resolve_p50_ms']} / "
              f"{r['resolve_p95_ms']} ms | {r['pre_hook_p50_ms']} / {r['pre_hook_p95_ms']} ms "
              f"| {'yes' if r['unfinished_at_end'] else 'no'} | {r['wall_s']} s |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if any(r["lost"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
