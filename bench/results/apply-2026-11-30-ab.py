#!/usr/bin/env python3
"""A/B of `git astedit apply ID` against `git apply DIFF` on fresh copies of the rust
corpus, the way bench/run.py's bench_apply does it (cp -a, update-index --refresh, sync;
all untimed). CPU by perf stat -e task-clock, wall by perf_counter.

usage: ab.py ROUNDS label=/path/to/binary ...   (env PREFIX: a command prefix, e.g. strace)
"""
import os, shutil, statistics, subprocess, sys, time, json
from pathlib import Path

CORPUS = Path("/tmp/astedit-bench/corpus/rust")
WORK = Path(os.environ.get("AB_WORK", "/tmp/apply-ab/work"))
ENV = dict(os.environ, RAYON_NUM_THREADS="2", NO_COLOR="1")
ENV.pop("GIT_DIR", None)
ENV.pop("GIT_WORK_TREE", None)


def fresh(src: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    subprocess.run(["cp", "-a", str(src), str(dest)], check=True)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=dest, check=False)
    os.sync()
    time.sleep(float(os.environ.get('SETTLE', '0')))
    return dest


def stage(label: str, binary: str) -> tuple[Path, str]:
    master = WORK / f"master-{label}"
    idf = WORK / f"master-{label}.id"
    if master.exists() and idf.exists():
        return master.resolve(), idf.read_text().strip()
    fresh(CORPUS, master)
    subprocess.run([binary, "edit", "-p", "$A.unwrap()", "-r", '$A.expect("bench")', "-l", "rust",
                    "--threads", "2"], cwd=master, env=ENV, check=True, stdout=subprocess.DEVNULL)
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)", "refs/astedit/"], cwd=master,
                          stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    assert len(refs) == 1, refs
    pid = refs[0].removeprefix("refs/astedit/")
    idf.write_text(pid)
    return master, pid


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    out = WORK / "perf.txt"
    start = time.perf_counter()
    p = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "-o", str(out), *cmd], cwd=cwd, env=ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{cmd} failed: {p.stderr.decode()[:500]}")
    cpu = next(float(l.split(",")[0]) for l in out.read_text().splitlines() if "task-clock" in l) / 1000
    return wall, cpu


def main() -> None:
    rounds = int(sys.argv[1])
    bins = [a.split("=", 1) for a in sys.argv[2:]]
    WORK.mkdir(parents=True, exist_ok=True)
    masters = {label: stage(label, b) for label, b in bins}
    label0 = bins[0][0]
    m0, id0 = masters[label0]
    diff = WORK / "preview.diff"
    with open(diff, "wb") as f:
        subprocess.run(["git", "diff", "--binary", f"refs/astedit/{id0}~", f"refs/astedit/{id0}"], cwd=m0,
                       stdout=f, check=True)
    contenders = [(label, [b, "apply", masters[label][1]], masters[label][0]) for label, b in bins]
    contenders.append(("git-apply", ["git", "apply", str(diff)], CORPUS))
    res: dict[str, list[tuple[float, float]]] = {c[0]: [] for c in contenders}
    for i in range(rounds + 1):
        k = i % len(contenders)
        for label, cmd, src in contenders[k:] + contenders[:k]:
            dest = fresh(src, WORK / f"run-{label}")
            w, c = timed(cmd, dest)
            if i > 0:
                res[label].append((w, c))
            print(f"round {i} {label:10} wall {w:.3f} cpu {c:.3f}", flush=True)
    print()
    g = res["git-apply"]
    gw, gc = statistics.median(x[0] for x in g), statistics.median(x[1] for x in g)
    for label, runs in res.items():
        w, c = statistics.median(x[0] for x in runs), statistics.median(x[1] for x in runs)
        print(f"{label:10} wall {w:.3f} (min {min(x[0] for x in runs):.3f})  cpu {c:.3f} "
              f"(min {min(x[1] for x in runs):.3f})   ratio wall {w / gw:.2f}x cpu {c / gc:.2f}x")
    (WORK / "last.json").write_text(json.dumps(res))


main()
