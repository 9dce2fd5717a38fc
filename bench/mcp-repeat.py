#!/usr/bin/env python3
"""The MCP server's second call (issue 26 item 2): one `git astedit mcp` process, the
same `ast_grep` search N times; prints each call's wall time. Beside it, a cold CLI run
(`--no-cache grep`) is the bar's reference.

    bench/mcp-repeat.py GIT_ASTEDIT REPO PATTERN LANG [N]
"""
import json
import statistics
import subprocess
import sys
import time


def main() -> int:
    exe, repo, pattern, lang = sys.argv[1:5]
    n = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    proc = subprocess.Popen([exe, "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, bufsize=1)
    next_id = [1]

    def request(method: str, params: dict) -> dict:
        rid = next_id[0]
        next_id[0] += 1
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        while True:
            msg = json.loads(proc.stdout.readline())
            if msg.get("id") == rid:
                return msg

    request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "1"}})
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}) + "\n")
    proc.stdin.flush()
    walls = []
    for _ in range(n):
        start = time.perf_counter()
        msg = request("tools/call", {"name": "ast_grep", "arguments": {"pattern": pattern, "lang": lang}})
        walls.append(time.perf_counter() - start)
        if "error" in msg or msg.get("result", {}).get("isError"):
            print(json.dumps(msg)[:500], file=sys.stderr)
            return 1
    proc.stdin.close()
    proc.wait()
    later = walls[1:]
    print(f"calls: {' '.join(f'{w:.3f}' for w in walls)} s; first {walls[0]:.3f} s; "
          f"later p50 {statistics.median(later):.3f} s" if later else f"calls: {walls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
