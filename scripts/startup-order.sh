#!/usr/bin/env bash
# Writes cmake/startup_order.txt: the functions of gcm that its shortest and most frequent runs execute (a health
# check from a prolog or Nagios, the help and version of both names), as mangled names in the order callgrind first
# lists them, for lld's --symbol-ordering-file (cmake/startup_order.cmake says why). Run it after a change that
# renames much of the start-up path; the test startup_order_names says when the list has gone stale.
# Usage: scripts/startup-order.sh [BUILD]   (needs valgrind)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD=$(realpath "${1:-$ROOT/build}")
dir=$(mktemp -d /tmp/gcm-startup-order-XXXXXX)
trap 'rm -rf "$dir"' EXIT
ln -s "$BUILD/gcm" "$dir/health_checks"
n=0
run() {
  n=$((n + 1))
  valgrind --tool=callgrind --demangle=no --compress-strings=no --callgrind-out-file="$dir/cg.$n" "$@" \
    >/dev/null 2>&1 || true
}
run "$BUILD/gcm" --help
run "$BUILD/gcm" --version
run "$dir/health_checks" --help
run "$dir/health_checks" --version
run "$dir/health_checks" check-process check-zombie cluster nagios --log-folder "$dir/logs"
run "$dir/health_checks" check-nvidia-smi -c gpu_num cluster nagios --log-folder "$dir/logs" --help
# The functions of the gcm binary itself (ob= names the object of the fn= lines after it), first seen first.
python3 - "$BUILD/gcm" "$dir"/cg.* >"$ROOT/cmake/startup_order.txt" <<'PY'
import os, sys
binary = os.path.realpath(sys.argv[1])
seen, known = [], set()
for path in sys.argv[2:]:
    obj = None
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            obj = os.path.realpath(line[3:].strip()) if line[3:].strip() else None
        elif line.startswith("fn=") and obj == binary:
            name = line[3:].strip()
            if name and not name.startswith(("0x", "(")) and name not in known:
                known.add(name)
                seen.append(name)
print("\n".join(seen))
PY
echo "$(wc -l <"$ROOT/cmake/startup_order.txt") functions in cmake/startup_order.txt"
