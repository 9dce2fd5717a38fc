#!/usr/bin/env python3
"""Issue 55 items 1 and 2, measured in one run: how far above the parse floor the
no-literal py search is, and what an apply costs beside `git apply`.

    bench/speed-match.py grep  --bin after=target/release/git-astedit [--bin before=BIN] \\
        [--floor target/release/examples/parse-floor] [--runs 7] [--out FILE]
    bench/speed-match.py apply --bin after=target/release/git-astedit [--bin before=BIN] \\
        [--runs 7] [--work DIR] [--out FILE]

`grep`: on the py corpus (bench/corpus.sh py), `git astedit --no-cache grep -p '$F($$$A)'
-l python --threads 2 --max-count 0` of every `--bin`, `ast-grep run -p '$F($$$A)' --lang
python -j 2` and the parse floor (`parse-floor python`: every `.py` file read and
parsed, nothing else), alternating, the order rotating between rounds, after one
untimed warm-up each. Every binary's output must be byte-identical to the first's.

`apply`: per round, a fresh copy of the rust corpus for each `--bin` (untimed: `cp -a`,
`git update-index --refresh`, `sync`, then `edit -p '$A.unwrap()' -r '$A.expect("bench")'
-l rust` with the first binary), then the timed `git astedit apply ID`; and `git apply`
of that preview's diff on a fresh copy. Each copy's work tree is compared with the first
one's afterwards (`git diff HEAD` of the touched paths).

Both give medians, min–max, user and system CPU apart, and the load average before
and after each group (the machine is shared). Standard library only; the measuring
itself is bench/run.py's (GNU time in a small child).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (bench/run.py: corpora, copies, previews)

PATTERN = "$F($$$A)"
THREADS = "2"


@dataclass
class Sample:
    wall: float
    user: float
    system: float
    rss_kib: int

    @property
    def cpu(self) -> float:
        return self.user + self.system


@dataclass
class Contender:
    name: str
    cmd: list[str]
    samples: list[Sample] = field(default_factory=list)
    digest: str = ""

    def med(self, what: str) -> float:
        return statistics.median(getattr(s, what) for s in self.samples)


def measure(cmd: list[str], cwd: Path, out: Path, env: dict[str, str]) -> Sample:
    """One run under GNU time, stdout to `out`: wall (monotonic), user and system CPU, peak RSS."""
    usage = out.with_suffix(".time")
    with open(out, "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        start = time.perf_counter()
        code = subprocess.call(["/usr/bin/time", "-f", "%M %x %U %S", "-o", str(usage), *cmd], cwd=cwd,
                               env=env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - start
    rss, status, user, system = usage.read_text().split("\n")[-2].split()
    if code not in (0, 1) or int(status) not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed (exit {status}): {out.with_suffix('.err').read_text()[:400]}")
    return Sample(wall, float(user), float(system), int(rss))


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def digest(path: Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:12]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["RAYON_NUM_THREADS"] = THREADS
    e.pop("GIT_ASTEDIT_FAULT", None)
    return e


def table(group: list[Contender], floor: Contender | None, base: Contender | None) -> list[str]:
    def ratio(c: Contender, ref: Contender | None, what: str) -> str:
        return "—" if ref is None or ref is c else f"{c.med(what) / ref.med(what):.2f}×"

    by_floor = [] if floor is None else [f"CPU ÷ {floor.name}", f"wall ÷ {floor.name}"]
    head = ["tool", "median wall", "min–max", "CPU (user + sys)", "user", "sys", "peak RSS", *by_floor,
            f"CPU ÷ {base.name if base else '—'}"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for c in group:
        walls = [s.wall for s in c.samples]
        cells = [c.name, f"{statistics.median(walls):.3f} s", f"{min(walls):.3f}–{max(walls):.3f} s",
                 f"{c.med('cpu'):.3f} s", f"{c.med('user'):.3f} s", f"{c.med('system'):.3f} s",
                 f"{max(s.rss_kib for s in c.samples) / 1024:.0f} MiB"]
        if floor is not None:
            cells += [ratio(c, floor, "cpu"), ratio(c, floor, "wall")]
        cells.append(ratio(c, base, "cpu"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def rounds(group: list[Contender], runs: int, once) -> None:
    """A warm-up of each, then `runs` rounds, the order rotating."""
    for c in group:
        once(c, warm=True)
    for i in range(runs):
        for c in bench.rotate(group, i):
            c.samples.append(once(c, warm=False))
        bench.log(f"round {i + 1}/{runs}: " + ", ".join(f"{c.name} {c.samples[-1].cpu:.2f} s" for c in group))


def grep(args) -> list[str]:
    corpus = bench.BENCH_DIR / "corpus" / "py"
    scratch = bench.BENCH_DIR / "out" / "speed-match"
    scratch.mkdir(parents=True, exist_ok=True)
    group = [Contender(name, [path, "--no-cache", "grep", "-p", PATTERN, "-l", "python", "--threads", THREADS,
                              "--max-count", "0"]) for name, path in args.bins]
    sg = Contender("ast-grep", [args.ast_grep, "run", "-p", PATTERN, "--lang", "python", "-j", THREADS])
    floor = Contender("parse floor", [args.floor, "python"]) if args.floor else None
    group += [sg] + ([floor] if floor else [])

    def once(c: Contender, warm: bool) -> Sample:
        out = scratch / f"{c.name}.out"
        s = measure(c.cmd, corpus, out, env())
        if warm:
            c.digest = digest(out)
        return s

    start, load0 = datetime.datetime.now(datetime.timezone.utc), load()
    rounds(group, args.runs, once)
    load1 = load()
    ours = group[: len(args.bins)]
    same = all(c.digest == ours[0].digest for c in ours)
    return [
        f"### py grep `{PATTERN}`, {args.runs} rounds",
        "",
        f"- {start:%Y-%m-%d %H:%M} UTC; load average {load0} at the start, {load1} at the end (2 cores, shared)",
        f"- git-astedit: `--no-cache grep -p '{PATTERN}' -l python --threads 2 --max-count 0`; "
        f"{bench.sh([args.ast_grep, '--version']).strip()} `run -p … --lang python -j 2`; "
        f"parse floor `parse-floor python` (bench/parse_floor.rs); RAYON_NUM_THREADS=2",
        "- outputs: " + ", ".join(f"{c.name} {c.digest}" for c in ours)
        + (" (**identical**)" if same and len(ours) > 1 else "" if same else " (**differ**)"),
        "",
        *table(group, floor, ours[0] if len(ours) > 1 else sg),
        "",
    ]


def apply(args) -> list[str]:
    corpus = bench.BENCH_DIR / "corpus" / "rust"
    work = Path(args.work) if args.work else bench.BENCH_DIR / "work" / "speed-match"
    scratch = bench.BENCH_DIR / "out" / "speed-match"
    work.mkdir(parents=True, exist_ok=True)
    scratch.mkdir(parents=True, exist_ok=True)
    first = args.bins[0][1]
    group = [Contender(name, [path, "apply"]) for name, path in args.bins]
    git = Contender("git apply", ["git", "apply"])
    group.append(git)
    trees: dict[str, str] = {}

    def staged(dest: Path) -> tuple[Path, str]:
        bench.fresh_copy(corpus, dest)
        subprocess.run([first, "--no-cache", "edit", "-p", "$A.unwrap()", "-r", '$A.expect("bench")', "-l", "rust",
                        "--threads", THREADS], cwd=dest, env=env(), check=True, stdout=subprocess.DEVNULL)
        ids = bench.preview_ids(dest)
        assert len(ids) == 1, ids
        os.sync()
        return dest, ids[0]

    def once(c: Contender, warm: bool) -> Sample:
        dest, pid = staged(work / "copy")
        if c is git:
            diff = work / "preview.diff"
            with open(diff, "wb") as f:
                subprocess.run(["git", "diff", "--binary", f"refs/astedit/{pid}~", f"refs/astedit/{pid}"],
                               cwd=dest, stdout=f, check=True)
            bench.fresh_copy(corpus, dest)
            cmd = c.cmd + [str(diff)]
        else:
            cmd = c.cmd + [pid]
        s = measure(cmd, dest, scratch / f"apply-{c.name.replace(' ', '-')}.out", env())
        if warm:
            tree = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=dest, stdout=subprocess.PIPE,
                                  check=True).stdout
            trees[c.name] = hashlib.sha1(tree).hexdigest()[:12]
        return s

    start, load0 = datetime.datetime.now(datetime.timezone.utc), load()
    rounds(group, args.runs, once)
    load1 = load()
    same = len(set(trees.values())) == 1
    return [
        f"### apply of the rust preview, {args.runs} rounds",
        "",
        f"- {start:%Y-%m-%d %H:%M} UTC; load average {load0} at the start, {load1} at the end (2 cores, shared)",
        f"- copies in {work} ({bench.sh(['stat', '-f', '-c', '%T', str(work)]).strip()})",
        "- the preview: `edit -p '$A.unwrap()' -r '$A.expect(\"bench\")' -l rust` on a fresh copy of the rust "
        "corpus (untimed, then `sync`); `git apply` gets `git diff --binary ID~ ID` on another fresh copy",
        "- work trees after (`git diff HEAD --binary`): " + ", ".join(f"{k} {v}" for k, v in trees.items())
        + (" (**identical**)" if same else " (**differ**)"),
        "",
        *table(group, None, git),
        "",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["grep", "apply"])
    ap.add_argument("--bin", action="append", required=True, metavar="NAME=PATH",
                    help="a git-astedit binary to time (repeat: before and after)")
    ap.add_argument("--floor", default=str(bench.REPO / "target" / "release" / "examples" / "parse-floor"))
    ap.add_argument("--ast-grep", default=os.environ.get("AST_GREP", "ast-grep"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--work", help="apply: where the copies go (default $BENCH_DIR/work/speed-match; "
                                   "a tmpfs such as /dev/shm/… takes the file system's cost out)")
    ap.add_argument("--out", help="append the table to this file")
    args = ap.parse_args()
    args.bins = [(b.split("=", 1)[0], str(Path(b.split("=", 1)[1]).resolve())) for b in args.bin]
    if args.floor and not Path(args.floor).exists():
        args.floor = None
    lines = grep(args) if args.what == "grep" else apply(args)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
