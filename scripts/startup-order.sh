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
# The health check first: it has the tightest budget (design.md §7), and the functions of the first run are laid out
# together in the order they first ran, so its code is the densest part of the list.
run "$dir/health_checks" check-process check-zombie cluster nagios --log-folder "$dir/logs"
run "$dir/health_checks" check-nvidia-smi -c gpu_num cluster nagios --log-folder "$dir/logs" --help
run "$dir/health_checks" --help
run "$dir/health_checks" --version
run "$BUILD/gcm" --help
run "$BUILD/gcm" --version
# The functions of the gcm binary itself (ob= names the object of the fn= lines after it), first seen first, save
# names that lld cannot place alone. Debian's libprotobuf.a and libyaml.a are built without -ffunction-sections: a
# name defined in one of their objects' shared .text moves that object's whole .text (218 KiB for descriptor.o) into
# the list's place, so such names go last (their inline functions have sections of their own and keep their place).
# Names the binary defines more than once (local copies such as a std::string clone in each unity batch) place
# every copy, so they go last too. Last of all the names that are both: the one that drags the most objects first,
# so that the copies run of the others lie together after those objects instead of between them.
nm --defined-only "$BUILD/gcm" | awk 'NF == 3 { print $3 }' | sort | uniq -d >"$dir/repeated"
for archive in $(sed -n 's/^GCM_\(PROTOBUF\|YAML\)_ARCHIVE:FILEPATH=//p' "$BUILD/CMakeCache.txt"); do
  objdump -t "$archive" | awk '/file format/ { member = $1 } { for (i = 1; i < NF; i++) if ($i == ".text") print member, $NF }'
done >"$dir/whole"
python3 - "$BUILD/gcm" "$dir/repeated" "$dir/whole" "$dir"/cg.* >"$ROOT/cmake/startup_order.txt" <<'PY'
import os, sys
binary = os.path.realpath(sys.argv[1])
repeated = set(open(sys.argv[2]).read().split())
members = {}  # name -> the archive members that define it in their shared .text
for line in open(sys.argv[3]):
    member, name = line.split()
    members.setdefault(name, set()).add(member)
whole = set(members)
seen, known = [], set()
for path in sys.argv[4:]:
    obj = None
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            obj = os.path.realpath(line[3:].strip()) if line[3:].strip() else None
        elif line.startswith("fn=") and obj == binary:
            name = line[3:].strip()
            if name and not name.startswith(("0x", "(")) and name not in known:
                known.add(name)
                seen.append(name)
first = [n for n in seen if n not in repeated and n not in whole]
copies = [n for n in seen if n in repeated and n not in whole]
objects = [n for n in seen if n in whole and n not in repeated]
dragging = sorted((n for n in seen if n in whole and n in repeated), key=lambda n: -len(members[n]))
print("\n".join(first + copies + objects + dragging))
PY
echo "$(wc -l <"$ROOT/cmake/startup_order.txt") functions in cmake/startup_order.txt"
