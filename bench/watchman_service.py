"""A Watchman service of a bench's own, for `agents-shell-window.py --watchman` and
`agents-stress.py --watchman` (issue 54 item 1): the hook records a shell command's
window from Watchman's answer where Watchman watches the work tree."""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Watchman:
    """A Watchman service of the bench's own (socket, state and log in a temporary
    folder; give the hook `sock` as WATCHMAN_SOCK); `stop` ends it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="astedit-watchman-")
        self.sock = os.path.join(self.dir, "sock")
        self.proc = subprocess.Popen(
            ["watchman", "--foreground", "--no-save-state", f"--sockname={self.sock}",
             f"--statefile={self.dir}/state", f"--logfile={self.dir}/log",
             f"--pidfile={self.dir}/pid"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            if self.cli("get-pid") is not None:
                break
            time.sleep(0.05)
        else:
            self.stop()
            sys.exit("watchman did not answer")

    def watch(self, root):
        if self.cli("watch", os.path.realpath(root)) is None:
            sys.exit(f"watchman does not watch {root}")

    def cli(self, *args):
        p = subprocess.run(["watchman", f"--sockname={self.sock}", "--no-spawn", "--no-local",
                            "--no-pretty", *args], capture_output=True)
        try:
            v = json.loads(p.stdout)
        except ValueError:
            return None
        return None if p.returncode or "error" in v else v

    def cpu(self):
        """The service's CPU seconds so far (every thread's, from schedstat: ns)."""
        total = 0
        for f in glob.glob(f"/proc/{self.proc.pid}/task/*/schedstat"):
            with open(f) as fh:
                total += int(fh.read().split()[0])
        return total / 1e9

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
