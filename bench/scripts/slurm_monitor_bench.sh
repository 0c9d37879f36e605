#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `gcm slurm_monitor --once --sink do_nothing` on generated inputs:
# NODES sinfo rows (default 10 000) and JOBS sacct rows (default 100 000), answered by fake commands on PATH.
# Usage: bench/scripts/slurm_monitor_bench.sh [build/gcm] [NODES] [JOBS] [RUNS]
set -euo pipefail
GCM=$(realpath "${1:-build/gcm}")
NODES=${2:-10000}
JOBS=${3:-100000}
RUNS=${4:-5}
dir=$(mktemp -d /tmp/gcm-slurmmon-bench-XXXXXX)
trap 'rm -rf "$dir"' EXIT

# sinfo -O rows: 256-wide fields as Slurm pads them; a mix of states, 8 GPUs per node, two partitions.
python3 - "$dir" "$NODES" "$JOBS" <<'PY'
import sys
d, nodes, jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
states = ["mixed", "allocated", "idle", "drained", "down*", "mixed", "allocated", "completing"]
with open(d + "/sinfo.txt", "w") as f:
    for i in range(nodes):
        st = states[i % len(states)]
        used = 8 if st in ("allocated", "completing") else (4 if st == "mixed" else 0)
        alloc = 96 if used == 8 else (48 if used == 4 else 0)
        fields = [f"node{i:05d}", "gpu:h100:8(S:0-1)", f"gpu:h100:{used}(IDX:{'0-7' if used else 'N/A'})", "96",
                  f"{alloc}/{96 - alloc}/0/96", st, "h100" if i % 2 else "a100"]
        f.write("|".join(x.ljust(256) for x in fields) + "\n")
users = [f"user{i}" for i in range(500)]
accounts = [f"acct{i}" for i in range(50)]
jstates = ["RUNNING"] * 6 + ["PENDING", "COMPLETED", "FAILED", "CANCELLED by 123"]
with open(d + "/sacct.txt", "w") as f:
    f.write("JobID|User|AllocCPUS|AllocTRES|ReqNodes|ReqTRES|Submit|Start|End|State|AllocNodes|Elapsed|Suspended|Account\n")
    for i in range(jobs):
        st = jstates[i % len(jstates)]
        n = 1 + (i % 4 == 0)
        g = 8 * n
        run = st == "RUNNING"
        tres = f"billing={g * 10},cpu={96 * n},gres/gpu={g},mem={1000 * n}G,node={n}"
        f.write(f"{1000000 + i}|{users[i % 500]}|{96 * n if st != 'PENDING' else 0}|{tres if st != 'PENDING' else ''}|"
                f"{n}|{tres}|2026-11-29T10:00:00|{'2026-11-29T10:05:00' if st != 'PENDING' else 'Unknown'}|"
                f"{'Unknown' if run or st == 'PENDING' else '2026-11-29T11:00:00'}|{st}|{n if st != 'PENDING' else 0}|"
                f"1-02:03:04|00:00:00|{accounts[i % 50]}\n")
PY
printf '#!/bin/sh\nif [ "$1" = -V ]; then echo "slurm 22.05.8"; exit 0; fi\nexec cat %s/sinfo.txt\n' "$dir" >"$dir/sinfo"
printf '#!/bin/sh\nexec cat %s\n' "$(realpath "$(dirname "$0")/../../tests/fixtures/slurm-22.05/sdiag.txt")" >"$dir/sdiag"
printf '#!/bin/sh\nexec cat %s/sacct.txt\n' "$dir" >"$dir/sacct"
chmod +x "$dir/sinfo" "$dir/sdiag" "$dir/sacct"
echo "inputs: $NODES sinfo rows ($(du -h "$dir/sinfo.txt" | cut -f1)), $JOBS sacct rows ($(du -h "$dir/sacct.txt" | cut -f1))"
for i in $(seq "$RUNS"); do
  PATH="$dir:$PATH" /usr/bin/time -f "%e s wall, %M KiB peak RSS" \
    "$GCM" slurm_monitor --once --sink do_nothing --cluster bench --log-folder "$dir" 2>&1 | tail -1
done
