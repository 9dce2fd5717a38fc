#!/usr/bin/env python3
"""Edit formats for agents, measured (issue 24 item 5): the same scripted edits over
real files, made through the MCP server with `edit_lines` (after `read`), `apply_patch`
and `ast_edit`, counting how many land exactly as intended on the first try and the
bytes an agent sends (tool-call arguments, JSON) per successful edit.

    bench/edit_formats.py [--bin target/debug/git-astedit] [--src src] [--n 36]
                          [--out bench/results/edit-formats.md] [--json FILE]

Targets are `let … = …;` lines of the Rust files under --src (this repository's own
source by default), picked deterministically (every k-th candidate). Each target gets
one of four edits, in turn:

  modify   `let x = E;` → `let x = { E };`         (one line)
  insert   a new line `debug_assert!(true);` after the target
  delete   the target line
  span     the target and the next line replaced by one line (a two-line range)

and one of three work-tree histories between the moment the agent looked at the file
and its call, in turn:

  none     nothing changed
  shift    another writer inserted two comment lines at the top of the file
  nearby   another writer edited a line five lines above the target
  adjacent a formatter left a trailing blank on the line just above the target

Each format builds its request the way an agent does from what it saw:

  edit_lines   `read` of the target's lines (its blob id), then ranges of that blob
  apply_patch  the changed lines with three lines of context above and below
  ast_edit     the target statement(s), verbatim, as the pattern (the narrowest
               pattern an agent can write for one site), the new text as the rewrite;
               `delete`/`span` use an empty rewrite for removed statements

Success: the call staged a preview, `resolve` applied it, and the file is byte for byte
the intended result (the edit made on the file as it is now). Anything else (an error,
nothing staged, other sites changed too, a different layout) is a failure. An
`edit_lines` refused as `stale-read` is retried once the way its `next` says (`read`
again, ranges counted in the new blob): the "after one re-read" column, whose bytes
include both attempts.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

KINDS = ["modify", "insert", "delete", "span"]
DRIFTS = ["none", "shift", "nearby", "adjacent"]
FORMATS = ["edit_lines", "apply_patch", "ast_edit"]

LET = re.compile(r"^(\s*)let (mut )?[a-z_][a-z0-9_]*(: [^=]+)? = (.+);$")


class Server:
    """A `git astedit mcp` process spoken to with raw JSON-RPC over stdio."""

    def __init__(self, binary, repo):
        self.p = subprocess.Popen(
            [binary, "mcp"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "edit-formats-bench", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server closed its output")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg["result"]

    def call(self, tool, args):
        """The result, and the bytes sent (the arguments as JSON) and received."""
        result = self.request("tools/call", {"name": tool, "arguments": args})
        sent = len(json.dumps(args, ensure_ascii=False).encode())
        got = len(json.dumps(result, ensure_ascii=False).encode())
        return result, sent, got

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def candidates(src):
    """(path, 0-based line) of every `let` statement line worth editing."""
    out = []
    for f in sorted(pathlib.Path(src).rglob("*.rs")):
        lines = f.read_text().split("\n")
        for i, l in enumerate(lines):
            if LET.match(l) and len(l) < 100 and i >= 6 and i + 6 < len(lines):
                nxt = lines[i + 1].strip()
                # `span` joins the next line: only where that is a statement too.
                if nxt.endswith(";") and not nxt.startswith("//"):
                    out.append((f, i))
    return out


def edit_of(kind, lines, i):
    """(first line, lines replaced, new lines) of the intended edit at line i."""
    l = lines[i]
    m = LET.match(l)
    indent = m.group(1)
    head, expr = l[: m.start(4)], m.group(4)
    if kind == "modify":
        return i, 1, [f"{head}{{ {expr} }};"]
    if kind == "insert":
        return i + 1, 0, [f"{indent}debug_assert!(true);"]
    if kind == "delete":
        return i, 1, []
    return i, 2, [f"{head}{{ {expr} }};"]


def drifted(drift, lines, i):
    """The file after another writer's change, and where line i is now."""
    if drift == "shift":
        return ["// written by another tool", "// while the agent was thinking"] + lines, i + 2
    if drift == "nearby":
        out = list(lines)
        out[i - 5] = out[i - 5] + " // touched"
        return out, i
    if drift == "adjacent":
        out = list(lines)
        out[i - 1] = out[i - 1] + " "
        return out, i
    return list(lines), i


def apply(lines, at, removed, new):
    return lines[:at] + new + lines[at + removed:]


def request(fmt, kind, rel, lines, i, blob):
    """The tool calls an agent makes (before any drift), as (tool, arguments) pairs."""
    at, removed, new = edit_of(kind, lines, i)
    if fmt == "edit_lines":
        lo = max(1, at + 1 - 3)
        read = ("read", {"path": rel, "start": lo, "end": at + removed + 3})
        text = "".join(n + "\n" for n in new)
        edit = ("edit_lines", {"path": rel, "blob": blob, "edits": [
            {"start": at + 1, "end": at + removed, "text": text}]})
        return [read, edit]
    if fmt == "apply_patch":
        before = lines[max(0, at - 3):at]
        after = lines[at + removed:at + removed + 3]
        body = [" " + x for x in before]
        body += ["-" + x for x in lines[at:at + removed]]
        body += ["+" + x for x in new]
        body += [" " + x for x in after]
        patch = "*** Begin Patch\n*** Update File: %s\n@@\n%s\n*** End Patch\n" % (
            rel, "\n".join(body))
        return [("apply_patch", {"patch": patch})]
    # ast_edit: the statements verbatim as patterns.
    target = lines[i].strip()
    if kind == "modify":
        ops = [{"pattern": target, "rewrite": new[0].strip()}]
    elif kind == "insert":
        ops = [{"pattern": target, "rewrite": target + "\n" + new[0].strip()}]
    elif kind == "delete":
        ops = [{"pattern": target, "rewrite": ""}]
    else:
        ops = [{"pattern": lines[i + 1].strip(), "rewrite": ""},
               {"pattern": target, "rewrite": new[0].strip()}]
    return [("ast_edit", {"ops": ops, "paths": [rel]})]


def error_code(res):
    return json.loads(res["content"][1]["text"])["error"]["code"]


def run(args):
    cands = candidates(args.src)
    if len(cands) < args.n:
        sys.exit(f"only {len(cands)} candidate lines under {args.src}")
    step = len(cands) // args.n
    picked = [cands[k * step] for k in range(args.n)]
    work = tempfile.mkdtemp(prefix="astedit-edit-formats-")
    try:
        repo = pathlib.Path(work)
        git(repo, "init", "-q")
        git(repo, "config", "user.email", "bench@example.com")
        git(repo, "config", "user.name", "bench")
        src_root = pathlib.Path(args.src).resolve().parent
        for f, _ in picked:
            rel = f.resolve().relative_to(src_root)
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, repo / rel)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "corpus")
        server = Server(args.bin, repo)
        rows = []
        for k, (f, i) in enumerate(picked):
            rel = str(f.resolve().relative_to(src_root))
            kind = KINDS[k % len(KINDS)]
            drift = DRIFTS[(k // len(KINDS)) % len(DRIFTS)]
            for fmt in FORMATS:
                git(repo, "checkout", "-q", "--", ".")
                pristine = (repo / rel).read_text()
                lines = pristine.split("\n")
                blob = None
                calls = request(fmt, kind, rel, lines, i, "BLOB")
                sent = got = 0
                ok = False
                why = ""
                # The agent looks first (for edit_lines: `read`, which returns the blob).
                if calls[0][0] == "read":
                    res, s, g = server.call(*calls[0])
                    sent, got = sent + s, got + g
                    blob = res["structuredContent"]["blob"]
                    calls = [(t, {**a, "blob": blob} if "blob" in a else a) for t, a in calls[1:]]
                now, j = drifted(drift, lines, i)
                (repo / rel).write_text("\n".join(now))
                at, removed, new = edit_of(kind, now, j)
                want = "\n".join(apply(now, at, removed, new))
                res = None
                for tool, a in calls:
                    res, s, g = server.call(tool, a)
                    sent, got = sent + s, got + g
                retried = False
                if fmt == "edit_lines" and res.get("isError") and error_code(res) == "stale-read":
                    # The `next` call: read again, address the edit to the new blob.
                    retried = True
                    res, s, g = server.call("read", {"path": rel, "start": max(1, at + 1 - 3),
                                                     "end": at + removed + 3})
                    sent, got = sent + s, got + g
                    blob = res["structuredContent"]["blob"]
                    text = "".join(n + "\n" for n in new)
                    res, s, g = server.call("edit_lines", {"path": rel, "blob": blob, "edits": [
                        {"start": at + 1, "end": at + removed, "text": text}]})
                    sent, got = sent + s, got + g
                sc = res.get("structuredContent") or {}
                if res.get("isError"):
                    why = error_code(res)
                elif not sc.get("id"):
                    why = "nothing staged"
                else:
                    r, _, _ = server.call("resolve", {"action": "apply", "id": sc["id"],
                                                      "reason": "bench"})
                    if r.get("isError"):
                        why = "apply: " + json.loads(r["content"][1]["text"])["error"]["code"]
                    elif (repo / rel).read_text() == want:
                        ok = True
                    else:
                        have = (repo / rel).read_text()
                        if [x for x in have.split("\n") if x.strip()] == \
                                [x for x in want.split("\n") if x.strip()]:
                            why = "left a blank line"
                        elif have.count("\n") == want.count("\n"):
                            why = "other text changed"
                        else:
                            why = "wrong result"
                rows.append({"file": rel, "line": i + 1, "kind": kind, "drift": drift,
                             "format": fmt, "ok": ok and not retried, "retried_ok": ok and retried,
                             "why": why if ok is False else ("" if not retried else "stale-read, retried"), "sent": sent, "got": got})
        server.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def table(rows):
    out = []
    out.append("| format | first-try success | after one re-read | bytes sent per successful edit (mean) | bytes received per edit (mean) | failures |")
    out.append("|---|---|---|---|---|---|")
    for fmt in FORMATS:
        r = [x for x in rows if x["format"] == fmt]
        good = [x for x in r if x["ok"]]
        retried = [x for x in r if x["retried_ok"]]
        whys = {}
        for x in r:
            if not x["ok"]:
                whys[x["why"]] = whys.get(x["why"], 0) + 1
        mean = sum(x["sent"] for x in good) / len(good) if good else 0
        got = sum(x["got"] for x in r) / len(r)
        fails = ", ".join(f"{w} ×{n}" for w, n in sorted(whys.items())) or "—"
        both = good + retried
        mean = sum(x["sent"] for x in both) / len(both) if both else 0
        out.append(f"| `{fmt}` | {len(good)}/{len(r)} ({100 * len(good) // len(r)}%) | "
                   f"{len(both)}/{len(r)} | {mean:.0f} | {got:.0f} | {fails} |")
    out.append("")
    out.append("By edit kind and drift (successes of edit_lines / apply_patch / ast_edit):")
    out.append("")
    out.append("| kind \\ drift | " + " | ".join(DRIFTS) + " |")
    out.append("|---|" + "---|" * len(DRIFTS))
    for kind in KINDS:
        cells = []
        for drift in DRIFTS:
            sub = [x for x in rows if x["kind"] == kind and x["drift"] == drift]
            n = len(sub) // len(FORMATS)
            cells.append(" / ".join(
                str(sum(1 for x in sub if x["format"] == f and x["ok"])) for f in FORMATS)
                + f" of {n}")
        out.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/debug/git-astedit")
    ap.add_argument("--src", default="src")
    ap.add_argument("--n", type=int, default=48)
    ap.add_argument("--out", default=None, help="write the Markdown table here")
    ap.add_argument("--json", default=None, help="write every row here")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    rows = run(args)
    md = table(rows)
    print(md)
    if args.out:
        pathlib.Path(args.out).write_text(md)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
