#!/usr/bin/env python3
"""Many agents on one work tree (issue 40 item 7): N concurrent sessions make many small
edits to the same few files, some through `git astedit mcp` servers (read, replace,
resolve), some with their own tools as Claude Code makes them, guarded by
`git astedit agent-hook claude-code`; servers are killed with SIGKILL at random. At the
end every edit that was reported applied must be in the tree.

    bench/agents-stress.py [--bin PATH] [--sessions 10] [--hook-share 0.5]
                           [--edits 15] [--files 3] [--functions 6] [--kill-every 0.8]
                           [--runs 3] [--seed 1] [--json OUT] [--keep] [--watchman]

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

Shell agents (`--shell-sessions 3`, issue 54 item 1): each edit is a Claude Code `Bash`
call behind the hook (PreToolUse, the command the hook's `updatedInput` gives, run
with `sh -c`, PostToolUse), made by one of three writers in turn: `sed -i` adding the
tag to the `t_` line, a Python rewrite inserting the comment under the `def` (read,
then write in place), and a formatter's way (read, add the tag, normalise the blank
lines, write a temp file and rename it over the file). No lock is held across the
command, so another session's edit that lands between the command's read and its write
is lost: such a loss must be *reported* (the hook's answer to one of the two sessions
names the path), never silent. At the end `log --session S -p --json` of each shell
session must hold every one of its tags in a journalled diff (each shell edit
undoable), unless its command's answer reported the path as written by two sessions
in the window (left out of the journal by design, and said to the model).

Lane agents (`--lanes 2`, issue 54 item 2): each works in a lane of its own (`git
astedit lane start`), as a hook session does, on functions no other lane edits (lane i
takes the functions whose number is i modulo the lane count) of the same files. At the
end, `lane merge` of all lanes into a fresh lane at the base must be clean and hold every
lane tag; `lane merge` into the main tree (whose sessions edited any function) must
report exactly one conflict per function changed both in a lane and on the main tree,
or be clean when there is none. A lane's pre-hook latency shows whether it waited for
the main tree's turns.

With `--watchman` (issue 54 item 1), a Watchman service of the run's own watches the
work tree and each lane (`WATCHMAN_SOCK` for every hook), so shell windows are
recorded from Watchman's answer; `shell_records` counts how the records of the
journalled shell transactions were taken (`details.hook.record`, before/after).
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
sys.path.insert(0, HERE)
from watchman_service import Watchman  # noqa: E402


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
        self.lane_latency = []  # pre-hook wall times in lanes (s)
        self.lane_applied = {}  # tag -> (lane, path, function)
        self.shell_latency = []  # Bash pre-hook wall times (s)
        self.shell_tags = {}  # session -> tags
        self.reported_paths = set()  # paths a hook answer said were written by two
        self.reported_tags = set()  # shell edits whose answer said so
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


SHELL_WRITERS = ("sed", "python", "formatter")


def shell_command(path, func, tag, writer):
    """The command a shell agent runs to add `tag` to function `func` of `path`."""
    if writer == "sed":
        return (f"sed -i 's/^    t_f{func} = \\[\\(.*\\)\\]$/    t_f{func} = [\\1, \"{tag}\"]/' "
                f"{path}")
    if writer == "python":
        return ("python3 -c \"import pathlib; p = pathlib.Path('%s'); "
                "p.write_text(p.read_text().replace('def f%d():\\n', "
                "'def f%d():\\n    # %s\\n', 1))\"" % (path, func, func, tag))
    return ("python3 -c \"import os, pathlib, re; p = pathlib.Path('%s'); "
            "t = p.read_text().replace('def f%d():\\n', 'def f%d():\\n    # %s\\n', 1); "
            "t = re.sub(r'\\n{3,}', '\\n\\n', t); q = p.with_suffix('.fmt'); "
            "q.write_text(t); os.replace(q, p)\"" % (path, func, func, tag))


def shell_session(ctx, sid, rng):
    """A Claude Code session editing through its Bash tool (see the module docs)."""
    session = f"shell-{sid:02d}-{os.getpid()}"
    ctx.shell_sessions.append(session)
    for k in range(ctx.edits):
        tag = f"s{sid:02d}e{k:03d}"
        path = rng.choice(ctx.paths)
        func = rng.randrange(ctx.functions)
        writer = SHELL_WRITERS[k % len(SHELL_WRITERS)]
        command = shell_command(path, func, tag, writer)
        tool_input = {"command": command, "description": f"{writer} edit"}
        # One tool call: its PreToolUse and PostToolUse carry the same id.
        call_id = f"toolu_{sid:02d}{k:04d}{rng.getrandbits(32):08x}"
        pre = claude_event(ctx, session, "PreToolUse", "Bash", tool_input)
        pre["tool_use_id"] = call_id
        answer, dt = hook(ctx, pre)
        with ctx.stats.lock:
            ctx.stats.shell_latency.append(dt)
        run = answer.get("hookSpecificOutput", {}).get("updatedInput", {}).get("command")
        if run is None:
            ctx.stats.error("shell:no-updated-input")
            run = command
        done = subprocess.run(["sh", "-c", run], cwd=ctx.repo, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        tool_use = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
        post_ev = claude_event(ctx, session, "PostToolUse", "Bash", tool_input, tool_use)
        post_ev["tool_use_id"] = call_id
        post, _ = hook(ctx, post_ev)
        if done.returncode != 0:
            ctx.stats.error("shell:command-failed")
            continue
        with ctx.stats.lock:
            ctx.stats.applied[tag] = (path, "shell")
            ctx.stats.shell_tags.setdefault(session, []).append(tag)
            if post.get("decision") == "block":
                ctx.stats.reported_paths.add(path)
                ctx.stats.reported_tags.add(tag)
        ctx.stats.add("applied-shell")
        if post.get("decision") == "block":
            ctx.stats.add("shell-reported")


def shell_journalled(ctx):
    """Tags of shell sessions found in no journalled diff of their session, and not
    reported to it either (a path written by two in the window is left out of the
    transaction and reported: by design it is not journalled as the command's)."""
    missing = []
    for session in ctx.shell_sessions:
        out = subprocess.run([ctx.bin, "log", "--json", "-p", "-n", "0", "--session",
                              session], cwd=ctx.repo, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        try:
            events = json.loads(out.stdout)["events"]
        except (ValueError, KeyError):
            events = []
        added = "".join(line for e in events if e.get("event") == "applied"
                        for line in (e.get("diff") or "").splitlines(True)
                        if line.startswith("+"))
        missing += [t for t in ctx.stats.shell_tags.get(session, [])
                    if t not in added and t not in ctx.stats.reported_tags]
    return missing


def shell_records(ctx):
    """How the records of every journalled shell transaction were taken:
    {"before/after": count}, from each preview's `details.hook.record`."""
    out = subprocess.run([ctx.bin, "log", "--json", "-n", "0", "--all-worktrees"],
                         cwd=ctx.repo, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    counts = {}
    for e in json.loads(out.stdout or b'{"events": []}').get("events", []):
        if e.get("event") != "applied" or e.get("kind") != "hook":
            continue
        body = subprocess.run(["git", "-C", ctx.repo, "cat-file", "commit", e["commit"]],
                              stdout=subprocess.PIPE).stdout.decode(errors="replace")
        meta = body.split("--- astedit-meta v1 ---\n", 1)[-1]
        try:
            hook, _ = json.JSONDecoder().raw_decode(meta)
            hook = hook["meta"]["details"]["hook"]
            if hook.get("tool") != "Bash":
                continue
            key = f"{hook['record'].get('before')}/{hook['record'].get('after')}"
        except (ValueError, KeyError, TypeError):
            key = "unknown"
        counts[key] = counts.get(key, 0) + 1
    return counts


def lane_session(ctx, lane, dir_, rng):
    """A hook session working in its lane on its own functions (see the module docs)."""
    sub = Ctx()
    sub.__dict__.update(ctx.__dict__)
    sub.repo = dir_
    mine = [f for f in range(ctx.functions) if f % ctx.lanes == lane]
    session = f"lane-{lane}-{os.getpid()}"
    for k in range(ctx.edits):
        tag = f"l{lane:02d}e{k:03d}"
        path = rng.choice(ctx.paths)
        func = rng.choice(mine)
        abspath = os.path.join(dir_, path)
        with open(abspath) as f:
            seen = f.read()
        hook(sub, claude_event(sub, session, "PostToolUse", "Read", {"file_path": abspath},
                               {"type": "text", "file": {"filePath": abspath,
                                                         "content": seen}}))
        plan = plan_edit(seen, func, tag, "line" if rng.random() < 0.5 else "insert")
        time.sleep(rng.random() * ctx.think)
        tool_input = {"file_path": abspath, "old_string": plan[0], "new_string": plan[1],
                      "replace_all": False}
        answer, dt = hook(sub, claude_event(sub, session, "PreToolUse", "Edit", tool_input))
        with ctx.stats.lock:
            ctx.stats.lane_latency.append(dt)
        if answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny":
            ctx.stats.add("lane-denied")
            continue
        new_text = seen.replace(plan[0], plan[1], 1)
        with open(abspath, "w") as f:
            f.write(new_text)
        hook(sub, claude_event(sub, session, "PostToolUse", "Edit", tool_input,
                               {"filePath": abspath, "oldString": plan[0],
                                "newString": plan[1], "originalFile": seen,
                                "structuredPatch": [], "userModified": False,
                                "replaceAll": False}))
        with ctx.stats.lock:
            ctx.stats.lane_applied[tag] = (lane, path, func)
        ctx.stats.add("applied-lane")


def functions_of(text):
    """Function name -> its text, in a file of `make_repo`'s shape."""
    return dict(re.findall(r"^def (f\d+)\(\):\n((?:(?!def ).*\n)*)", text, re.M))


def check_lanes(ctx, base):
    """The lane merges of the module docs: (clean merge ok, conflicts expected, reported)."""
    run = lambda cwd, *a: subprocess.run([ctx.bin, "--json", *a], cwd=cwd,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    names = [f"l{i}" for i in range(ctx.lanes)]
    # Into a fresh lane at the base: the lanes changed disjoint functions, so clean.
    fresh = run(ctx.repo, "lane", "start", "fresh")
    if fresh.returncode != 0:
        sys.exit(f"lane start fresh: {fresh.stdout.decode()} {fresh.stderr.decode()}")
    fresh_dir = json.loads(fresh.stdout)["lanes"][0]["path"]
    merged = run(fresh_dir, "lane", "merge", *names)
    clean = merged.returncode == 0
    if clean and json.loads(merged.stdout)["id"]:
        clean = run(fresh_dir, "apply").returncode == 0
        for tag, (_, path, _) in ctx.stats.lane_applied.items():
            text = open(os.path.join(fresh_dir, path)).read()
            clean = clean and (f"\"{tag}\"" in text or f"# {tag}\n" in text)
    # Into the main tree: one conflict per function both a lane and the main tree changed.
    expected = set()
    for lane, dir_ in enumerate(ctx.lane_dirs):
        for path in ctx.paths:
            b = functions_of(base[path])
            here = functions_of(open(os.path.join(ctx.repo, path)).read())
            there = functions_of(open(os.path.join(dir_, path)).read())
            expected |= {(f"l{lane}", path, f) for f in b
                         if here.get(f) != b[f] and there.get(f) != b[f]}
    r = run(ctx.repo, "lane", "merge", *names)
    reported = set()
    if r.returncode == 3:
        for c in json.loads(r.stdout)["error"]["details"]["conflicts"]:
            reported |= {(c["lane"], c["path"], n["name"]) for n in c["nodes"]}
    elif r.returncode != 0:
        reported.add(("error", r.returncode, r.stdout.decode()[:200]))
    return clean, expected, reported


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
    ctx.watchman = None
    if args.watchman:
        ctx.watchman = Watchman()
        os.environ["WATCHMAN_SOCK"] = ctx.watchman.sock
        ctx.watchman.watch(ctx.repo)
    try:
        return run_with(args, seed, root, ctx)
    finally:
        if ctx.watchman:
            ctx.watchman.stop()
            os.environ.pop("WATCHMAN_SOCK", None)


def run_with(args, seed, root, ctx):
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
    ctx.shell_sessions = []
    for sid in range(args.sessions, args.sessions + args.shell_sessions):
        threads.append(threading.Thread(target=shell_session,
                                        args=(ctx, sid, random.Random(rng.random()))))
    stop = threading.Event()
    k = threading.Thread(target=killer, args=(ctx, random.Random(rng.random()), stop))
    if args.kill_every > 0:
        k.start()
    ctx.lanes = args.lanes
    ctx.lane_dirs = []
    base = {p: open(os.path.join(ctx.repo, p)).read() for p in ctx.paths}
    for i in range(args.lanes):
        out = subprocess.run([ctx.bin, "lane", "start", f"l{i}"], cwd=ctx.repo,
                             stdout=subprocess.PIPE, check=True)
        ctx.lane_dirs.append(out.stdout.decode().strip())
        if ctx.watchman:
            ctx.watchman.watch(ctx.lane_dirs[-1])
        threads.append(threading.Thread(target=lane_session, args=(
            ctx, i, ctx.lane_dirs[-1], random.Random(rng.random()))))
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
    unfinished = "unfinished" in left.stdout.decode().lower()
    if unfinished:
        # A run left for a person (a file written during an apply past its point of no
        # return: a shell command holds no lock): finish what can be, then give up the
        # rest, so that the lane checks can write.
        for how in ("--finish", "--abandon"):
            subprocess.run([ctx.bin, "recover", how], cwd=ctx.repo,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree = {p: open(os.path.join(ctx.repo, p)).read() for p in ctx.paths}
    s = ctx.stats
    lost_all = sorted(tag for tag, (path, _) in s.applied.items()
                      if f"\"{tag}\"" not in tree[path] and f"# {tag}\n" not in tree[path])
    # A loss in a file a hook answer reported as written by two at once is reported;
    # any other is silent.
    lost = [t for t in lost_all if s.applied[t][0] not in s.reported_paths]
    lost_reported = [t for t in lost_all if s.applied[t][0] in s.reported_paths]
    unjournalled = shell_journalled(ctx) if args.shell_sessions else []
    lane_lost = sorted(tag for tag, (lane, path, _) in s.lane_applied.items()
                       if not any(m in open(os.path.join(ctx.lane_dirs[lane], path)).read()
                                  for m in (f"\"{tag}\"", f"# {tag}\n")))
    clean, expected, reported = (check_lanes(ctx, base) if args.lanes
                                 else (True, set(), set()))
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
        "lost": len(lost) + len(lane_lost),
        "lost_tags": lost + lane_lost,
        "shell_sessions": args.shell_sessions,
        "applied_shell": s.counts.get("applied-shell", 0),
        "shell_reported": s.counts.get("shell-reported", 0),
        "lost_reported": len(lost_reported),
        "lost_reported_tags": lost_reported,
        "shell_unjournalled": len(unjournalled),
        "shell_unjournalled_tags": unjournalled,
        "shell_pre_hook_p50_ms": round(pct(s.shell_latency, 50) * 1000),
        "shell_pre_hook_p95_ms": round(pct(s.shell_latency, 95) * 1000),
        "watchman": bool(ctx.watchman),
        "shell_records": shell_records(ctx) if args.shell_sessions else {},
        "lanes": args.lanes,
        "applied_lane": s.counts.get("applied-lane", 0),
        "lane_denied": s.counts.get("lane-denied", 0),
        "lane_merge_clean": clean,
        "lane_conflicts_expected": len(expected),
        "lane_conflicts_reported": len(reported),
        "lane_conflicts_match": expected == reported,
        "lane_pre_hook_p50_ms": round(pct(s.lane_latency, 50) * 1000),
        "lane_pre_hook_p95_ms": round(pct(s.lane_latency, 95) * 1000),
        "errors": s.errors,
        "resolve_p50_ms": round(pct(s.latency, 50) * 1000),
        "resolve_p95_ms": round(pct(s.latency, 95) * 1000),
        "pre_hook_p50_ms": round(pct(s.hook_latency, 50) * 1000),
        "pre_hook_p95_ms": round(pct(s.hook_latency, 95) * 1000),
        "unfinished_at_end": unfinished or ("interrupted" in left.stdout.decode().lower()
                                            and "nothing" not in left.stdout.decode().lower()),
        "recover_status_left": left.stdout.decode().strip()[:600],
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
    ap.add_argument("--shell-sessions", type=int, default=3,
                    help="sessions editing through Bash (sed, a Python rewrite, a formatter)")
    ap.add_argument("--lanes", type=int, default=2,
                    help="hook sessions working in lanes of their own (0: none)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write every run's row here")
    ap.add_argument("--keep", action="store_true", help="keep the repositories")
    ap.add_argument("--watchman", action="store_true",
                    help="a Watchman service watching the tree and the lanes")
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
    if args.lanes:
        print()
        print("| run | lane edits (denied) | merge of the lanes at the base | conflicts into the "
              "main tree: expected / reported, same set | lane pre-hook p50 / p95 |")
        print("|---|---|---|---|---|")
        for i, r in enumerate(rows, 1):
            print(f"| {i} | {r['applied_lane']} ({r['lane_denied']}) | "
                  f"{'clean, every tag' if r['lane_merge_clean'] else '**not clean**'} | "
                  f"{r['lane_conflicts_expected']} / {r['lane_conflicts_reported']}, "
                  f"{'yes' if r['lane_conflicts_match'] else '**no**'} | "
                  f"{r['lane_pre_hook_p50_ms']} / {r['lane_pre_hook_p95_ms']} ms |")
    if args.shell_sessions:
        print()
        print("| run | shell edits (sed, python, formatter) | reported as written by two "
              "| lost, reported | lost, silent | shell edits neither journalled nor reported "
              "| Bash pre-hook p50 / p95 |")
        print("|---|---|---|---|---|---|---|")
        for i, r in enumerate(rows, 1):
            print(f"| {i} | {r['applied_shell']} | {r['shell_reported']} | "
                  f"{r['lost_reported']} | **{r['lost']}** | **{r['shell_unjournalled']}** | "
                  f"{r['shell_pre_hook_p50_ms']} / {r['shell_pre_hook_p95_ms']} ms |")
    bad = any(r["lost"] or r.get("shell_unjournalled") or not r["lane_merge_clean"]
              or not r["lane_conflicts_match"] for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
