#!/usr/bin/env bash
# Cost growth on synthetic TypeScript trees (issue 16 item 3): builds git-astedit in
# release, then runs bench/scale.py (trees and journal cached under
# ${SCALE_DIR:-/tmp/astedit-scale}).
#
#   bench/scale.sh                         # 10k and 100k files, 10,000 journal events, 3 runs
#   bench/scale.sh --sizes 5000,20000      # other sizes
#   bench/scale.sh --no-build --help       # every option
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--no-build" ]]; then
    shift
else
    cargo build --release --locked >&2
fi
exec python3 bench/scale.py "$@"
