#!/usr/bin/env bash
# The benchmark in one command: builds the corpora and tools (bench/corpus.sh, cached under
# ${BENCH_DIR:-/tmp/astedit-bench}), builds git-astedit in release, then runs bench/run.py.
#
#   bench/run.sh            # full run: 5 timed runs per tool, writes bench/results/latest.md
#   bench/run.sh --quick    # 2 timed runs per tool
#   bench/run.sh --help     # every option
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/run.py "$@"
