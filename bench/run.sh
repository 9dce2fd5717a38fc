#!/usr/bin/env bash
# The benchmark in one command: builds the corpora and tools (bench/corpus.sh, cached under
# ${BENCH_DIR:-/tmp/astedit-bench}), builds git-astedit in release, then runs bench/run.py.
#
#   bench/run.sh            # full run: 5 timed runs per tool, writes bench/results/latest.md
#   bench/run.sh --quick    # 2 timed runs per tool
#   bench/run.sh --help     # every option
#   bench/run.sh scale ...  # the cost-growth rows (10k/100k files): bench/scale.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = scale ]; then
    shift
    exec bench/scale.sh "$@"
fi
exec python3 bench/run.py "$@"
