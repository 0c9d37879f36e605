#!/usr/bin/env bash
# Runs each libFuzzer target in BUILD/fuzz for SECONDS on a copy of its seed corpus (tests/fuzz/corpus/<target>),
# JOBS targets at a time (default: one per core; each target is single-threaded, so each still gets SECONDS of a core).
# Usage: scripts/run-fuzzers.sh BUILD [SECONDS] [JOBS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$1"
SECONDS_EACH="${2:-60}"
JOBS="${3:-$(nproc)}"
# A failing input is kept here (not in the working directory, libFuzzer's default), named after its target.
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"

# One target: prints its one-line verdict (and the end of its log on failure); exit status 1 on failure.
fuzz_one() {
  local bin="$1" name work corpus_seed
  name="$(basename "$bin")"
  corpus_seed="$ROOT/tests/fuzz/corpus/${name%_fuzz}"
  work="$(mktemp -d)"
  [ -d "$corpus_seed" ] && cp -r "$corpus_seed"/. "$work"/
  local rc=0
  if "$bin" -max_total_time="$SECONDS_EACH" -max_len=4096 -print_final_stats=0 -artifact_prefix="$ARTIFACTS/$name-" \
    "$work" >"$work.log" 2>&1; then
    echo "fuzz $name: ok ($(grep -c '' "$work.log") log lines, ${SECONDS_EACH}s)"
  else
    { echo "fuzz $name: FAILED (the input: $(grep -o "Test unit written to .*" "$work.log" | cut -d' ' -f5-))"; tail -40 "$work.log"; } ; rc=1
  fi
  rm -rf "$work" "$work.log"
  return "$rc"
}

status=0
pids=()
outs=()
flush() {  # waits for the running targets and prints their output in the order they were started
  local i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "${outs[$i]}"
    rm -f "${outs[$i]}"
  done
  pids=()
  outs=()
}
for bin in "$BUILD"/fuzz/*_fuzz; do
  out="$(mktemp)"
  fuzz_one "$bin" >"$out" 2>&1 &
  pids+=("$!")
  outs+=("$out")
  if [ "${#pids[@]}" -ge "$JOBS" ]; then flush; fi
done
flush
exit "$status"
