#!/usr/bin/env bash
# The start-up order of gcm (cmake/startup_order.cmake) is fresh and in effect: most names of the list are still
# functions of the binary (else scripts/startup-order.sh must write it again), and, with ORDERED=1 (the build lays
# them out), they lie together at the start of .text instead of across all of it.
# Usage: tests/startup_order_check.sh GCM ORDER_FILE ORDERED
set -euo pipefail
nm --defined-only "$1" | python3 -c '
import sys
order = [l.strip() for l in open(sys.argv[1]) if l.strip()]
ordered = sys.argv[2] == "1"
addr = {}
text_lo, text_hi = None, 0
for line in sys.stdin:
    parts = line.split()
    if len(parts) != 3 or parts[1] not in "tTwW":
        continue
    a = int(parts[0], 16)
    addr.setdefault(parts[2], a)
    text_lo = a if text_lo is None else min(text_lo, a)
    text_hi = max(text_hi, a)
found = sorted(addr[n] for n in order if n in addr)
share = len(found) / len(order)
print(f"{len(found)} of {len(order)} listed functions are in the binary ({share:.0%})")
if share < 0.9:
    sys.exit("the start-up order is stale: run scripts/startup-order.sh and commit cmake/startup_order.txt")
if ordered:
    # Laid out together, nearly all of them are in the first 30 % of the text (99 % when this was written; 54 % in a
    # build without the order, where they are spread over it).
    near = sum(1 for a in found if a < text_lo + 0.3 * (text_hi - text_lo)) / len(found)
    print(f"{near:.0%} of them lie in the first 30 % of the text")
    if near < 0.9:
        sys.exit("the listed functions are spread over the text: the link did not apply cmake/startup_order.txt")
' "$2" "$3"
