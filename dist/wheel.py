#!/usr/bin/env python3
"""dist/wheel.py: the wheel of a binary built before, without compiling anything.

    python3 dist/wheel.py BIN DATA_DIR PLATFORM_TAG OUTDIR
    python3 dist/wheel.py compare MATURIN_WHEEL OUR_WHEEL

maturin always builds the binary itself (with `bindings = "bin"` it runs cargo), so a
release binary made elsewhere (GIT_ASTEDIT_BIN, the release workflow's artefact) would be
compiled a second time, for minutes, only to be zipped. A wheel is a zip of known layout
(PEP 427 and the core metadata spec): this writes the one maturin writes for this project
from pyproject.toml, README.md and LICENSE, with the binary under `.data/scripts/` and
DATA_DIR (maturin's `data` folder, whose subfolders are install schemes: build.sh
fills `data/share/` with man pages and completions) under `.data/`.
It leaves out only maturin's CycloneDX SBOM of the Rust dependencies, which no installer
reads. dist/ci.sh compares this wheel with maturin's, file by file, so the two cannot
drift apart unseen.

Reproducible: entries sorted, every time stamp 1980-01-01 (as maturin writes them).
"""

import base64
import hashlib
import os
import stat
import sys
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EPOCH = (1980, 1, 1, 0, 0, 0)


def cargo_version():
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        manifest = tomllib.load(f)
    version = manifest["package"]["version"]
    # `version.workspace = true`: the members' one version (issue 49).
    if isinstance(version, dict) and version.get("workspace"):
        version = manifest["workspace"]["package"]["version"]
    return version


def metadata(version):
    """The core metadata maturin 1.16 writes, in its order of fields."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    lines = ["Metadata-Version: 2.4", f"Name: {project['name']}", f"Version: {version}"]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines.append("License-File: LICENSE")
    lines.append(f"Summary: {project['description']}")
    lines.append(f"Keywords: {','.join(project.get('keywords', []))}")
    lines.append(f"License: {project['license']['text']}")
    lines.append(f"Requires-Python: {project['requires-python']}")
    lines.append("Description-Content-Type: text/markdown; charset=UTF-8; variant=GFM")
    lines += [f"Project-URL: {k}, {v}" for k, v in project.get("urls", {}).items()]
    with open(os.path.join(ROOT, project["readme"]), encoding="utf-8") as f:
        readme = f.read()
    return "\n".join(lines) + "\n\n" + readme + "\n"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{name},sha256={digest.decode()},{len(data)}"


def entries(binary, data_dir, tag, version):
    """(name, bytes, executable) for every file of the wheel but RECORD."""
    base = f"git_astedit-{version}"
    out = []
    for folder, _, files in os.walk(data_dir):
        for file in files:
            path = os.path.join(folder, file)
            rel = os.path.relpath(path, data_dir).replace(os.sep, "/")
            with open(path, "rb") as f:
                out.append((f"{base}.data/{rel}", f.read(), os.access(path, os.X_OK)))
    with open(binary, "rb") as f:
        out.append((f"{base}.data/scripts/git-astedit", f.read(), True))
    info = f"{base}.dist-info"
    out.append((f"{info}/METADATA", metadata(version).encode(), False))
    wheel = f"Wheel-Version: 1.0\nGenerator: git-astedit dist/wheel.py\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"
    out.append((f"{info}/WHEEL", wheel.encode(), False))
    with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
        out.append((f"{info}/licenses/LICENSE", f.read(), False))
    return sorted(out), f"{info}/RECORD"


def write(path, items, record_name):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, executable in items:
            info = zipfile.ZipInfo(name, EPOCH)
            mode = 0o755 if executable else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
        record = "\n".join(record_line(n, d) for n, d, _ in items) + f"\n{record_name},,\n"
        info = zipfile.ZipInfo(record_name, EPOCH)
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, record)


def contents(path):
    """A wheel's files by name, without what may differ between two builds of one tree:
    the binary (built apart), RECORD (its hash), the SBOM and the generator's name."""
    with zipfile.ZipFile(path) as z:
        out = {}
        for name in z.namelist():
            if name.endswith(("/RECORD", "/scripts/git-astedit")) or "/sboms/" in name:
                out[name] = None
                continue
            data = z.read(name)
            if name.endswith("/WHEEL"):
                data = b"".join(l for l in data.splitlines(True) if not l.startswith(b"Generator:"))
            out[name] = data
        return out


def compare(maturin_wheel, our_wheel):
    theirs = {k: v for k, v in contents(maturin_wheel).items() if "/sboms/" not in k}
    ours = contents(our_wheel)
    if os.path.basename(maturin_wheel) != os.path.basename(our_wheel):
        sys.stderr.write(f"wheel.py: names differ: {maturin_wheel} vs {our_wheel}\n")
        return 1
    bad = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k, b"?") != ours.get(k, b"!"))
    for name in bad:
        sys.stderr.write(f"wheel.py: differs from maturin's wheel: {name}\n")
    return 1 if bad else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    if len(argv) != 5:
        sys.stderr.write("usage: dist/wheel.py BIN DATA_DIR PLATFORM_TAG OUTDIR\n"
                         "       dist/wheel.py compare MATURIN_WHEEL OUR_WHEEL\n")
        return 2
    binary, data_dir, tag, out_dir = argv[1:]
    if not os.path.isdir(data_dir):
        sys.stderr.write(f"wheel.py: no data folder {data_dir}\n")
        return 1
    version = cargo_version()
    items, record_name = entries(binary, data_dir, tag, version)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"git_astedit-{version}-py3-none-{tag}.whl")
    write(path, items, record_name)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
