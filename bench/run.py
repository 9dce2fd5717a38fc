#!/usr/bin/env python3
"""Side-by-side benchmark of git-astedit against the ast-grep CLI, ripgrep and git apply.

Run it through bench/run.sh (which builds the corpora and the release binary first); see
bench/README.md. Standard library only.

Every timed run is one child process under GNU time: wall time from a monotonic clock
around it (millisecond resolution, where time's %e has centiseconds), peak RSS from time's
%M. Tools alternate within each
round and the order rotates between rounds, after one untimed warm-up run of each tool.
Everything runs with the same thread count. Agreement checks run untimed, beside.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH_DIR = Path(os.environ.get("BENCH_DIR", "/tmp/astedit-bench"))

# (corpus, language (git-astedit -l, ast-grep --lang), globs giving rg the files of that
# language as the other two see them, pattern, literal for rg or None)
TS_FILES = ["*.ts", "*.mts", "*.cts"]
SEARCHES = [
    ("rust", "rust", ["*.rs"], "$A.unwrap()", ".unwrap()"),
    ("ts", "ts", TS_FILES, "console.log($A)", "console.log("),
    ("py", "python", ["*.py"], "print($$$A)", "print("),
    ("py", "python", ["*.py"], "$F($$$A)", None),
]
# One rule, as an sgconfig.yml and its rule folder, which both tools read.
SCAN_RULE = """id: no-unwrap
language: rust
severity: warning
message: unwrap
rule:
  pattern: $A.unwrap()
fix: $A.expect("bench")
"""
# The ast-grep-essentials rule collection (bench/corpus.sh essentials) is scanned over
# these corpora: every rule of every language, as a CI or pre-commit run would.
COLLECTION_CORPORA = ["py", "ts", "gson"]
STAGE_CORPUS = "rust"
STAGE_LANG = "rust"
STAGE_PATTERN = "$A.unwrap()"
STAGE_REWRITE = '$A.expect("bench")'


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- measuring


@dataclass
class Run:
    wall: float  # seconds
    rss_kib: int
    code: int
    cpu: float = 0.0  # user + system seconds
    stopped: bool = False  # killed at the time limit (`--timeout`)


TIMEOUT: float | None = None  # seconds a run may take (`--timeout`); None: no limit


def measure(cmd: list[str], cwd: Path, env: dict[str, str], out: Path) -> Run:
    """Runs cmd with stdout to the file `out` (never /dev/null: ripgrep stops at the
    first match when it sees /dev/null) and returns its wall time and peak RSS.

    The peak RSS comes from GNU time, a small process: a child forked straight from this
    Python process would count this process's own (possibly large) RSS as its peak,
    since Linux carries the high-water mark across exec. Wall time is taken here, at
    finer resolution than time's %e; time's own fork and exec add about a millisecond.

    A run that outlives `TIMEOUT` is killed with its whole process group and comes back
    `stopped` (ast-grep takes tens of minutes on some corpora with the rule collection)."""
    usage = out.with_suffix(".time")
    with open(out, "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%e %M %x %U %S", "-o", str(usage), *cmd], cwd=cwd,
                                env=env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return Run(time.perf_counter() - start, 0, 124, stopped=True)
        wall = time.perf_counter() - start
    try:
        _, rss, code, user, system = usage.read_text().split("\n")[-2].split()
        return Run(wall, int(rss), int(code), float(user) + float(system))
    except (OSError, ValueError, IndexError):
        return Run(wall, 0, proc.returncode if proc.returncode else 127)


def stderr_of(out: Path) -> str:
    try:
        return out.with_suffix(".err").read_text(errors="replace").strip()
    except OSError:
        return ""


@dataclass
class Row:
    corpus: str
    task: str  # what is measured, e.g. "grep $A.unwrap()"
    tool: str
    command: str
    runs: list[Run] = field(default_factory=list)
    count: str = ""  # matches / files, filled by the agreement checks
    baseline: bool = False  # the row the others in its group are compared against
    floor: bool = False  # the parse floor of its group (bench/parse_floor.rs)
    error: str = ""
    stopped: float = 0.0  # > 0: a run was killed after this many seconds (`--timeout`)

    def walls(self) -> list[float]:
        return [r.wall for r in self.runs]

    def median(self) -> float | None:
        return statistics.median(self.walls()) if self.runs else None

    def cpu(self) -> float | None:
        return statistics.median(r.cpu for r in self.runs) if self.runs else None

    def peak(self) -> int | None:
        return max(r.rss_kib for r in self.runs) if self.runs else None


# ---------------------------------------------------------------- tools


@dataclass
class Tools:
    astedit: Path | None
    astedit_help: dict[str, str]
    ast_grep: str
    rg: str
    threads: int
    env: dict[str, str]
    versions: dict[str, str]
    floor: Path | None = None  # the parse-floor example (bench/parse_floor.rs)

    def astedit_has(self, command: str, flag: str) -> bool:
        return re.search(rf"(^|\s){re.escape(flag)}[\s,=]", self.astedit_help.get(command, ""), re.M) is not None

    def astedit_threads(self, command: str) -> list[str]:
        if self.astedit_has(command, "--threads"):
            return ["--threads", str(self.threads)]
        return []

    # `-l LANG` searches the files of LANG by extension, like ast-grep's `--lang`.
    def astedit_no_cache(self) -> list[str]:
        """`--no-cache` where the binary has a result cache: the rows against ast-grep
        measure a run that reads and parses every file (the cache has rows of its own)."""
        return ["--no-cache"] if self.astedit_has("grep", "--no-cache") else []

    def astedit_grep(self, pattern: str, lang: str, json_out: bool = False) -> list[str]:
        cmd = [str(self.astedit), *self.astedit_no_cache(), "grep", "-p", pattern, "-l", lang] + \
            self.astedit_threads("grep")
        if self.astedit_has("grep", "--max-count"):
            cmd += ["--max-count", "0"]  # unlimited: the same work as ast-grep
        if json_out:
            cmd.insert(1, "--json")
        return cmd

    def astedit_edit(self, pattern: str, rewrite: str, lang: str) -> list[str]:
        return [str(self.astedit), *self.astedit_no_cache(), "edit", "-p", pattern, "-r", rewrite, "-l", lang] + \
            self.astedit_threads("edit")


def sh(cmd: list[str], cwd: Path | None = None, check: bool = True, **kw) -> str:
    res = subprocess.run(cmd, cwd=cwd, check=check, stdout=subprocess.PIPE, text=True, **kw)
    return res.stdout


def prepare(args: argparse.Namespace) -> tuple[Tools, dict[str, Path]]:
    log("corpora and tools: bench/corpus.sh")
    lines = sh([str(REPO / "bench" / "corpus.sh")]).splitlines()
    found = dict(line.split("=", 1) for line in lines if "=" in line)
    corpora = {name: Path(found[name]) for name in ("rust", "ts", "py", "gson") if name in found}
    if "essentials" in found:
        corpora["essentials"] = Path(found["essentials"])
    ast_grep = found["ast-grep"].split(" (")[0]
    rg = found["rg"].split(" (")[0]

    astedit: Path | None = None
    if not args.no_build:
        log("cargo build --release (and the parse-floor example)")
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--bin", "git-astedit",
                        "--example", "parse-floor"], cwd=REPO, check=True)
    candidate = Path(args.astedit) if args.astedit else REPO / "target" / "release" / "git-astedit"
    if candidate.exists():
        astedit = candidate.resolve()
    else:
        log(f"no {candidate}: measuring the other tools only")
    floor: Path | None = Path(args.floor) if args.floor else REPO / "target" / "release" / "examples" / "parse-floor"
    if not floor.exists():
        log(f"no {floor}: no parse-floor rows")
        floor = None
    else:
        floor = floor.resolve()

    helps: dict[str, str] = {}
    if astedit:
        for command in ("grep", "edit", "apply", "scan"):
            helps[command] = sh([str(astedit), command, "--help"], check=False)

    env = dict(os.environ)
    env["RAYON_NUM_THREADS"] = str(args.threads)
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    env.setdefault("NO_COLOR", "1")

    versions = {
        "ast-grep": sh([ast_grep, "--version"]).strip(),
        "ripgrep": sh([rg, "--version"]).splitlines()[0],
        "git": sh(["git", "--version"]).strip(),
        "rustc": sh(["rustc", "--version"]).strip(),
    }
    if astedit:
        rev = sh(["git", "rev-parse", "--short", "HEAD"], cwd=REPO).strip()
        dirty = sh(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench"],
                   cwd=REPO).strip()
        versions["git-astedit"] = (sh([str(astedit), "--version"], check=False).strip()
                                   + f" ({rev}{', dirty' if dirty else ''})")
    if astedit and args.astedit:
        versions["git-astedit"] = sh([str(astedit), "--version"], check=False).strip() + f" ({args.astedit})"
    return Tools(astedit, helps, ast_grep, rg, args.threads, env, versions, floor), corpora


# ---------------------------------------------------------------- helpers


def fresh_copy(corpus: Path, dest: Path) -> Path:
    """A private copy of a corpus repository with a refreshed index (untimed)."""
    if dest.exists():
        shutil.rmtree(dest)
    # A run of one group (`--only cache`) may be the first to copy anything.
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(corpus), str(dest)], check=True)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=dest, check=False)
    # Write the copy back to disk now, untimed: otherwise whichever timed tool makes its
    # writes durable (git astedit apply's syncfs) also pays for flushing this 80 MB copy,
    # which the other tools leave in the page cache.
    os.sync()
    return dest


def preview_ids(repo: Path) -> list[str]:
    out = sh(["git", "for-each-ref", "--format=%(refname)", "refs/astedit/"], cwd=repo, check=False)
    return [line.removeprefix("refs/astedit/") for line in out.split()]


def rotate(items: list, k: int) -> list:
    k %= len(items)
    return items[k:] + items[:k]


def fmt_s(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3f} s" if x < 1 else f"{x:.2f} s"


def fmt_mib(kib: int | None) -> str:
    return "—" if kib is None else f"{kib / 1024:.0f} MiB"


# ---------------------------------------------------------------- the parse floor


FLOOR_TOOL = "parse floor"


def floor_contender(tools: Tools, corpus: str, task: str, lang: str) -> list[tuple[Row, list[str]]]:
    """The parse floor of a task, to time beside it: the corpus's files of `lang` read and
    parsed on the same threads, nothing else (bench/parse_floor.rs). None without the
    example binary."""
    if not tools.floor:
        return []
    cmd = [str(tools.floor), lang]
    return [(Row(corpus, task, FLOOR_TOOL, f"parse-floor {lang}", floor=True), cmd)]


def floor_count(contenders: list[tuple[Row, list[str]]], out: Path) -> None:
    """Fills the floor row's result from its summary line (`N LANG files parsed (B bytes, …`)."""
    for row, _ in contenders:
        if not row.floor or not out.exists():
            continue
        m = re.match(r"(\d+) \S+ files parsed \((\d+) bytes", out.read_text())
        if m:
            row.count = f"{int(m.group(1)):,} files, {int(m.group(2)) / 1e6:.1f} MB parsed"


# ---------------------------------------------------------------- search


def bench_search(tools: Tools, corpora: dict[str, Path], args, rows: list[Row], checks: list[str]) -> None:
    scratch = BENCH_DIR / "out"
    scratch.mkdir(parents=True, exist_ok=True)
    for corpus, lang, globs, pattern, literal in SEARCHES:
        rg_filter = [arg for glob in globs for arg in ("-g", glob)]
        if corpus not in args.corpus:
            continue
        root = corpora[corpus]
        task = f"grep `{pattern}`"
        tj = ["-j", str(tools.threads)]
        contenders: list[tuple[Row, list[str]]] = []
        if tools.astedit:
            cmd = tools.astedit_grep(pattern, lang)
            contenders.append((Row(corpus, task, "git-astedit", "git astedit " + " ".join(cmd[1:])), cmd))
        cmd = [tools.ast_grep, "run", "-p", pattern, "--lang", lang, *tj]
        contenders.append((Row(corpus, task, "ast-grep", "ast-grep " + " ".join(cmd[1:]), baseline=True), cmd))
        if literal:
            cmd = [tools.rg, *tj, *rg_filter, "-n", "-F", literal]
        else:  # no literal to look for: a regex for "a call" shows the cost of reading everything
            cmd = [tools.rg, *tj, *rg_filter, "-n", r"\w\("]
        contenders.append((Row(corpus, task, "rg", "rg " + " ".join(cmd[1:])), cmd))
        contenders += floor_contender(tools, corpus, task, lang)

        log(f"{corpus}: {task}")
        timed(contenders, lambda row, cmd, i: measure(cmd, root, tools.env, scratch / f"{row.tool}.out"),
              args.runs)
        floor_count(contenders, scratch / f"{FLOOR_TOOL}.out")
        rows.extend(row for row, _ in contenders)
        if not args.no_check:
            check_grep(tools, root, lang, pattern, contenders, scratch, checks)


def bench_scan(tools: Tools, corpora: dict[str, Path], args, rows: list[Row], checks: list[str]) -> None:
    """`scan` (report only) of the rust corpus with one rule: git-astedit vs ast-grep."""
    if STAGE_CORPUS not in args.corpus:
        return
    root = corpora[STAGE_CORPUS]
    scratch = BENCH_DIR / "out"
    conf_dir = scratch / "scan"
    (conf_dir / "rules").mkdir(parents=True, exist_ok=True)
    (conf_dir / "sgconfig.yml").write_text("ruleDirs:\n  - rules\n")
    (conf_dir / "rules" / "no-unwrap.yml").write_text(SCAN_RULE)
    conf = str(conf_dir / "sgconfig.yml")
    task = "scan, rule `$A.unwrap()`"
    contenders: list[tuple[Row, list[str]]] = []
    if tools.astedit and tools.astedit_has("scan", "--config"):
        cmd = [str(tools.astedit), *tools.astedit_no_cache(), "scan", "--config", conf] + tools.astedit_threads("scan")
        contenders.append((Row(STAGE_CORPUS, task, "git-astedit", "git astedit " + " ".join(cmd[1:])), cmd))
    cmd = [tools.ast_grep, "scan", "-c", conf, "-j", str(tools.threads)]
    contenders.append((Row(STAGE_CORPUS, task, "ast-grep", "ast-grep " + " ".join(cmd[1:]), baseline=True), cmd))
    contenders += floor_contender(tools, STAGE_CORPUS, task, STAGE_LANG)
    log(f"{STAGE_CORPUS}: {task}")
    timed(contenders, lambda row, cmd, i: measure(cmd, root, tools.env, scratch / f"{row.tool}.out"),
          args.runs)
    floor_count(contenders, scratch / f"{FLOOR_TOOL}.out")
    rows.extend(row for row, _ in contenders)
    if args.no_check:
        return
    by_tool = {row.tool: row for row, _ in contenders}
    theirs = sh([tools.ast_grep, "scan", "-c", conf, "--json=stream"], cwd=root, check=False).splitlines()
    by_tool["ast-grep"].count = f"{len(theirs):,} findings"
    if "git-astedit" in by_tool:
        out = sh([str(tools.astedit), "--json", "scan", "--config", conf], cwd=root, check=False)
        ours = len(json.loads(out).get("findings", [])) if out.strip() else 0
        by_tool["git-astedit"].count = f"{ours:,} findings"
        verdict = "**agree**" if ours == len(theirs) else "**differ**"
        checks.append(f"- {STAGE_CORPUS} scan: {verdict}: {ours:,} findings, ast-grep {len(theirs):,}")


def bench_collection(tools: Tools, corpora: dict[str, Path], args, rows: list[Row], checks: list[str]) -> None:
    """`scan` (report only) with the ast-grep-essentials collection: git-astedit vs ast-grep."""
    rules_dir = corpora.get("essentials")
    if rules_dir is None:
        checks.append("- ast-grep-essentials scan: the rule collection is not built (bench/corpus.sh essentials)")
        return
    conf = str(rules_dir / "sgconfig.yml")
    n_rules = (rules_dir / ".bench-rules").read_text().strip()
    task = f"scan, ast-grep-essentials ({n_rules} rule files)"
    scratch = BENCH_DIR / "out"
    scratch.mkdir(parents=True, exist_ok=True)
    for corpus in COLLECTION_CORPORA:
        if corpus not in args.corpus or corpus not in corpora:
            continue
        root = corpora[corpus]
        contenders: list[tuple[Row, list[str]]] = []
        # JSON output in the timed runs too: the agreement check reads the last timed run's
        # output instead of running ast-grep once more (minutes per run on some corpora).
        if tools.astedit and tools.astedit_has("scan", "--config"):
            cmd = [str(tools.astedit), *tools.astedit_no_cache(), "--json", "scan", "--config", conf] + \
                tools.astedit_threads("scan")
            contenders.append((Row(corpus, task, "git-astedit", "git astedit " + " ".join(cmd[1:])), cmd))
        cmd = [tools.ast_grep, "scan", "-c", conf, "-j", str(tools.threads), "--json=stream"]
        contenders.append((Row(corpus, task, "ast-grep", "ast-grep " + " ".join(cmd[1:]), baseline=True), cmd))
        log(f"{corpus}: {task}")
        outputs = {row.tool: scratch / f"collection-{corpus}-{row.tool}.out" for row, _ in contenders}
        timed(contenders, lambda row, cmd, i: measure(cmd, root, tools.env, outputs[row.tool]), args.runs)
        rows.extend(row for row, _ in contenders)
        if not args.no_check:
            check_collection(corpus, outputs, contenders, checks)


# The result cache (issue 26): the same command with no cache, a cold (empty) cache, a
# warm one on an unchanged tree, and a warm one after 1 % of the files were edited, with
# `git status` beside them (what the warm rows are held against).
CACHE_GREP = ("rust", "rust", "$A.unwrap()")
EDIT_SHARE = 0.01


def bench_cache(tools: Tools, corpora: dict[str, Path], args, rows: list[Row], checks: list[str]) -> None:
    if not tools.astedit or not tools.astedit_has("grep", "--cache-dir"):
        checks.append("- cache rows: this git-astedit has no result cache")
        return
    scratch = BENCH_DIR / "out"
    scratch.mkdir(parents=True, exist_ok=True)
    jobs: list[tuple[str, str, list[str]]] = []
    corpus, lang, pattern = CACHE_GREP
    if corpus in args.corpus and corpus in corpora:
        jobs.append((corpus, f"cached grep `{pattern}`",
                     ["grep", "-p", pattern, "-l", lang, "--max-count", "0"] + tools.astedit_threads("grep")))
    rules_dir = corpora.get("essentials")
    if rules_dir is not None and "py" in args.corpus and "py" in corpora:
        n_rules = (rules_dir / ".bench-rules").read_text().strip()
        jobs.append(("py", f"cached scan, ast-grep-essentials ({n_rules} rule files)",
                     ["--json", "scan", "--config", str(rules_dir / "sgconfig.yml")] + tools.astedit_threads("scan")))
    for corpus, task, sub in jobs:
        # A copy: the 1 % rows edit files.
        root = fresh_copy(corpora[corpus], BENCH_DIR / "work" / f"cache-{corpus}")
        cache = BENCH_DIR / "work" / f"cache-{corpus}.cache"
        exe = str(tools.astedit)
        tracked = sorted(p for p in sh(["git", "ls-files"], cwd=root).splitlines()
                         if p.endswith({"rust": ".rs", "py": ".py"}[corpus]))
        step = max(1, round(1 / EDIT_SHARE))
        edited = tracked[::step]
        comment = {"rust": "//", "py": "#"}[corpus]
        counter = [0]

        def restore() -> None:
            sh(["git", "checkout", "-q", "--", "."], cwd=root)
            sh(["git", "update-index", "-q", "--refresh"], cwd=root, check=False)

        def edit_some() -> None:
            # New text every time: each run meets 1 % of files it has not seen.
            counter[0] += 1
            for path in edited:
                with open(root / path, "a") as f:
                    f.write(f"\n{comment} bench edit {counter[0]}\n")

        status = Row(corpus, task, "git status", "git status --porcelain", baseline=False)
        no_cache = Row(corpus, task, "git-astedit --no-cache", "git astedit --no-cache " + " ".join(sub),
                       baseline=True)
        cold = Row(corpus, task, "cache cold", "git astedit --cache-dir EMPTY " + " ".join(sub))
        warm = Row(corpus, task, "cache warm", "git astedit --cache-dir WARM " + " ".join(sub) + " (tree unchanged)")
        some = Row(corpus, task, f"cache warm, {len(edited)} files ({EDIT_SHARE:.0%}) edited",
                   "git astedit --cache-dir WARM " + " ".join(sub) + " (after editing 1 % of the files)")
        cmds = {
            status.tool: ["git", "status", "--porcelain"],
            no_cache.tool: [exe, "--no-cache", *sub],
            cold.tool: [exe, "--cache-dir", str(cache), *sub],
            warm.tool: [exe, "--cache-dir", str(cache), *sub],
            some.tool: [exe, "--cache-dir", str(cache), *sub],
        }
        outputs = {t: scratch / f"cache-{corpus}-{i}.out" for i, t in enumerate(cmds)}

        def runner(row: Row, cmd: list[str], i: int) -> Run:
            # Untimed preparation: the state each row is about.
            restore()
            if row is cold:
                shutil.rmtree(cache, ignore_errors=True)
            elif row is warm or row is some:
                sh(cmds[cold.tool], cwd=root, check=False, env=tools.env)
            if row is some:
                edit_some()
            # What git status costs on that same tree (refreshing the index first, as
            # the other rows find it).
            return measure(cmd, root, tools.env, outputs[row.tool])

        contenders = [(r, cmds[r.tool]) for r in (status, no_cache, cold, warm, some)]
        log(f"{corpus}: {task}")
        timed(contenders, runner, args.runs)
        restore()
        rows.extend(r for r, _ in contenders)
        # Same output cold, warm and with no cache.
        base = outputs[no_cache.tool].read_bytes()
        for r in (cold, warm):
            same = outputs[r.tool].read_bytes() == base
            checks.append(f"- {corpus} {task}: {r.tool} output {'**identical**' if same else '**differs**'} "
                          f"to --no-cache")
        # The 1 % row against --no-cache on the same edited tree (untimed).
        restore()
        sh(cmds[cold.tool], cwd=root, check=False, env=tools.env)
        edit_some()
        edited_out, edited_base = scratch / f"cache-{corpus}-edited.out", scratch / f"cache-{corpus}-edited-base.out"
        measure(cmds[some.tool], root, tools.env, edited_out)
        measure(cmds[no_cache.tool], root, tools.env, edited_base)
        restore()
        same = edited_out.read_bytes() == edited_base.read_bytes()
        checks.append(f"- {corpus} {task}: {some.tool} output {'**identical**' if same else '**differs**'} "
                      f"to --no-cache on the same edited tree")
        st, w, s1 = status.median(), warm.median(), some.median()
        nc, c = no_cache.median(), cold.median()
        if st and w and nc and c and s1:
            checks.append(f"- {corpus} {task}: warm {fmt_s(w)} = {w / st:.1f}× git status ({fmt_s(st)}; "
                          f"bar 3× for the scan); 1 % edited {fmt_s(s1)} = {s1 / nc:.2f}× of --no-cache "
                          f"(bar 0.1×); warm {w / nc:.3f}× of --no-cache (bar 0.1× for the grep); cold cache "
                          f"{c / nc:.2f}× of --no-cache (bar 1.05×)")
        stc, wc, s1c, ncc, cc = status.cpu(), warm.cpu(), some.cpu(), no_cache.cpu(), cold.cpu()
        if stc and wc and s1c and ncc and cc:
            checks.append(f"- {corpus} {task}, CPU (user + system): warm {fmt_s(wc)} = {wc / stc:.1f}× git status "
                          f"({fmt_s(stc)}); 1 % edited {s1c / ncc:.2f}× of --no-cache; warm {wc / ncc:.3f}× of "
                          f"--no-cache; cold cache {cc / ncc:.2f}× of --no-cache")
    bench_mcp_repeat(tools, corpora, args, rows, checks)


def bench_baseline(tools: Tools, corpora: dict[str, Path], args, rows: list[Row], checks: list[str]) -> None:
    """`scan --baseline HEAD~1` against a plain scan, both with a warm cache (issue 39
    item 3: at most 1.3×), and both cold (at most 2×): the py corpus with the
    ast-grep-essentials collection, on a private copy given a second commit that
    appends a comment line to 1 % of its Python files."""
    rules_dir = corpora.get("essentials")
    if rules_dir is None or "py" not in args.corpus or "py" not in corpora or not tools.astedit:
        return
    root = fresh_copy(corpora["py"], BENCH_DIR / "work" / "baseline-py")
    tracked = sorted(p for p in sh(["git", "ls-files", "*.py"], cwd=root).splitlines())
    for path in tracked[::max(1, round(1 / EDIT_SHARE))]:
        with open(root / path, "a") as f:
            f.write("\n# bench: the second commit\n")
    sh(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false",
        "commit", "-q", "-am", "bench: 1 % of the files edited"], cwd=root)
    cache = BENCH_DIR / "work" / "baseline-py.cache"
    sub = ["--json", "--cache-dir", str(cache), "scan", "--config", str(rules_dir / "sgconfig.yml")] \
        + tools.astedit_threads("scan")
    exe = str(tools.astedit)
    task = "scan --baseline HEAD~1, ast-grep-essentials"
    made = {
        "plain, warm": (Row("py", task, "plain scan, warm", "git astedit " + " ".join(sub[3:]), baseline=True),
                        [exe, *sub]),
        "baseline, warm": (Row("py", task, "--baseline HEAD~1, warm",
                               "git astedit " + " ".join(sub[3:]) + " --baseline HEAD~1"),
                           [exe, *sub, "--baseline", "HEAD~1"]),
        "plain, cold": (Row("py", task, "plain scan, cold", "(empty cache)", baseline=False), [exe, *sub]),
        "baseline, cold": (Row("py", task, "--baseline HEAD~1, cold", "(empty cache)"),
                           [exe, *sub, "--baseline", "HEAD~1"]),
    }
    out = BENCH_DIR / "out" / "baseline-py.out"
    out.parent.mkdir(parents=True, exist_ok=True)

    def runner(row: Row, cmd: list[str], i: int) -> Run:
        # Untimed: the cache each row is about (cold: empty; warm: both sides stored).
        shutil.rmtree(cache, ignore_errors=True)
        if "warm" in row.tool:
            sh([exe, *sub, "--baseline", "HEAD~1"], cwd=root, check=False, env=tools.env)
        return measure(cmd, root, tools.env, out)

    contenders = list(made.values())
    log(f"py: {task}")
    timed(contenders, runner, args.runs)
    rows.extend(r for r, _ in contenders)
    pw, bw = made["plain, warm"][0].median(), made["baseline, warm"][0].median()
    pc, bc = made["plain, cold"][0].median(), made["baseline, cold"][0].median()
    if pw and bw and pc and bc:
        checks.append(f"- py {task}: warm {fmt_s(bw)} = {bw / pw:.2f}× a warm plain scan ({fmt_s(pw)}; bar "
                      f"1.3×); cold {fmt_s(bc)} = {bc / pc:.2f}× a cold plain scan ({fmt_s(pc)}; bar 2×)")


MCP_SEARCH = ("py", "python", "print($$$A)")


def bench_mcp_repeat(tools: Tools, corpora: dict[str, Path], args, rows: list[Row], checks: list[str]) -> None:
    """The MCP server's repeated search (bench/mcp-repeat.py: one server, the same
    `ast_grep` call N times) against a cold CLI run of the same search (`--no-cache`)."""
    corpus, lang, pattern = MCP_SEARCH
    if corpus not in args.corpus or corpus not in corpora:
        return
    root = fresh_copy(corpora[corpus], BENCH_DIR / "work" / f"mcp-{corpus}")
    exe = str(tools.astedit)
    task = f"MCP `ast_grep` `{pattern}` repeated"
    cli = Row(corpus, task, "cold CLI --no-cache", f"git astedit --no-cache grep -p '{pattern}' -l {lang}",
              baseline=True)
    cmd = [exe, "--no-cache", "grep", "-p", pattern, "-l", lang, "--max-count", "0"] + tools.astedit_threads("grep")
    out = BENCH_DIR / "out" / f"mcp-{corpus}-cli.out"
    log(f"{corpus}: {task}")
    timed([(cli, cmd)], lambda row, c, i: measure(c, root, tools.env, out), args.runs)
    rows.append(cli)
    n = 1 + 2 * max(args.runs, 2)
    res = subprocess.run([sys.executable, str(Path(__file__).parent / "mcp-repeat.py"), exe, str(root), pattern,
                          lang, str(n)], capture_output=True, text=True, env=tools.env)
    m = re.search(r"later p50 ([\d.]+) s", res.stdout)
    if res.returncode != 0 or not m or not cli.median():
        checks.append(f"- {task}: not measured ({(res.stderr or res.stdout).strip()[:200]})")
        return
    p50 = float(m.group(1))
    checks.append(f"- {corpus} {task}: {res.stdout.strip()}; second-call p50 {fmt_s(p50)} = "
                  f"{p50 / cli.median():.3f}× of a cold CLI run ({fmt_s(cli.median())}; bar 0.1×)")


Finding = tuple[str, str, int, int, int, int]  # rule id, path, start line, column, end line, column: 1-based


def check_collection(corpus: str, outputs: dict[str, Path], contenders, checks: list[str]) -> None:
    """Both tools must report the same findings (rule id, path and range), read from the
    output of their last timed runs."""
    by_tool = {row.tool: row for row, _ in contenders}
    head = f"{corpus} ast-grep-essentials scan"
    if by_tool["ast-grep"].error or not by_tool["ast-grep"].runs:
        checks.append(f"- {head}: not checked: ast-grep did not finish a run")
        return
    theirs: list[Finding] = []
    for line in outputs["ast-grep"].read_text(errors="replace").splitlines():
        if line.strip():
            m = json.loads(line)
            a, b = m["range"]["start"], m["range"]["end"]
            theirs.append((m["ruleId"], m["file"], a["line"] + 1, a["column"] + 1, b["line"] + 1, b["column"] + 1))
    by_tool["ast-grep"].count = f"{len(theirs):,} findings"
    if "git-astedit" not in by_tool or by_tool["git-astedit"].error:
        checks.append(f"- {head}: git-astedit scan not measured, nothing to compare")
        return
    try:
        ours: list[Finding] = [(f["rule"], f["path"], f["line"], f["column"], f["end_line"], f["end_column"])
                               for f in json.loads(outputs["git-astedit"].read_text())["findings"]]
    except (ValueError, KeyError, TypeError) as e:
        checks.append(f"- {head}: could not read `git astedit --json scan` output ({e})")
        return
    by_tool["git-astedit"].count = f"{len(ours):,} findings"
    if sorted(ours) == sorted(theirs):
        rules = len({f[0] for f in ours})
        checks.append(f"- {head}: **agree**: the same {len(ours):,} findings (rule id, path, start and end "
                      f"line:col) from {rules} rules")
        return
    only_ours = sorted(set(ours) - set(theirs))
    only_theirs = sorted(set(theirs) - set(ours))
    checks.append(f"- {head}: **differ**: {len(ours):,} vs {len(theirs):,} findings; "
                  f"{len(only_ours):,} only in git-astedit, {len(only_theirs):,} only in ast-grep")
    for label, items in (("only git-astedit", only_ours), ("only ast-grep", only_theirs)):
        for r, p, l, c, el, ec in items[:5]:
            checks.append(f"  - {label}: `{r}` `{p}:{l}:{c}-{el}:{ec}`")
        if len(items) > 5:
            checks.append(f"  - {label}: … {len(items) - 5:,} more")


LONG_WARMUP = 60.0  # seconds: a warm-up this long counts as the first timed run


def timed(contenders: list[tuple[Row, list[str]]], runner, runs: int) -> None:
    """One warm-up each, then `runs` rounds, tools alternating, order rotating.

    A warm-up of over a minute (ast-grep with the rule collection) already ran on a warm
    cache: it counts as that tool's first timed run. A run killed at `--timeout` ends
    that tool's runs; its row says so."""
    for row, cmd in contenders:
        res = runner(row, cmd, -1)
        if res.stopped:
            row.stopped = res.wall
            log(f"  {row.tool:12} stopped after {fmt_s(res.wall)} (--timeout)")
        elif res.code not in (0, 1):
            row.error = f"exit {res.code}: " + runner_error(row, res)
        elif res.wall > LONG_WARMUP:
            row.runs.append(res)
    live = [(row, cmd) for row, cmd in contenders if not row.error and not row.stopped]
    for i in range(runs):
        for row, cmd in rotate(live, i):
            if row.stopped or len(row.runs) >= runs:
                continue
            res = runner(row, cmd, i)
            if res.stopped:
                row.stopped = res.wall
                continue
            if res.code not in (0, 1):
                row.error = f"exit {res.code} in run {i + 1}: " + runner_error(row, res)
            row.runs.append(res)
        for row, _ in live:
            last = f"stopped after {fmt_s(row.stopped)}" if row.stopped else fmt_s(row.runs[-1].wall)
            log(f"  {row.tool:12} {last:>9} {fmt_mib(row.runs[-1].rss_kib) if row.runs else '':>8}")


def runner_error(row: Row, res: Run) -> str:
    err = getattr(res, "stderr", "") or stderr_of(BENCH_DIR / "out" / f"{row.tool}.out")
    return (err.splitlines() or ["(no stderr)"])[0][:200]


Span = tuple[str, int, int, int, int]  # path, start line, column, end line, column: 1-based


def astedit_spans(text: str) -> list[Span]:
    """Match spans from `git astedit --json grep` (columns in characters): one object
    whose `matches` are `{path, line, column, end_line, end_column, …}`."""
    doc = json.loads(text)
    if doc.get("capped"):
        raise ValueError(f"output capped at {doc.get('shown')} of {doc.get('total')} matches")
    return [(m["path"], m["line"], m["column"], m["end_line"], m["end_column"]) for m in doc["matches"]]


def ast_grep_spans(text: str) -> list[Span]:
    """Match spans from `ast-grep run --json=stream` (0-based, columns in characters)."""
    spans = []
    for line in text.splitlines():
        if line.strip():
            m = json.loads(line)
            start, end = m["range"]["start"], m["range"]["end"]
            spans.append((m["file"], start["line"] + 1, start["column"] + 1, end["line"] + 1, end["column"] + 1))
    return spans


def check_grep(tools: Tools, root: Path, lang: str, pattern: str, contenders, scratch: Path,
               checks: list[str]) -> None:
    sg = subprocess.run([tools.ast_grep, "run", "-p", pattern, "--lang", lang, "-j", str(tools.threads),
                         "--json=stream"], cwd=root, env=tools.env, stdout=subprocess.PIPE, text=True)
    theirs = ast_grep_spans(sg.stdout)
    by_tool = {row.tool: row for row, _ in contenders}
    by_tool["ast-grep"].count = f"{len(theirs):,} in {len({s[0] for s in theirs}):,} files"
    rg_out = scratch / "rg.out"
    if "rg" in by_tool and rg_out.exists():
        by_tool["rg"].count = f"{sum(1 for _ in open(rg_out, 'rb')):,} lines"
    head = f"{root.name} `{pattern}`"
    if not tools.astedit or by_tool["git-astedit"].error:
        checks.append(f"- {head}: git-astedit grep not measured, nothing to compare")
        return
    ours_run = subprocess.run(tools.astedit_grep(pattern, lang, json_out=True), cwd=root, env=tools.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ours = astedit_spans(ours_run.stdout)
    except (ValueError, KeyError, AttributeError) as e:
        checks.append(f"- {head}: could not read `git astedit grep --json` output ({e})")
        return
    by_tool["git-astedit"].count = f"{len(ours):,} in {len({s[0] for s in ours}):,} files"
    if sorted(ours) == sorted(theirs):
        checks.append(f"- {head}: **agree**: the same {len(ours):,} match ranges (path, start and end line:col)")
        return
    only_ours = sorted(set(ours) - set(theirs))
    only_theirs = sorted(set(theirs) - set(ours))
    starts_ours = {s[:3] for s in ours}
    starts_theirs = {s[:3] for s in theirs}
    note = " (the same match starts: only ends differ)" if starts_ours == starts_theirs else ""
    checks.append(f"- {head}: **differ**{note}: {len(ours):,} vs {len(theirs):,} matches; "
                  f"{len(only_ours):,} ranges only in git-astedit, {len(only_theirs):,} only in ast-grep")
    for label, items in (("only git-astedit", only_ours), ("only ast-grep", only_theirs)):
        for p, l, c, el, ec in items[:5]:
            checks.append(f"  - {label}: `{p}:{l}:{c}-{el}:{ec}`")
        if len(items) > 5:
            checks.append(f"  - {label}: … {len(items) - 5:,} more")


# ---------------------------------------------------------------- stage + apply


def bench_stage_apply(tools: Tools, corpora: dict[str, Path], args, rows: list[Row], checks: list[str]) -> None:
    if STAGE_CORPUS not in args.corpus:
        return
    corpus = corpora[STAGE_CORPUS]
    work = BENCH_DIR / "work"
    work.mkdir(parents=True, exist_ok=True)
    scratch = BENCH_DIR / "out"
    # `--only stage` runs no search first, which would have made it.
    scratch.mkdir(parents=True, exist_ok=True)
    task = f"edit `{STAGE_PATTERN}` → `{STAGE_REWRITE}`"
    contenders: list[tuple[Row, list[str]]] = []
    sg_cmd = [tools.ast_grep, "run", "-p", STAGE_PATTERN, "-r", STAGE_REWRITE, "--lang", STAGE_LANG,
              "-j", str(tools.threads), "-U"]
    if tools.astedit:
        cmd = tools.astedit_edit(STAGE_PATTERN, STAGE_REWRITE, STAGE_LANG)
        contenders.append((Row(STAGE_CORPUS, task, "git-astedit", "git astedit " + " ".join(cmd[1:])), cmd))
    contenders.append((Row(STAGE_CORPUS, task, "ast-grep", "ast-grep " + " ".join(sg_cmd[1:]) + "  (on a fresh copy)",
                           baseline=True), sg_cmd))
    contenders += floor_contender(tools, STAGE_CORPUS, task, STAGE_LANG)

    apply_row = Row(STAGE_CORPUS, "apply that preview", "git-astedit", "git astedit apply ID")
    git_apply_row = Row(STAGE_CORPUS, "apply that preview", "git apply",
                        "git apply DIFF  (DIFF = git diff refs/astedit/ID~ refs/astedit/ID)", baseline=True)
    kept: dict[str, Path] = {}  # copies kept from the first timed round for the checks

    def runner(row: Row, cmd: list[str], i: int) -> Run:
        if row.floor:  # reads only: the corpus itself
            return measure(cmd, corpus, tools.env, scratch / f"{row.tool}.out")
        dest = fresh_copy(corpus, work / f"stage-{row.tool}")
        res = measure(cmd, dest, tools.env, scratch / f"{row.tool}.out")
        if res.code not in (0, 1):
            return res
        if row.tool == "git-astedit":
            ids = preview_ids(dest)
            if len(ids) != 1:
                row.error = f"expected one preview ref after edit, found {len(ids)}"
                return res
            if i == 0:  # the staged contents, for the checks, before apply moves the ref
                extract_preview(dest, ids[0], work / "preview-tree")
                kept["preview"] = work / "preview-tree"
            if not args.only_stage:
                bench_apply(dest, ids[0], i)
        if i == 0:
            keep = work / f"kept-{row.tool}"
            if keep.exists():
                shutil.rmtree(keep)
            dest.rename(keep)
            kept[row.tool] = keep
        return res

    def bench_apply(staged: Path, pid: str, i: int) -> None:
        """Times both applies of one staged preview; i < 0 is the warm-up."""
        diff = work / "preview.diff"
        with open(diff, "wb") as f:
            subprocess.run(["git", "diff", "--binary", f"refs/astedit/{pid}~", f"refs/astedit/{pid}"],
                           cwd=staged, stdout=f, check=True)
        plain = fresh_copy(corpus, work / "apply-git")
        pair = [(apply_row, [str(tools.astedit), "apply", pid], staged),
                (git_apply_row, ["git", "apply", str(diff)], plain)]
        for row, cmd, where in rotate(pair, i):
            if row.error:
                continue
            out = scratch / f"apply-{row.tool.replace(' ', '-')}.out"
            res = measure(cmd, where, tools.env, out)
            if res.code != 0:
                row.error = f"exit {res.code}: " + (stderr_of(out).splitlines() or [""])[0][:200]
            elif i >= 0:
                row.runs.append(res)
                log(f"  apply {row.tool:12} {fmt_s(res.wall):>9} {fmt_mib(res.rss_kib):>8}")
        if i == 0:
            keep = work / "kept-git-apply"
            if keep.exists():
                shutil.rmtree(keep)
            plain.rename(keep)
            kept["git apply"] = keep

    log(f"{STAGE_CORPUS}: {task}")
    timed(contenders, runner, args.runs)
    floor_count(contenders, scratch / f"{FLOOR_TOOL}.out")
    rows.extend(row for row, _ in contenders)
    if tools.astedit and not args.only_stage and (apply_row.runs or apply_row.error):
        rows.extend([apply_row, git_apply_row])
    if not args.no_check:
        check_stage(tools, corpus, kept, contenders, [apply_row, git_apply_row], checks)


def extract_preview(repo: Path, pid: str, dest: Path) -> None:
    """Writes the after-contents of preview `pid` to `dest/`, with `dest/.paths` listing
    the paths it changes."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    tar = subprocess.Popen(["git", "archive", "--format=tar", f"refs/astedit/{pid}"], cwd=repo,
                           stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=tar.stdout, check=True)
    tar.wait()
    names = sh(["git", "diff", "--name-only", "-z", f"refs/astedit/{pid}~", f"refs/astedit/{pid}"], cwd=repo)
    (dest / ".paths").write_text(names)


def rewrites_in(tree: Path, corpus: Path, files: list[str]) -> int:
    """How many more times the rewrite's fixed text occurs in `files` under `tree` than in
    the corpus: the number of rewritten sites."""
    needle = STAGE_REWRITE.replace("$A", "").encode()
    count = 0
    for p in files:
        after, before = tree / p, corpus / p
        count += after.read_bytes().count(needle) if after.exists() else 0
        count -= before.read_bytes().count(needle) if before.exists() else 0
    return count


def changed_files(repo: Path) -> list[str]:
    out = sh(["git", "diff", "--name-only", "-z"], cwd=repo)
    return sorted(p for p in out.split("\0") if p)


def check_stage(tools: Tools, corpus: Path, kept: dict[str, Path], contenders, apply_rows: list[Row],
                checks: list[str]) -> None:
    head = f"{corpus.name} `{STAGE_PATTERN}` → `{STAGE_REWRITE}`"
    by_tool = {row.tool: row for row, _ in contenders}
    sg_dir = kept.get("ast-grep")
    if sg_dir is None:
        checks.append(f"- {head}: ast-grep -U did not run, nothing to compare")
        return
    sg_files = changed_files(sg_dir)
    sg_rewrites = rewrites_in(sg_dir, corpus, sg_files)
    by_tool["ast-grep"].count = f"{sg_rewrites:,} sites in {len(sg_files):,} files"
    ours_dir = kept.get("preview")
    if ours_dir is None:
        checks.append(f"- {head}: git-astedit edit not measured, nothing to compare")
        return
    ours_files = sorted(p for p in (ours_dir / ".paths").read_text().split("\0") if p)
    our_rewrites = rewrites_in(ours_dir, corpus, ours_files)
    by_tool["git-astedit"].count = f"{our_rewrites:,} sites in {len(ours_files):,} files"
    for row in apply_rows:
        row.count = f"{len(ours_files):,} files"

    def same_as_preview(tree: Path) -> bool:
        return changed_files(tree) == ours_files and all(
            (tree / p).read_bytes() == (ours_dir / p).read_bytes() for p in ours_files if (ours_dir / p).exists())

    for tool, what in (("git-astedit", "`git astedit apply`"), ("git apply", "`git apply` of the preview's diff")):
        tree = kept.get(tool)
        if tree is not None and tool in kept and changed_files(tree):
            checks.append(f"- {head}: {what} writes exactly the staged contents: "
                          + ("**yes**" if same_as_preview(tree) else "**no**"))
    both = sorted(set(sg_files) | set(ours_files))
    differ = [p for p in both if not (sg_dir / p).exists() or not (ours_dir / p).exists()
              or (sg_dir / p).read_bytes() != (ours_dir / p).read_bytes()]
    if not differ:
        checks.append(f"- {head}: rewritten files **identical** to ast-grep -U's "
                      f"({len(ours_files):,} files, {our_rewrites:,} sites)")
        return
    # Differences from nested matches: ast-grep rewrites only the outermost of nested
    # matches; running it again until nothing changes rewrites the inner ones too, which
    # is what git-astedit does in one run. Files equal after that differ only by nesting.
    nested_dir = sg_dir.parent / "nested"  # a copy: sg_dir stays as ast-grep left it
    if nested_dir.exists():
        shutil.rmtree(nested_dir)
    for p in differ:
        if (sg_dir / p).exists():
            (nested_dir / p).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(sg_dir / p, nested_dir / p)
    rounds = 0
    for rounds in range(1, 10):
        before = {p: (nested_dir / p).read_bytes() for p in differ if (nested_dir / p).exists()}
        subprocess.run([tools.ast_grep, "run", "-p", STAGE_PATTERN, "-r", STAGE_REWRITE, "--lang", STAGE_LANG,
                        "-U", *before], cwd=nested_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = {p: (nested_dir / p).read_bytes() for p in differ if (nested_dir / p).exists()}
        if after == before:
            break
    nested = [p for p in differ if (nested_dir / p).exists() and (ours_dir / p).exists()
              and (nested_dir / p).read_bytes() == (ours_dir / p).read_bytes()]
    # A documented difference (docs/src/ast-grep.md, since 78c1bd9): blank lines of a
    # re-indented capture stay blank, where ast-grep gives them the added indentation.
    # Files equal once whitespace-only lines are emptied (after the reruns) differ only so.
    def blanked(path: Path) -> bytes:
        return re.sub(rb"(?m)^[ \t]+(\r?)$", rb"\1", path.read_bytes())

    unexplained = [p for p in differ if p not in nested]
    blank = [p for p in unexplained if (nested_dir / p).exists() and (ours_dir / p).exists()
             and blanked(nested_dir / p) == blanked(ours_dir / p)]
    other = [p for p in unexplained if p not in blank]
    checks.append(f"- {head}: git-astedit rewrote {our_rewrites:,} sites, ast-grep -U {sg_rewrites:,} "
                  "(counted as new occurrences of the template's text)")
    checks.append(f"- {head}: {len(both) - len(differ):,} of {len(both):,} rewritten files identical to "
                  f"ast-grep -U's; {len(nested):,} differ only by nested matches (equal once ast-grep is "
                  f"rerun on them until nothing changes: {rounds - 1} more runs); {len(blank):,} only by "
                  f"blank lines kept blank (ast-grep indents them; documented); {len(other):,} differ otherwise")
    if nested:
        checks.append("  - nested: " + ", ".join(f"`{p}`" for p in nested[:8])
                      + (f", … {len(nested) - 8} more" if len(nested) > 8 else ""))
    if blank:
        checks.append("  - blank lines: " + ", ".join(f"`{p}`" for p in blank[:8])
                      + (f", … {len(blank) - 8} more" if len(blank) > 8 else ""))
    for p in other[:20]:
        diff = subprocess.run(["git", "diff", "--no-index", "-U0", "--", str(nested_dir / p), str(ours_dir / p)],
                              stdout=subprocess.PIPE, text=True, errors="replace").stdout
        hunk = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        checks.append(f"  - other: `{p}` ({len(hunk)} lines differ; `-` ast-grep, `+` git-astedit)")
        for line in hunk[:4]:
            checks.append(f"    `{line[:160]}`")
    if len(other) > 20:
        checks.append(f"  - other: … {len(other) - 20} more")


# ---------------------------------------------------------------- report


def table(rows: list[Row]) -> str:
    out = ["| corpus | task | tool | result | median | min–max | CPU | peak RSS | time ÷ baseline "
           "| CPU ÷ baseline | RSS ÷ baseline | time ÷ floor | CPU ÷ floor |",
           "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.corpus, row.task), []).append(row)
    for (corpus, task), members in groups.items():
        base = next((r for r in members if r.baseline and r.runs and not r.error), None)
        stopped = next((r for r in members if r.baseline and r.stopped and not r.runs), None)
        floor = next((r for r in members if r.floor and r.runs and not r.error), None)
        for row in members:
            if row.error and not row.runs:
                out.append(f"| {corpus} | {task} | {row.tool} | not measured: {row.error} | | | | | | | | | |")
                continue
            if row.stopped and not row.runs:
                note = "(baseline)" if row.baseline else "—"
                out.append(f"| {corpus} | {task} | {row.tool} | did not finish: stopped after "
                           f"{fmt_s(row.stopped)} (`--timeout`) | > {fmt_s(row.stopped)} | | | | {note} | "
                           f"{note} | {note} | | |")
                continue
            med, peak = row.median(), row.peak()
            if row.baseline:
                ratio = cpu_ratio = rss_ratio = "(baseline)"
            elif stopped and med is not None:
                ratio = f"**< {med / stopped.stopped:.2f}×**"
                cpu_ratio = rss_ratio = "—"
            elif base and med is not None:
                ratio = f"**{med / base.median():.2f}×**"
                cpu_ratio = f"{row.cpu() / base.cpu():.2f}×" if base.cpu() else "—"
                rss_ratio = f"{peak / base.peak():.2f}×" if base.peak() else "—"
            else:
                ratio = cpu_ratio = rss_ratio = "—"
            if row.floor:
                floor_ratio = floor_cpu = "(floor)"
            elif floor and med is not None:
                floor_ratio = f"{med / floor.median():.2f}×"
                floor_cpu = f"{row.cpu() / floor.cpu():.2f}×" if floor.cpu() else "—"
            else:
                floor_ratio = floor_cpu = ""
            mm = f"{fmt_s(min(row.walls()))} – {fmt_s(max(row.walls()))}"
            result = row.count + (f" ⚠ {row.error}" if row.error else "")
            out.append(f"| {corpus} | {task} | {row.tool} | {result} | {fmt_s(med)} | {mm} | {fmt_s(row.cpu())} "
                       f"| {fmt_mib(peak)} | {ratio} | {cpu_ratio} | {rss_ratio} | {floor_ratio} | {floor_cpu} |")
    return "\n".join(out)


def targets(rows: list[Row]) -> list[str]:
    """The bars of issues 5 and 16, row by row: wall-time ratio (CPU-time ratio beside it)
    and peak memory against the baseline. Issue 16 sharpened issue 5's: rust grep 0.35×,
    the no-literal grep 0.8×, staging 0.3×, apply 0.7×, the rule collection on py 0.5×."""
    out = []
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.corpus, row.task), []).append(row)
    for (corpus, task), members in groups.items():
        if task.startswith("scan, ast-grep-essentials") and corpus == "py":
            bar, issue = 0.5, 16
        elif task.startswith("scan"):
            continue  # no bar
        elif task.startswith("grep"):
            literal = next((lit for c, _, _, p, lit in SEARCHES if c == corpus and task == f"grep `{p}`"), None)
            if not literal:
                bar, issue = 0.8, 16
            elif corpus == "rust":
                bar, issue = 0.35, 16
            else:
                bar, issue = 0.5, 5
        elif task.startswith("edit"):
            bar, issue = 0.3, 16
        else:
            bar, issue = 0.7, 16  # apply
        ours = next((r for r in members if r.tool == "git-astedit"), None)
        base = next((r for r in members if r.baseline), None)
        if ours and base and ours.runs and not ours.error and base.stopped and not base.runs:
            ratio = ours.median() / base.stopped
            out.append(f"- {corpus} {task} vs {base.tool}: time < {ratio:.2f}× ({base.tool} stopped after "
                       f"{fmt_s(base.stopped)}; bar {bar}×, issue {issue}) {'✓' if ratio <= bar else '✗'}, "
                       f"peak RSS not compared")
            continue
        if not ours or not base or not ours.runs or not base.runs or ours.error or base.error:
            out.append(f"- {corpus} {task}: not measured")
            continue
        ratio = ours.median() / base.median()
        cpu = ours.cpu() / base.cpu() if base.cpu() else float("nan")
        rss = ours.peak() / base.peak()
        ok = ratio <= bar and rss <= 1.0
        out.append(f"- {corpus} {task} vs {base.tool}: time {ratio:.2f}× (CPU {cpu:.2f}×; bar {bar}×, "
                   f"issue {issue}) {'✓' if ratio <= bar else '✗'}, peak RSS {rss:.2f}× (bar 1.0×) "
                   f"{'✓' if rss <= 1.0 else '✗'}{'' if ok else ' — **not met**'}")
    return out


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"`nproc` {sh(['nproc']).strip()}, {model}{mem}, {platform.system()} {platform.release()}; "
            f"load average at start {load}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 timed runs instead of 5, for trying things out")
    ap.add_argument("--runs", type=int, help="timed runs per tool after the warm-up (default 5)")
    ap.add_argument("--threads", type=int, default=2, help="threads for every tool (default 2)")
    ap.add_argument("--corpus", default="rust,ts,py,gson", help="comma-separated subset of rust,ts,py,gson "
                    "(gson: only the rule-collection scan)")
    ap.add_argument("--only", choices=["search", "stage", "scan", "cache"],
                    help="run only the searches, only edit+apply, only the scans, or only the result "
                         "cache's rows")
    ap.add_argument("--only-stage", action="store_true", help="time edit but not apply")
    ap.add_argument("--no-build", action="store_true", help="use the existing target/release/git-astedit")
    ap.add_argument("--no-check", action="store_true", help="skip the agreement checks")
    ap.add_argument("--astedit", help="the git-astedit binary to measure (default target/release/git-astedit), "
                                      "e.g. an older build for before/after figures")
    ap.add_argument("--floor", help="the parse-floor example binary (default target/release/examples/parse-floor; "
                                    "without it the parse-floor rows are left out)")
    ap.add_argument("--timeout", type=float, default=1800,
                    help="seconds any one run may take before it is killed and its row marked as not "
                         "finished (default 1800; 0: no limit)")
    ap.add_argument("--readme", action="store_true",
                    help="also put the report into bench/README.md (for a full run that is to be committed)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "latest.md"),
                    help="where to write the table (default bench/results/latest.md; '-' for nowhere)")
    args = ap.parse_args()
    args.runs = args.runs or (2 if args.quick else 5)
    args.corpus = [c for c in args.corpus.split(",") if c]
    global TIMEOUT
    TIMEOUT = args.timeout or None

    tools, corpora = prepare(args)
    missing = [c for c in args.corpus if c not in corpora]
    if missing:
        log(f"corpora not built: {', '.join(missing)}")
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    host = machine()
    rows: list[Row] = []
    checks: list[str] = []
    if args.only in (None, "search"):
        bench_search(tools, corpora, args, rows, checks)
    if args.only in (None, "stage"):
        bench_stage_apply(tools, corpora, args, rows, checks)
    if args.only in (None, "scan"):
        bench_scan(tools, corpora, args, rows, checks)
        bench_collection(tools, corpora, args, rows, checks)
    if args.only in (None, "cache"):
        bench_cache(tools, corpora, args, rows, checks)
        bench_baseline(tools, corpora, args, rows, checks)
    elapsed = datetime.datetime.now(datetime.timezone.utc) - started

    argv = " ".join(sys.argv[1:])
    report = [
        "# git-astedit benchmark: latest run",
        "",
        f"- date: {started:%Y-%m-%d %H:%M} UTC ({elapsed.seconds // 60} min {elapsed.seconds % 60} s)",
        f"- machine: {host}",
        "- versions: " + "; ".join(f"{k} {v}" if not v.startswith(k) else v for k, v in tools.versions.items()),
        f"- command: `bench/run.sh{' ' + argv if argv else ''}`; {args.threads} threads for every tool, "
        f"{args.runs} timed runs each after one warm-up (a warm-up over {LONG_WARMUP:.0f} s counts as the "
        f"first timed run), tools alternating; runs over {fmt_s(TIMEOUT) if TIMEOUT else 'no limit'} stopped",
        "- corpora: " + ", ".join(f"{c} @ {sh(['git', 'rev-parse', '--short', 'HEAD'], cwd=corpora[c]).strip()}"
                                  for c in args.corpus),
        "",
        table(rows),
        "",
        "Baseline: ast-grep for search, staging and scan, `git apply` for apply. median and min–max: wall "
        "time; CPU: median user + system time; peak RSS: the largest of the timed runs. On a shared "
        "machine wall time reflects the cores actually obtained; CPU time less so. Parse floor: every "
        "file of the task's language read and parsed on the same threads, nothing else "
        "(bench/parse_floor.rs); ÷ floor is the distance to it.",
        "",
        "## Against the bars (issue 16, and issue 5 where 16 set none)",
        "",
        *targets(rows),
        "",
        "## Agreement",
        "",
        *(checks or ["- (checks skipped)"]),
        "",
    ]
    text = "\n".join(report)
    print(text)
    if args.out != "-":
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        log(f"wrote {out}")
        if args.readme:
            update_readme(text)
    return 0


README = REPO / "bench" / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"


def update_readme(report: str) -> None:
    """Puts the report (less its title) between the result markers of bench/README.md."""
    body = report.split("\n", 2)[2].strip()
    text = README.read_text()
    a, b = text.find(START), text.find(END)
    if a < 0 or b < a:
        log(f"no {START} … {END} in {README}; not updated")
        return
    README.write_text(text[: a + len(START)] + "\n\n" + body + "\n\n" + text[b:])
    log(f"updated {README}")


if __name__ == "__main__":
    sys.exit(main())
