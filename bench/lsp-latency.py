#!/usr/bin/env python3
"""The language server beside `ast-grep lsp` (issue 38): in a copy of an ast-grep
project, (a) the time from starting the server (its `initialize`, `initialized` and the
opening of one document) to that document's first diagnostics, the first time the
server runs in the project and again on a restart (what an editor sees every time but
the first: git-astedit then finds the rules' plan in its result cache and compiles only
the rules the document's language needs), and (b) the time from a `didChange` of a
5,000-line file to its new diagnostics, the median of N changes. ROUNDS rounds (the
servers alternating) give the medians. Both servers get the same messages; a change
alternates between two texts so that every one really changes the findings. Each
server's peak resident memory (VmHWM) over a first start (its open and N changes) is
reported beside.

    bench/lsp-latency.py [--big MB] [--big-peer] GIT_ASTEDIT AST_GREP PROJECT [N] [DOC] [ROUNDS]

--big MB adds a row per round: git-astedit started in the same copy (its rules' plan
cached) and sent one document of MB megabytes (DOC's text repeated): the time from
starting it to that document's diagnostics and its peak memory, with a 30-second
bound on the wait (issue 55's goal for 50 MB: an answer within 5 s, at most 200 MB).
--big-peer does the same with ast-grep, which parses any size (several gigabytes for
50 MB: mind the machine's memory).

PROJECT is a folder holding sgconfig.yml (e.g. ../shared/acceptance/ast-grep-projects/
codemods, or a copy of coderabbitai/ast-grep-essentials whose rules load in the
ast-grep at hand); it is copied into a temporary git repository. DOC picks the 5,000-line
file: its first line alternates between one that a rule of the project flags and one
that none does — `javascript` (the default) for the codemods project, `essentials-js`
(`detect-angular-sce-disabled-javascript`) and `python` (`avoid-mktemp-python`) for
ast-grep-essentials. Compare release
builds: a debug git-astedit is several times slower.
"""

import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


class Server:
    def __init__(self, cmd, cwd):
        self.p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.q = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.p.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.q.put(json.loads(out.read(length)))

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)

    def wait(self, want, timeout=600):
        end = time.time() + timeout
        while True:
            m = self.q.get(timeout=max(0.01, end - time.time()))
            if "method" in m and "id" in m:
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
                continue
            if want(m):
                return m

    def diagnostics(self, uri, version, timeout=600):
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri
                         and m["params"].get("version") in (None, version), timeout)

    def peak_rss(self):
        """The process's peak resident memory so far, in bytes (VmHWM)."""
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0


DOCUMENTS = {
    "javascript": ("big.js", "javascript", "const a = dayjs().valueOf(); foo.should.equal(1);\n",
                   "const b = bar(1); baz.qux(2);\n"),
    "essentials-js": ("big.js", "javascript", "$sceProvider.enabled(false);\n",
                      "const b = bar(1);\n"),
    "python": ("big.py", "python", "a = tempfile.mktemp()\n", "b = compute(1)\n"),
}


def measure(cmd, root, n, doc):
    name, lang, line_a, line_b = DOCUMENTS[doc]
    uri = "file://" + root + "/bench/" + name
    text_a = (line_a + line_b * 9) * 500
    start = time.perf_counter()
    s = Server(cmd, root)
    init = s.request("initialize", {"processId": None, "rootUri": "file://" + root, "capabilities": {}})
    sync = init["result"]["capabilities"].get("textDocumentSync", 1)
    # ast-grep 0.51 syncs whole texts (kind 1): it is sent the whole new text.
    full = (sync if isinstance(sync, int) else sync.get("change", 1)) == 1
    s.notify("initialized", {})
    s.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": lang, "version": 1, "text": text_a}})
    first = s.diagnostics(uri, 1)
    opened = time.perf_counter() - start
    times = []
    for k in range(n):
        version = k + 2
        # Replace the first line: a finding goes or comes back.
        new = line_b if k % 2 == 0 else line_a
        old_end = {"line": 1, "character": 0}
        start = time.perf_counter()
        if full:
            change = {"text": new + text_a.split("\n", 1)[1]}
        else:
            change = {"range": {"start": {"line": 0, "character": 0}, "end": old_end}, "text": new}
        s.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        s.diagnostics(uri, version)
        times.append(time.perf_counter() - start)
    peak = s.peak_rss()
    s.p.kill()
    s.p.wait()
    return opened, statistics.median(times), len(first["params"]["diagnostics"]), peak


def measure_big(cmd, root, mb, doc, bound=30):
    """Start to the diagnostics of one MB-megabyte document (None: none within
    `bound` seconds), the server's peak memory, and the first diagnostic's code."""
    name, lang, line_a, line_b = DOCUMENTS[doc]
    block = line_a + line_b * 9
    text = block * (mb * 1024 * 1024 // len(block))
    uri = "file://" + root + "/bench/big-" + name
    start = time.perf_counter()
    s = Server(cmd, root)
    s.request("initialize", {"processId": None, "rootUri": "file://" + root, "capabilities": {}})
    s.notify("initialized", {})
    s.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": lang, "version": 1, "text": text}})
    del text
    try:
        got = s.diagnostics(uri, 1, timeout=bound)
        took = time.perf_counter() - start
        items = got["params"]["diagnostics"]
        code = items[0].get("code") if items else None
        shown = "%d diagnostics%s" % (len(items), ", first %s" % code if code else "")
    except queue.Empty:
        took, shown = None, "no answer in %d s" % bound
    peak = s.peak_rss()
    s.p.kill()
    s.p.wait()
    return took, peak, shown


def main():
    args = sys.argv[1:]
    big, big_peer = None, False
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--big":
            big = int(args.pop(0))
        elif flag == "--big-peer":
            big_peer = True
        else:
            sys.exit("unknown flag " + flag)
    astedit, ast_grep, project = (os.path.abspath(a) for a in args[0:3])
    n = int(args[3]) if len(args) > 3 else 20
    lang = args[4] if len(args) > 4 else "javascript"
    rounds = int(args[5]) if len(args) > 5 else 1
    servers = (("ast-grep lsp", [ast_grep, "lsp"]), ("git astedit lsp", [astedit, "lsp"]))
    got = {name: ([], [], [], [], []) for name, _ in servers}
    bigs = {name: [] for name, _ in servers}
    for r in range(rounds):
        # A fresh copy per round: the first start finds no cache of ours.
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "project")
            shutil.copytree(project, root, ignore=shutil.ignore_patterns(".git"))
            subprocess.run(["chmod", "-R", "u+w", root], check=True)
            subprocess.run(["git", "init", "-q"], cwd=root, check=True)
            order = servers if r % 2 == 0 else servers[::-1]
            for name, cmd in order:
                first, change, found, peak = measure(cmd, root, n, lang)
                again, change2, _, _ = measure(cmd, root, n, lang)
                firsts, agains, changes, counts, peaks = got[name]
                firsts.append(first)
                agains.append(again)
                changes.extend([change, change2])
                counts.append(found)
                peaks.append(peak)
                if big and (name == "git astedit lsp" or big_peer):
                    bigs[name].append(measure_big(cmd, root, big, lang))
    med = lambda xs: statistics.median(xs) * 1000
    mib = lambda xs: statistics.median(xs) / (1024 * 1024)
    print("| server | first open to diagnostics | restart: open to diagnostics "
          "| didChange to diagnostics (median of %d × %d) | findings "
          "| peak memory, first start |" % (n, 2 * rounds))
    print("| --- | --- | --- | --- | --- | --- |")
    for name, _ in servers:
        firsts, agains, changes, counts, peaks = got[name]
        print("| %s | %.0f ms | %.0f ms | %.1f ms | %d | %.0f MiB |"
              % (name, med(firsts), med(agains), med(changes), counts[0], mib(peaks)))
    a, b = got["git astedit lsp"], got["ast-grep lsp"]
    print("\nratio git-astedit / ast-grep: first open %.2f, restart %.2f, didChange %.2f, "
          "peak memory %.2f (%d rounds)"
          % (med(a[0]) / med(b[0]), med(a[1]) / med(b[1]), med(a[2]) / med(b[2]),
             mib(a[4]) / mib(b[4]), rounds))
    if big:
        print("\n| server | %d MB document: start to diagnostics | peak memory | answer |" % big)
        print("| --- | --- | --- | --- |")
        for name, _ in servers:
            for took, peak, shown in bigs[name]:
                print("| %s | %s | %.0f MiB | %s |"
                      % (name, "%.0f ms" % (took * 1000) if took is not None else "-",
                         peak / (1024 * 1024), shown))


if __name__ == "__main__":
    main()
