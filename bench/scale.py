#!/usr/bin/env python3
"""Cost growth of git-astedit on synthetic TypeScript trees (issue 16, item 3).

Run it through bench/scale.sh; see bench/README.md ("Scale"). Standard library only.

For each size (10,000 and 100,000 files by default) a tree of the same shape is built
under $SCALE_DIR (default /tmp/astedit-scale): folders of 100 files, each file with one
`console.log(...)`, one commit. Every file is rewritten. Timed, per size:

  grep   `grep -p 'console.log($A)' -l ts --max-count 0`
  edit   `edit -p 'console.log($A)' -r 'logger.info($A)' -l ts` (staging)
  apply  `apply ID`
  undo   `undo ID`

with a journal of 10,000 events in the repository. The journal is made once by the real
binary in a small seed repository (stage a one-line edit, discard it; every 25th round
stage, apply, undo, discard), and fetched into each tree's repository
(`refs/astedit-journal` and the previews it names come along: the journal is a chain of
git commits, so this is the same journal the tool would have written there). `list` and
`log` (default output) are timed with the journal's first 100 events and with all
10,000, in the 10k tree.

Every timed run is one child process under GNU time (wall, user + system CPU, peak RSS)
and, when `perf` can count, under `perf stat -e task-clock` as well: the CPU time of
the process and its threads at sub-millisecond resolution (GNU time's is 10 ms).
(Instruction counts would not depend on the machine's load at all, but this VM has no
hardware counters.)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCALE_DIR = Path(os.environ.get("SCALE_DIR", "/tmp/astedit-scale"))
# Where the seed journal is written (it does not depend on the file system measured).
SEED_DIR = Path(os.environ.get("SCALE_SEED_DIR", str(SCALE_DIR)))
PER_FOLDER = 100
PATTERN = "console.log($A)"
REWRITE = "logger.info($A)"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def log(msg: str) -> None:
    print(f"[scale] {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], cwd: Path | None = None, check: bool = True, env: dict | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, **GIT_ENV, **(env or {})})
    if check and proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    return proc.stdout


# ---------------------------------------------------------------- trees and journal


def file_text(i: int) -> str:
    # One file in a hundred holds a `debugger` statement: what the warm scan's rule finds.
    return (f"// generated file {i}\n"
            f"import {{ helper{i % 7} }} from \"../lib\";\n\n"
            f"export function f{i}(a: number): number {{\n"
            f"  const b = helper{i % 7}(a) + {i};\n"
            f"  console.log(b);\n"
            + ("  debugger;\n" if i % DEBUGGER_EVERY == 0 else "")
            + f"  return b * 2;\n"
            f"}}\n")


DEBUGGER_EVERY = 100


def build_tree(n: int) -> Path:
    """The tree of n files (cached: a finished tree has a `.done` marker). The files'
    blobs go into one pack through `git fast-import` (500,000 loose objects would take
    a file system block each), then `git reset` makes the index and refreshes it."""
    root = SCALE_DIR / f"tree-{n}"
    if (root / ".git" / "scale.done").exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    log(f"building a tree of {n:,} files in {root}")
    root.mkdir(parents=True)
    sh(["git", "init", "-q", "-b", "main"], cwd=root)
    imp = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=root, stdin=subprocess.PIPE,
                           env={**os.environ, **GIT_ENV})
    assert imp.stdin is not None
    out = imp.stdin
    stamp = b"bench <bench@localhost> 1767225600 +0000"
    out.write(b"commit refs/heads/main\ncommitter %s\ndata %d\n%s\n"
              % (stamp, len(f"{n} files"), f"{n} files".encode()))
    for i in range(n):
        rel = f"src/d{i // PER_FOLDER:04d}/f{i % PER_FOLDER:02d}.ts"
        if i % PER_FOLDER == 0:
            (root / rel).parent.mkdir(parents=True)
        data = file_text(i).encode()
        (root / rel).write_bytes(data)
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(data), data))
    out.close()
    if imp.wait() != 0:
        raise SystemExit("git fast-import failed")
    sh(["git", "reset", "-q"], cwd=root)
    if sh(["git", "status", "--porcelain"], cwd=root).strip():
        raise SystemExit(f"the {n}-file tree is not clean after its import")
    (root / ".git" / "scale.done").write_text("")
    return root


REAL_EVENTS = 200


def build_journal(astedit: Path, events: int) -> Path:
    """A small repository whose journal has `events` events; `refs/seed/j100` and
    `refs/seed/jN` mark it after 100 and after N events.

    The first REAL_EVENTS events are written by the binary itself, one process per
    event (stage a one-line edit, discard it; every 25th round stage, apply, undo,
    discard). On a loaded 2-core machine that is 3–4 events a second, so the rest are
    copies of those, written as loose objects by this script: event k + i·REAL_EVENTS
    is event k with its own preview commit (the same commit with a later committer
    time, so a distinct id) and its id, commit, time and run changed to match. The
    journal commits have the shape the binary writes (previous event and preview as
    parents, the empty tree, the event's JSON as the message), so readers cannot tell
    them apart from real ones."""
    root = SEED_DIR / f"journal-{events}"
    if (root / ".git" / "scale.done").exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    real = min(events, REAL_EVENTS)
    log(f"writing a journal of {events:,} events in {root}: {real} by the binary, then copies")
    root.mkdir(parents=True)
    sh(["git", "init", "-q", "-b", "main"], cwd=root)
    (root / "a.ts").write_text("console.log(1);\n")
    sh(["git", "add", "-A"], cwd=root)
    sh(["git", "commit", "-q", "-m", "seed"], cwd=root)

    def run(*args: str) -> str:
        return sh([str(astedit), *args], cwd=root)

    done, rounds = 0, 0
    while done < real:
        out = run("--json", "edit", "-p", PATTERN, "-r", REWRITE, "-l", "ts", "--reason", f"round {rounds}")
        pid = json.loads(out)["id"]
        done += 1
        if rounds % 25 == 24 and real - done >= 3:
            run("apply", pid)
            run("undo", pid)
            done += 2
        if done < real:
            run("discard", pid)
            done += 1
        rounds += 1
    chain = journal_chain(root, "refs/astedit-journal")
    if len(chain) != real:
        raise SystemExit(f"the binary wrote {len(chain)} events, expected {real}")
    if real >= 100:
        sh(["git", "update-ref", "refs/seed/j100", chain[99]], cwd=root)
    copy_events(root, chain, events - real)
    counted = len(journal_chain(root, "refs/astedit-journal"))
    if counted != events:
        raise SystemExit(f"the seed journal has {counted} events, expected {events}")
    sh(["git", "update-ref", f"refs/seed/j{events}", "refs/astedit-journal"], cwd=root)
    sh(["git", "fsck", "--connectivity-only", "--no-progress"], cwd=root)
    (root / ".git" / "scale.done").write_text("")
    return root


def journal_chain(root: Path, ref: str) -> list[str]:
    """The journal commits of `ref`, oldest first: the first-parent chain down to the
    first commit with a single parent (the first event, whose parent is its preview)."""
    chain = []
    for line in sh(["git", "rev-list", "--first-parent", "--parents", ref], cwd=root).splitlines():
        commit, *parents = line.split()
        chain.append(commit)
        if len(parents) < 2:
            break
    return chain[::-1]


def copy_events(root: Path, chain: list[str], extra: int) -> None:
    """Appends `extra` copies of the events of journal commits `chain` (oldest first)."""
    import hashlib
    import zlib

    def raw(oid: str) -> bytes:
        return subprocess.run(["git", "cat-file", "commit", oid], cwd=root, stdout=subprocess.PIPE,
                              check=True).stdout

    def write(body: bytes) -> str:
        data = b"commit %d\0" % len(body) + body
        oid = hashlib.sha1(data).hexdigest()
        path = root / ".git" / "objects" / oid[:2] / oid[2:]
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(zlib.compress(data, 1))
        return oid

    def retime(body: bytes, field: bytes, delta: int) -> bytes:
        """The commit with `delta` seconds added to its `field` (author/committer) time."""
        head, _, message = body.partition(b"\n\n")
        lines = head.split(b"\n")
        for j, line in enumerate(lines):
            if line.startswith(field + b" "):
                who, stamp, tz = line.rsplit(b" ", 2)
                lines[j] = b"%s %d %s" % (who, int(stamp) + delta, tz)
        return b"\n".join(lines) + b"\n\n" + message

    journal = [raw(c) for c in chain]
    previews = {}
    tip = chain[-1]
    for i in range(extra):
        k = i % len(chain)
        shift = (i // len(chain) + 1) * 100_000
        head, _, message = journal[k].partition(b"\n\n")
        parents = [line.split()[1].decode() for line in head.split(b"\n") if line.startswith(b"parent ")]
        old_p = parents[-1]
        if old_p not in previews:
            previews[old_p] = raw(old_p)
        # One new preview per (preview, cycle): the same commit, committed later.
        new_p = write(retime(previews[old_p], b"committer", shift))
        event = json.loads(message)
        old_id = event["id"]
        event["id"], event["commit"], event["time"] = new_p[:12], new_p, event["time"] + shift
        if "run" in event:
            event["run"] += f"-{i}"
        assert old_id == old_p[:12], (old_id, old_p)
        lines = [line for line in head.split(b"\n") if not line.startswith(b"parent ")]
        body = (lines[0] + b"\n" + b"parent %s\nparent %s\n" % (tip.encode(), new_p.encode())
                + b"\n".join(lines[1:]) + b"\n\n" + json.dumps(event, separators=(",", ":")).encode() + b"\n")
        tip = write(retime(retime(body, b"author", shift), b"committer", shift))
    sh(["git", "update-ref", "refs/astedit-journal", tip], cwd=root)


def install_journal(tree: Path, seed: Path, ref: str) -> None:
    """Makes the seed's journal `ref` the tree repository's journal."""
    sh(["git", "fetch", "-q", "--no-tags", str(seed), f"+{ref}:refs/astedit-journal"], cwd=tree)


# ---------------------------------------------------------------- measuring


@dataclass
class Run:
    wall: float
    cpu: float
    rss_kib: int
    task_clock: float | None


@dataclass
class Row:
    task: str
    size: int  # files in the tree (or events in the journal for list/log)
    runs: list[Run] = field(default_factory=list)

    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)

    def rss(self) -> int:
        return max(r.rss_kib for r in self.runs)

    def task_clock(self) -> float | None:
        counts = [r.task_clock for r in self.runs if r.task_clock is not None]
        return statistics.median(counts) if counts else None


def perf_works() -> bool:
    try:
        proc = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "true"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except OSError:
        return False
    return proc.returncode == 0 and "task-clock" in proc.stderr and "not supported" not in proc.stderr


def measure(cmd: list[str], cwd: Path, out: Path, perf: bool) -> tuple[Run, str]:
    """One run of cmd, stdout to the file `out`; returns the run and its stdout."""
    usage, counts = out.with_suffix(".time"), out.with_suffix(".perf")
    wrapped = ["/usr/bin/time", "-f", "%e %M %x %U %S", "-o", str(usage), *cmd]
    if perf:
        wrapped = ["perf", "stat", "-x,", "-e", "task-clock", "-o", str(counts), *wrapped]
    with open(out, "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        start = time.perf_counter()
        subprocess.run(wrapped, cwd=cwd, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                       env={**os.environ, **GIT_ENV})
        wall = time.perf_counter() - start
    _, rss, code, user, system = usage.read_text().split("\n")[-2].split()
    if int(code) != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {code}:\n{out.with_suffix('.err').read_text()}")
    task_clock = None
    if perf:
        for line in counts.read_text().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2].startswith("task-clock"):
                try:
                    task_clock = float(fields[0]) / 1000  # ms → s
                except ValueError:
                    pass
    return Run(wall, float(user) + float(system), int(rss), task_clock), out.read_text(errors="replace")


def measure_size(astedit: Path, n: int, seed: Path, events: int, runs: int, perf: bool, work: Path) -> list[Row]:
    tree = build_tree(n)
    install_journal(tree, seed, f"refs/seed/j{events}")
    # Nothing pending from an earlier (interrupted) run; the index matches the files.
    for pid in sh(["git", "for-each-ref", "--format=%(refname:lstrip=2)", "refs/astedit/"], cwd=tree).split():
        sh([str(astedit), "discard", pid], cwd=tree)
    rows = {t: Row(t, n) for t in ("grep", "edit", "apply", "undo")}
    ts = ["-l", "ts"]
    for r in range(runs + 1):  # the first round warms the page cache and is not kept
        sh(["git", "update-index", "-q", "--refresh"], cwd=tree, check=False)
        got = {}
        got["grep"], text = measure([str(astedit), "grep", "-p", PATTERN, *ts, "--max-count", "0"], tree,
                                    work / f"grep-{n}.out", perf)
        matches = sum(1 for line in text.splitlines() if "console.log(" in line)
        if matches != n:
            raise SystemExit(f"grep found {matches} matches in the {n}-file tree, expected {n}")
        got["edit"], text = measure([str(astedit), "--json", "edit", "-p", PATTERN, "-r", REWRITE, *ts], tree,
                                    work / f"edit-{n}.out", perf)
        pid = json.loads(text)["id"]
        got["apply"], _ = measure([str(astedit), "apply", pid], tree, work / f"apply-{n}.out", perf)
        sample = (tree / "src" / "d0000" / "f00.ts").read_text()
        if "logger.info(b)" not in sample:
            raise SystemExit(f"apply did not rewrite the files:\n{sample}")
        got["undo"], _ = measure([str(astedit), "undo", pid], tree, work / f"undo-{n}.out", perf)
        if (tree / "src" / "d0000" / "f00.ts").read_text() != file_text(0):
            raise SystemExit("undo did not restore the files")
        sh([str(astedit), "discard", pid], cwd=tree)
        if r > 0:
            for task, run in got.items():
                rows[task].runs.append(run)
        log(f"  {n:,} files, round {r}{' (warm-up)' if r == 0 else ''}: "
            + ", ".join(f"{t} {x.wall:.2f} s" for t, x in got.items()))
    return list(rows.values())


def measure_listing(astedit: Path, seed: Path, events: int, runs: int, perf: bool, work: Path,
                    tree: Path) -> list[Row]:
    rows = []
    for journal in (100, events):
        install_journal(tree, seed, f"refs/seed/j{journal}")
        for task, cmd in (("list", ["list"]), ("log", ["log"])):
            row = Row(task, journal)
            for r in range(runs + 1):
                run, _ = measure([str(astedit), *cmd], tree, work / f"{task}-{journal}.out", perf)
                if r > 0:
                    row.runs.append(run)
            rows.append(row)
    install_journal(tree, seed, f"refs/seed/j{events}")
    return rows


# ---------------------------------------------------------------- warm scan


RULE = """id: no-debugger
language: TypeScript
severity: warning
message: a debugger statement
rule:
  pattern: debugger;
"""

# (label, core.untrackedCache, fsmonitor through Watchman)
WARM_MODES = (("plain", False, False), ("untracked cache", True, False), ("fsmonitor", True, True))
FSMONITOR_HOOK = Path("/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample")


def rules_dir() -> Path:
    """A rule project outside the trees: one rule, a `debugger` statement."""
    root = SCALE_DIR / "rules"
    (root / "rules").mkdir(parents=True, exist_ok=True)
    (root / "sgconfig.yml").write_text("ruleDirs:\n  - rules\n")
    (root / "rules" / "no-debugger.yml").write_text(RULE)
    return root


def watchman_ok() -> bool:
    return shutil.which("watchman") is not None and FSMONITOR_HOOK.exists()


def watchman_running() -> bool:
    """Whether a Watchman service already runs (asked without starting one)."""
    if shutil.which("watchman") is None:
        return False
    return subprocess.run(["watchman", "--no-spawn", "get-sockname"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def set_mode(tree: Path, untracked_cache: bool, fsmonitor: bool) -> None:
    """git's config and index extensions for one warm-scan mode."""
    sh(["git", "config", "core.untrackedCache", "true" if untracked_cache else "false"], cwd=tree)
    sh(["git", "update-index", "--untracked-cache" if untracked_cache else "--no-untracked-cache"], cwd=tree)
    hook = tree / ".git" / "hooks" / "fsmonitor-watchman"
    if fsmonitor:
        hook.parent.mkdir(exist_ok=True)
        shutil.copy(FSMONITOR_HOOK, hook)
        hook.chmod(0o755)
        sh(["git", "config", "core.fsmonitor", str(hook)], cwd=tree)
        sh(["git", "update-index", "--fsmonitor"], cwd=tree)
    else:
        sh(["git", "config", "--unset-all", "core.fsmonitor"], cwd=tree, check=False)
        sh(["git", "update-index", "--no-fsmonitor"], cwd=tree)
        if hook.exists():  # (a `watchman` call would start its daemon)
            sh(["watchman", "watch-del", str(tree)], check=False)
            hook.unlink()
    # Two statuses: the first (re)builds what the mode keeps (Watchman's crawl, the
    # untracked cache), the second writes the index that records it.
    for _ in range(2):
        sh(["git", "status", "--porcelain"], cwd=tree)


def measure_warm(binaries: list[tuple[str, Path]], n: int, runs: int, perf: bool, work: Path,
                 modes: list[str] | None = None, cold: tuple[str, ...] = ()) -> list[Row]:
    """`git status --porcelain` beside a warm scan (tree unchanged, the cache filled by
    an untimed run first) in each mode: plain, with core.untrackedCache, with
    core.fsmonitor through Watchman's hook (when Watchman is installed). `modes`: only
    these labels; `cold`: also these of the first scan (`first`) and a scan after one
    file changed (`changed`), see `measure_cold`."""
    tree = build_tree(n)
    conf = rules_dir() / "sgconfig.yml"
    expect = (n + DEBUGGER_EVERY - 1) // DEBUGGER_EVERY
    rows = []
    for label, uc, fsm in WARM_MODES:
        if modes is not None and label not in modes:
            continue
        if fsm and not watchman_ok():
            log("  fsmonitor rows skipped: no watchman (or no fsmonitor-watchman hook sample)")
            continue
        set_mode(tree, uc, fsm)
        status = Row(f"git status [{label}]", n)
        scans = [(Row(f"warm scan{'' if name == 'after' else f' ({name})'} [{label}]", n), exe)
                 for name, exe in binaries]
        cmds = [(status, ["git", "status", "--porcelain"])]
        cmds += [(row, [str(exe), "scan", "--config", str(conf)]) for row, exe in scans]
        outputs = {}
        for r in range(runs + 1):  # round 0 warms the page cache and the result cache
            # The order rotates, so that no row always follows the same one.
            for k in range(len(cmds)):
                j = (k + r) % len(cmds)
                row, cmd = cmds[j]
                run, text = measure(cmd, tree, work / f"warm-{n}-{j}.out", perf)
                if r > 0:
                    row.runs.append(run)
                outputs[row.task] = text
        if outputs[status.task].strip():
            raise SystemExit(f"the {n}-file tree is not clean:\n{outputs[status.task][:500]}")
        texts = [outputs[row.task] for row, _ in scans]
        found = texts[0].count("no-debugger")
        if found != expect:
            raise SystemExit(f"the warm scan found {found} debugger statements in the {n}-file tree, "
                             f"expected {expect}:\n{texts[0][:500]}")
        if any(t != texts[0] for t in texts[1:]):
            raise SystemExit("the binaries' warm scans printed different findings")
        log(f"  {n:,} files, {label}: git status {status.wall():.2f} s, "
            + ", ".join(f"{row.task} {row.wall():.2f} s" for row, _ in scans))
        rows += [status] + [row for row, _ in scans]
        if cold:
            rows += measure_cold(binaries, n, runs, perf, work, tree, label, texts[0], cold)
    set_mode(tree, False, False)
    return rows


CHANGED_FILE = "src/d0000/f01.ts"


def measure_cold(binaries: list[tuple[str, Path]], n: int, runs: int, perf: bool, work: Path, tree: Path,
                 label: str, expect: str, kinds: tuple[str, ...] = ("first", "changed")) -> list[Row]:
    """The scans a warm memo does not answer, in the same rounds, each binary with its
    own cache folder: the first scan (the folder emptied before each run: no result,
    no plan, no memo) and a scan after one file changed (the folder filled by the
    warm-up round; `CHANGED_FILE` rewritten with new content just before each run, so
    git reports it and no memo stands for the tree). The findings must be those of the
    warm scan (`expect`), the changed file holding none."""
    conf = rules_dir() / "sgconfig.yml"
    rows = []
    cmds = []
    for name, exe in binaries:
        suffix = "" if name == "after" else f" ({name})"
        for kind in kinds:
            row = Row(f"{kind} scan{suffix} [{label}]", n)
            cache = work / f"cache-{kind}-{name}"
            cmds.append((row, kind, cache, [str(exe), "--cache-dir", str(cache), "scan", "--config", str(conf)]))
    shutil.rmtree(work / "cache-changed-after", ignore_errors=True)
    shutil.rmtree(work / "cache-changed-before", ignore_errors=True)
    original = (tree / CHANGED_FILE).read_text()
    try:
        for r in range(runs + 1):  # round 0 warms the page cache and fills the changed rows' caches
            for k in range(len(cmds)):
                j = (k + r) % len(cmds)
                row, kind, cache, cmd = cmds[j]
                if kind == "first":
                    shutil.rmtree(cache, ignore_errors=True)
                else:
                    (tree / CHANGED_FILE).write_text(original + f"// round {r}, run {j}\n")
                run, text = measure(cmd, tree, work / f"cold-{n}-{j}.out", perf)
                if text != expect:
                    raise SystemExit(f"{row.task}: the findings differ from the warm scan's:\n{text[:500]}")
                if r > 0:
                    row.runs.append(run)
            log(f"  {n:,} files, {label}, round {r}{' (warm-up)' if r == 0 else ''}: "
                + ", ".join(f"{row.task} {row.runs[-1].wall:.2f} s" for row, _, _, _ in cmds if row.runs))
    finally:
        (tree / CHANGED_FILE).write_text(original)
        sh(["git", "update-index", "-q", "--refresh"], cwd=tree, check=False)
    return [row for row, _, _, _ in cmds]


# ---------------------------------------------------------------- report


def fmt_s(s: float) -> str:
    return f"{s:.3f} s" if s < 1 else f"{s:.2f} s"


def fmt_us(s: float) -> str:
    return f"{s * 1e6:,.1f} µs"


def report(rows: list[Row], listing: list[Row], sizes: list[int], events: int, meta: dict) -> str:
    lines = [
        f"- date: {meta['date']}",
        f"- machine: {meta['machine']}; load average at start {meta['load_start']}, at end {meta['load_end']}",
        f"- versions: {meta['versions']}",
        f"- command: `{meta['command']}`; {meta['runs']} timed runs each after one warm-up; "
        + (f"journal of {events:,} events in every tree" if listing or any(r.task == "grep" for r in rows)
         else "warm-scan rows only"),
        "",
        "| task | files | median wall | CPU | task-clock | peak RSS | wall per file | CPU per file "
        "| task-clock per file |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by = {(r.task, r.size): r for r in rows}
    for r in rows:
        ins = r.task_clock()
        lines.append(f"| {r.task} | {r.size:,} | {fmt_s(r.wall())} | {fmt_s(r.cpu())} | "
                     f"{'' if ins is None else fmt_s(ins)} | {r.rss() / 1024:.0f} MiB | "
                     f"{fmt_us(r.wall() / r.size)} | {fmt_us(r.cpu() / r.size)} | "
                     f"{'' if ins is None else fmt_us(ins / r.size)} |")
    if len(sizes) >= 2 and any(r.task == "grep" for r in rows):
        small, big = sizes[0], sizes[-1]
        lines += ["", f"Growth, per-file cost at {big:,} ÷ per-file cost at {small:,} (bar: ≤ 1.3×):", ""]
        lines += ["| task | wall | CPU | task-clock |", "|---|---:|---:|---:|"]
        for task in ("grep", "edit", "apply", "undo"):
            a, b = by.get((task, small)), by.get((task, big))
            if not a or not b:
                continue
            ia, ib = a.task_clock(), b.task_clock()
            ins = "" if ia is None or ib is None else f"{(ib / big) / (ia / small):.2f}×"
            cpu = f"{(b.cpu() / big) / (a.cpu() / small):.2f}×" if a.cpu() > 0 else ""
            lines.append(f"| {task} | {(b.wall() / big) / (a.wall() / small):.2f}× | {cpu} | {ins} |")
    warm = [r for r in rows if r.task.startswith(("git status [", "warm scan", "first scan", "changed scan"))]
    if warm:
        lines += warm_report(warm, sizes)
    if listing:
        lines += ["", f"`list` and `log` (default output), journal of 100 and of {events:,} events "
                  f"({sizes[0]:,}-file tree, nothing pending):", "",
                  "| command | journal events | median wall | CPU | task-clock | peak RSS |",
                  "|---|---:|---:|---:|---:|---:|"]
        for r in listing:
            ins = r.task_clock()
            lines.append(f"| {r.task} | {r.size:,} | {fmt_s(r.wall())} | {fmt_s(r.cpu())} | "
                         f"{'' if ins is None else fmt_s(ins)} | {r.rss() / 1024:.0f} MiB |")
        lb = {(r.task, r.size): r for r in listing}
        lines += ["", f"Ratio {events:,} ÷ 100 events:", ""]
        for task in ("list", "log"):
            a, b = lb[(task, 100)], lb[(task, events)]
            ia, ib = a.task_clock(), b.task_clock()
            ins = "" if ia is None or ib is None else f", task-clock {ib / ia:.2f}×"
            cpu = f"{b.cpu() / a.cpu():.2f}×" if a.cpu() > 0 else "(below time's 10 ms)"
            lines.append(f"- {task}: wall {b.wall() / a.wall():.2f}×, CPU {cpu}{ins}")
    return "\n".join(lines) + "\n"


def warm_report(warm: list[Row], sizes: list[int]) -> list[str]:
    """The warm scan beside `git status`, per mode and size, and its growth."""
    by = {(r.task, r.size): r for r in warm}
    modes = [label for label, _, _ in WARM_MODES if any(f"[{label}]" in r.task for r in warm)]
    kinds = ("warm scan", "changed scan", "first scan")
    scans = sorted({r.task.split(" [")[0] for r in warm if r.task.startswith(kinds)},
                   key=lambda t: ([t.startswith(k) for k in kinds].index(True), "(" in t, t))
    lines = ["", "Warm scan (tree unchanged, result cache filled; `scan --config` with one rule) beside "
             "`git status --porcelain`, same rounds; peak RSS of a scan that asks git includes "
             "its `git status` child (GNU time reports the largest of the process tree)"
             + ("; *first scan*: an empty cache folder; *changed scan*: the cache filled, one file "
                "rewritten just before" if any(t.startswith(kinds[1:]) for t in scans) else "")
             + ":", "",
             "| mode | files | row | median wall | CPU | peak RSS | wall ÷ git status | CPU ÷ git status |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for mode in modes:
        for n in sizes:
            st = by.get((f"git status [{mode}]", n))
            if not st:
                continue
            for task in ["git status"] + scans:
                r = by.get((f"{task} [{mode}]", n))
                if not r:
                    continue
                lines.append(f"| {mode} | {n:,} | {task} | {fmt_s(r.wall())} | {fmt_s(r.cpu())} | "
                             f"{r.rss() / 1024:.0f} MiB | {r.wall() / st.wall():.2f}× | "
                             + (f"{r.cpu() / st.cpu():.2f}× |" if st.cpu() > 0 else " |"))
    if len(sizes) >= 2:
        small = sizes[0]
        lines += ["", f"Growth of the warm rows: wall per file at each size ÷ wall per file at {small:,}:", "",
                  "| mode | row | " + " | ".join(f"{n:,}" for n in sizes[1:]) + " |",
                  "|---|---|" + "---:|" * (len(sizes) - 1)]
        for mode in modes:
            for task in ["git status"] + scans:
                a = by.get((f"{task} [{mode}]", small))
                if not a:
                    continue
                cells = []
                for n in sizes[1:]:
                    b = by.get((f"{task} [{mode}]", n))
                    cells.append(f"{(b.wall() / n) / (a.wall() / small):.2f}×" if b else "")
                lines.append(f"| {mode} | {task} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="tree sizes in files (default 10000,100000)")
    ap.add_argument("--events", type=int, default=10000, help="journal events (default 10000)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per task (default 3)")
    ap.add_argument("--binary", type=Path, default=REPO / "target" / "release" / "git-astedit")
    ap.add_argument("--out", type=Path, help="also write the report to this file")
    ap.add_argument("--label", help="what the binary is (default: this checkout's commit)")
    ap.add_argument("--no-listing", action="store_true", help="skip the list/log rows")
    ap.add_argument("--listing-only", action="store_true", help="only the list/log rows")
    ap.add_argument("--no-perf", action="store_true", help="do not measure task-clock with perf")
    ap.add_argument("--before", type=Path, help="another binary whose warm scan runs in the same rounds")
    ap.add_argument("--no-warm", action="store_true", help="skip the warm-scan rows")
    ap.add_argument("--warm-only", action="store_true", help="only the warm-scan rows")
    ap.add_argument("--clean", action="store_true", help="delete each tree once measured (disk)")
    ap.add_argument("--modes", help="only these warm-scan modes, comma-separated: "
                    + ", ".join(label for label, _, _ in WARM_MODES))
    ap.add_argument("--cold", default="", help="also these, comma-separated, per mode: first (the first "
                    "scan, an empty cache folder), changed (a scan after one file changed)")
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if not args.binary.exists():
        raise SystemExit(f"no binary at {args.binary}: run `cargo build --release` (or bench/scale.sh)")
    perf = not args.no_perf and perf_works()
    SCALE_DIR.mkdir(parents=True, exist_ok=True)
    work = SCALE_DIR / "out"
    work.mkdir(exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    only_warm = args.warm_only
    # The fsmonitor rows start the user's Watchman service (git's hook does): stop it
    # afterwards only if it was not running before, so a service of the user's survives.
    watchman_was_running = watchman_running()
    seed = None if only_warm else build_journal(args.binary, args.events)
    binaries = [("after", args.binary)] + ([("before", args.before)] if args.before else [])
    rows: list[Row] = []
    listing: list[Row] = []
    if not args.no_listing and not only_warm:
        listing = measure_listing(args.binary, seed, args.events, max(args.runs, 5), perf, work,
                                  build_tree(sizes[0]))
    for n in [] if args.listing_only else sizes:
        if not only_warm:
            rows += measure_size(args.binary, n, seed, args.events, args.runs, perf, work)
        if not args.no_warm:
            modes = args.modes.split(",") if args.modes else None
            cold = tuple(k for k in args.cold.split(",") if k)
            if any(k not in ("first", "changed") for k in cold):
                raise SystemExit(f"--cold: first or changed, not {args.cold}")
            rows += measure_warm(binaries, n, args.runs, perf, work, modes, cold)
        if args.clean:
            shutil.rmtree(SCALE_DIR / f"tree-{n}", ignore_errors=True)
    if watchman_ok() and not args.no_warm and not watchman_was_running:
        sh(["watchman", "shutdown-server"], check=False)
    head = sh(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=False).strip()
    dirty = "+dirty" if sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           check=False).strip() else ""
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    meta = {
        "date": started.strftime("%Y-%m-%d %H:%M UTC")
        + f" ({(datetime.datetime.now(datetime.timezone.utc) - started).seconds // 60} min)",
        "machine": f"`nproc` {os.cpu_count()}, {cpu}, {mem:.0f} GiB RAM, Linux {platform.release()}, "
                   f"{sh(['stat', '-f', '-c', '%T', str(SCALE_DIR)], check=False).strip()} under {SCALE_DIR}",
        "load_start": load_start,
        "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "versions": f"{sh(['git', '--version']).strip()}; "
                    f"{sh([str(args.binary), '--version'], check=False).strip()} ({args.label or head + dirty})"
                    + (f"; before: {args.before}" if args.before else "")
                    + (f"; {sh(['watchman', '--version'], check=False).strip() and 'watchman ' + sh(['watchman', '--version'], check=False).strip()}" if watchman_ok() else "; no watchman"),
        "command": "bench/scale.sh " + " ".join(sys.argv[1:]),
        "runs": args.runs,
    }
    if args.out:
        # The raw runs, beside the report.
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"meta": meta, "rows": [{"task": r.task, "size": r.size, "runs": [vars(x) for x in r.runs]}
                                    for r in rows + listing]}, indent=1))
    text = report(rows, listing, sizes, args.events, meta)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
