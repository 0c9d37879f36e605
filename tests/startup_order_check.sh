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
cg=-
if [ -n "${4:-}" ]; then
  command -v valgrind >/dev/null || { echo "valgrind is needed (scripts/install-deps.sh installs it)" >&2; exit 1; }
  dir=$(mktemp -d /tmp/gcm-startup-windows-XXXXXX)
  trap 'rm -rf "$dir"' EXIT
  ln -s "$(realpath "$1")" "$dir/health_checks"
  cg=$dir/cg
  # Its exit status is not the point (the check may warn on this host); what it ran is checked below.
  valgrind --tool=callgrind --demangle=no --compress-strings=no --callgrind-out-file="$cg" \
    "$dir/health_checks" check-process check-zombie cluster nagios --log-folder "$dir/logs" >/dev/null 2>&1 || true
fi
nm --defined-only "$1" | python3 -c '
import sys
order_file, ordered, text, cg, binary, limit = sys.argv[1:7]
order = [l.strip() for l in open(order_file) if l.strip()]
start, size = (int(x, 16) for x in text.split())
addr = {}
for line in sys.stdin:
    parts = line.split()
    if len(parts) == 3 and parts[1] in "tTwW":
        addr.setdefault(parts[2], int(parts[0], 16))
text_lo, text_hi = start, start + size
listed = [addr[n] for n in order if n in addr]
found = sorted(a for a in listed if text_lo <= a < text_hi)
share = len(listed) / len(order)
print(f"{len(listed)} of {len(order)} listed functions are in the binary ({share:.0%}), {len(found)} of them in .text")
if share < 0.9:
    sys.exit("the start-up order is stale: run scripts/startup-order.sh and commit cmake/startup_order.txt")
if ordered == "1":
    # Laid out together, nearly all of them are in the first 30 % of the text (99 % when this was written; 54 % in a
    # build without the order, where they are spread over it).
    near = sum(1 for a in found if a < text_lo + 0.3 * (text_hi - text_lo)) / len(found)
    print(f"{near:.0%} of them lie in the first 30 % of the text")
    if near < 0.9:
        sys.exit("the listed functions are spread over the text: the link did not apply cmake/startup_order.txt")
if cg != "-":
    ran, obj = set(), None
    for line in open(cg, errors="replace"):
        if line.startswith("ob="):
            obj = line[3:].strip()
        elif line.startswith("fn=") and obj == binary:
            ran.add(line[3:].strip())
    hit = [addr[n] for n in ran if n in addr]
    if len(hit) < 500:
        sys.exit(f"callgrind saw {len(hit)} functions of the binary run: the check did not run")
    windows = len({a >> 16 for a in hit})
    print(f"the check ran {len(hit)} functions of gcm, in {windows} windows of 64 KiB (at most {limit})")
    if windows > int(limit):
        sys.exit("the start-up order is stale: run scripts/startup-order.sh and commit cmake/startup_order.txt")
' "$2" "$3" "$text" "$cg" "$(realpath "$1")" "${4:-0}"
