#!/usr/bin/env python3
"""The review page's first screen, timed in headless Chromium (issue 50: <= 1 s).

    bench/review-page.py BIN REPO ID [HTML_FILE]

Starts `BIN review ID --no-open` in REPO (the local page's server: it groups the
preview, then prints its URL), opens the URL in headless Chromium driven over the
DevTools protocol on a pipe (`--remote-debugging-pipe`, as tests/integration/cdp.rs
does), and prints one JSON line:

* `serve_s`: from starting the server to its URL printed (grouping included);
* `first_screen_ms`: from the navigation's start to the page marking itself ready
  (`body[data-ready=1]`: the review fetched and the first groups drawn), read from
  the page's own clock (`performance.now()` in a MutationObserver installed before
  the page's scripts run), so the polling adds nothing;
* `fcp_ms`: the page's first contentful paint;
* `html_load_ms`, `html_fcp_ms`, `html_bytes`: the same for the static file of
  `review ID --html`, when HTML_FILE is given (opened as file://).

Chromium is started with a profile of its own in a temporary folder, and killed at
the end; the server is stopped (it serves until killed).
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

CHROMIUM = os.environ.get("CHROMIUM", "chromium")

# Runs before the page's own scripts: notes when the page marks itself ready.
WATCH = """
(() => {
  const note = () => {
    if (document.body && document.body.dataset.ready === '1' && !window.__ready) {
      window.__ready = performance.now();
    }
  };
  new MutationObserver(note).observe(document, {attributes: true, subtree: true, childList: true});
})();
"""


class Browser:
    def __init__(self, home):
        self.proc = subprocess.Popen(
            [
                "sh", "-c", 'exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null', CHROMIUM,
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", f"--user-data-dir={home}/profile",
                "--remote-debugging-pipe", "about:blank",
            ],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": home},
        )
        self.next = 0
        self.buf = b""
        self.session = None
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)
        attached = self.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, browser=True
        )
        self.session = attached["sessionId"]
        self.call("Page.enable", {})
        self.call("Runtime.enable", {})

    def read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params, browser=False):
        self.next += 1
        msg = {"id": self.next, "method": method, "params": params}
        if not browser:
            msg["sessionId"] = self.session
        self.proc.stdin.write(json.dumps(msg).encode() + b"\0")
        self.proc.stdin.flush()
        while True:
            m = self.read()
            if m.get("id") == self.next:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        return r["result"].get("value")

    def wait(self, expr, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            if self.eval(expr):
                return
            time.sleep(0.02)
        raise RuntimeError(f"never true: {expr}")

    def close(self):
        self.proc.kill()
        self.proc.wait()


def fcp(b):
    return b.eval(
        "(performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint')"
        " || {}).startTime || null"
    )


def main():
    bin_, repo, id_ = sys.argv[1:4]
    html = sys.argv[4] if len(sys.argv) > 4 else None
    out = {}
    t0 = time.time()
    server = subprocess.Popen(
        [bin_, "review", id_, "--no-open"], cwd=repo, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )
    try:
        url = server.stdout.readline().strip()
        out["serve_s"] = round(time.time() - t0, 3)
        # Keep reading the server's output so it never blocks on a full pipe.
        threading.Thread(target=server.stdout.read, daemon=True).start()
        with tempfile.TemporaryDirectory() as home:
            b = Browser(home)
            try:
                b.call("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
                b.call("Page.navigate", {"url": url})
                b.wait("window.__ready !== undefined")
                out["first_screen_ms"] = round(b.eval("window.__ready"), 1)
                out["fcp_ms"] = fcp(b)
                out["groups_drawn"] = b.eval("document.querySelectorAll('#groups .group').length")
                if html:
                    b.call("Page.navigate", {"url": "file://" + os.path.abspath(html)})
                    b.wait("document.readyState === 'complete'")
                    out["html_load_ms"] = round(
                        b.eval("performance.getEntriesByType('navigation')[0].loadEventEnd"), 1
                    )
                    out["html_fcp_ms"] = fcp(b)
                    out["html_bytes"] = os.path.getsize(html)
            finally:
                b.close()
    finally:
        server.kill()
        server.wait()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
