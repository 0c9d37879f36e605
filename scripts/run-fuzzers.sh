#!/usr/bin/env bash
# Runs each libFuzzer target in BUILD/fuzz for SECONDS on a copy of its seed corpus (tests/fuzz/corpus/<target>).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$1"
SECONDS_EACH="${2:-60}"
status=0
for bin in "$BUILD"/fuzz/*_fuzz; do
  name="$(basename "$bin")"
  corpus_seed="$ROOT/tests/fuzz/corpus/${name%_fuzz}"
  work="$(mktemp -d)"
  [ -d "$corpus_seed" ] && cp -r "$corpus_seed"/. "$work"/
  if "$bin" -max_total_time="$SECONDS_EACH" -max_len=4096 -print_final_stats=0 "$work" >"$work.log" 2>&1; then
    echo "fuzz $name: ok ($(grep -c '' "$work.log") log lines, ${SECONDS_EACH}s)"
  else
    echo "fuzz $name: FAILED"; tail -40 "$work.log"; status=1
  fi
  rm -rf "$work" "$work.log"
done
exit "$status"
