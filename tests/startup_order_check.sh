#!/usr/bin/env bash
# The start-up order of gcm (cmake/startup_order.cmake) is fresh and in effect: most names of the list are still
# functions of the binary (else scripts/startup-order.sh must write it again), and, with ORDERED=1 (the build lays
# them out), they lie together at the start of .text instead of across all of it. The static initialisers and main
# are laid out apart, in .text.startup (-z keep-text-section-prefix), so only the names in .text are weighed there.
# With WINDOWS (and valgrind), the functions that `health_checks check-process check-zombie` runs (callgrind's list)
# must lie in at most WINDOWS windows of 64 KiB of the binary: a page fault maps the 64 KiB around it, so these
# windows are most of the check's resident text. A list that names 98 % of those functions can still leave a few
# apart, each in a window of its own: 29 windows and 5.1 MiB peak RSS with the list of 2026-12-04 after files were
# added, 18 and 4.0 MiB with a list written again (bench/README.md, "Start-up floors").
# Usage: tests/startup_order_check.sh GCM ORDER_FILE ORDERED [WINDOWS]
set -euo pipefail
text=$(readelf -SW "$1" | awk '$2 == ".text" { print $4, $6 }')
nm --defined-only "$1" | python3 -c '
import sys
order = [l.strip() for l in open(sys.argv[1]) if l.strip()]
ordered = sys.argv[2] == "1"
start, size = (int(x, 16) for x in sys.argv[3].split())
addr = {}
for line in sys.stdin:
    parts = line.split()
    if len(parts) != 3 or parts[1] not in "tTwW":
        continue
    addr.setdefault(parts[2], int(parts[0], 16))
text_lo, text_hi = start, start + size
listed = [addr[n] for n in order if n in addr]
found = sorted(a for a in listed if text_lo <= a < text_hi)
share = len(listed) / len(order)
print(f"{len(listed)} of {len(order)} listed functions are in the binary ({share:.0%}), {len(found)} of them in .text")
if share < 0.9:
    sys.exit("the start-up order is stale: run scripts/startup-order.sh and commit cmake/startup_order.txt")
if ordered:
    # Laid out together, nearly all of them are in the first 30 % of the text (99 % when this was written; 54 % in a
    # build without the order, where they are spread over it).
    near = sum(1 for a in found if a < text_lo + 0.3 * (text_hi - text_lo)) / len(found)
    print(f"{near:.0%} of them lie in the first 30 % of the text")
    if near < 0.9:
        sys.exit("the listed functions are spread over the text: the link did not apply cmake/startup_order.txt")
' "$2" "$3" "$text"

[ -n "${4:-}" ] || exit 0
command -v valgrind >/dev/null || { echo "valgrind is needed (scripts/install-deps.sh installs it)" >&2; exit 1; }
dir=$(mktemp -d /tmp/gcm-startup-windows-XXXXXX)
trap 'rm -rf "$dir"' EXIT
ln -s "$(realpath "$1")" "$dir/health_checks"
valgrind --tool=callgrind --demangle=no --compress-strings=no --callgrind-out-file="$dir/cg" \
  "$dir/health_checks" check-process check-zombie cluster nagios --log-folder "$dir/logs" >/dev/null 2>&1 || true
nm --defined-only "$1" | python3 -c '
import sys
binary, limit = sys.argv[2], int(sys.argv[3])
ran, obj = set(), None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("ob="):
        obj = line[3:].strip()
    elif line.startswith("fn=") and obj == binary:
        ran.add(line[3:].strip())
addr = {}
for line in sys.stdin:
    parts = line.split()
    if len(parts) == 3 and parts[1] in "tTwW":
        addr.setdefault(parts[2], int(parts[0], 16))
found = [addr[n] for n in ran if n in addr]
if len(found) < 500:
    sys.exit(f"callgrind saw {len(found)} functions of the binary run: the check did not run")
windows = len({a >> 16 for a in found})
print(f"the check ran {len(found)} functions of gcm, in {windows} windows of 64 KiB (at most {limit})")
if windows > limit:
    sys.exit("the start-up order is stale: run scripts/startup-order.sh and commit cmake/startup_order.txt")
' "$dir/cg" "$(realpath "$1")" "$4"
