#!/usr/bin/env python3
"""What each tree-sitter grammar costs a release build (issue 23 item 6).

Run after `cargo build --release --timings`: prints, per grammar crate, the seconds its
units took (the C compile of its build script; from target/cargo-timings, so on a busy
machine they are inflated, but comparable) and the code and data its static library
holds (`size` of target/release/build/*/out/lib*.a; all of it ends up in the binary,
as each grammar's language function references its whole parse table).
"""
import glob, json, os, re, subprocess

html = open(sorted(glob.glob("target/cargo-timings/cargo-timing-*.html"))[-1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
seconds = {}
for u in units:
    if u["name"].startswith("tree-sitter-") and u["name"] != "tree-sitter-language":
        seconds[u["name"]] = seconds.get(u["name"], 0) + u["duration"]
sizes = {}
for lib in glob.glob("target/release/build/tree-sitter-*/out/lib*.a"):
    crate = os.path.basename(os.path.dirname(os.path.dirname(lib))).rsplit("-", 1)[0]
    last = subprocess.run(["size", "-t", lib], capture_output=True, text=True).stdout.splitlines()[-1]
    text, data = map(int, last.split()[:2])
    sizes[crate] = sizes.get(crate, 0) + text + data
total_s = total_b = 0
print(f"{'crate':28} {'unit s':>7} {'KiB':>7}")
for crate in sorted(set(seconds) | set(sizes), key=lambda c: -sizes.get(c, 0)):
    print(f"{crate:28} {seconds.get(crate, 0):7.1f} {sizes.get(crate, 0) / 1024:7.0f}")
    if crate != "tree-sitter":
        total_s += seconds.get(crate, 0)
        total_b += sizes.get(crate, 0)
all_s = sum(u["duration"] for u in units)
print(f"grammars: {total_s:.0f} of {all_s:.0f} unit-seconds, {total_b / 2**20:.1f} MiB")
