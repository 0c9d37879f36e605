#!/usr/bin/env bash
# Runs every test: unit + golden + integration on the normal build, then the unit tests under ASan/UBSan (clang 14);
# the sanitizer build and a short run of every fuzz target on its seed corpus go on in the background meanwhile.
# Prints one closing summary line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-build}"
ASAN="${2:-build-asan}"
FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
JOBS="$(nproc)"
cd "$ROOT"

if [ ! -d ../shared/fixtures/gcm ]; then
  echo "note: ../shared/fixtures/gcm is absent; the golden tests on the reference corpus will be skipped" >&2
fi

status=0
# What failed is repeated at the very end: a CI log that keeps only its head and its tail still shows the failing
# assertions, and a test that never finished (a shard killed by a signal prints no gtest verdict).
FAILURES="$(mktemp)"
run_ctest() {  # STAGE DIR CTEST-ARGS...
  local stage="$1" dir="$2" out rc=0
  shift 2
  out="$(mktemp)"
  ctest --test-dir "$dir" --output-on-failure "$@" 2>&1 | tee "$out" || rc=1
  if [ "$rc" != 0 ]; then
    {
      echo "-- $stage"
      sed -n '/The following tests FAILED/,$p' "$out" | head -40
      local log="$dir/Testing/Temporary/LastTest.log"
      if [ -f "$log" ]; then
        grep -E -B1 -A8 ': Failure$' "$log" | head -150 || true
        awk '/^\[ RUN      \]/ { if (run) print "never finished: " run; run = $0; next }
             /^\[       OK \]|^\[  FAILED  \]|^\[  SKIPPED \]/ { run = ""; next }
             /^<end of output>/ { if (run) print "never finished: " run; run = "" }' "$log" | head -20
      fi
    } >>"$FAILURES"
  fi
  rm -f "$out"
  return "$rc"
}

# The current Slurm versions the compatibility stages run (tests/testbed/build-slurm.sh builds each from
# ../shared/slurm once per machine, into its cache): both are built now, in the background at low priority, so that
# the build overlaps the unit stage; start.sh waits on the build's lock if it is still running.
COMPAT_SLURMS=(25.11 24.11)
SLURM_BUILDS="$(mktemp -d)"
slurm_build_jobs=()
if [ -d ../shared/slurm ]; then
  for v in "${COMPAT_SLURMS[@]}"; do
    (bash tests/testbed/build-slurm.sh "$v" >"$SLURM_BUILDS/$v.out" 2>"$SLURM_BUILDS/$v.log" || true) &
    slurm_build_jobs+=($!)
  done
else
  echo "note: ../shared/slurm is absent; the tests on Slurm ${COMPAT_SLURMS[*]} will be skipped" >&2
fi

echo "== unit, golden and integration tests ($BUILD)"
# Integration tests start real services (Prometheus, the OTLP receiver); they run one at a time.
run_ctest "unit ($BUILD)" "$BUILD" -L unit -j "$JOBS" || status=1

# The sanitizer build compiles while the Slurm stages run: those mostly wait on Slurm, and the build at the lowest
# priority takes the cores they leave idle. It keeps line tables only: the sanitizers' stack traces need no more, and
# -g would cost a sixth more compile time. The fuzz targets then run in the same background job, also at the lowest
# priority: they have no deadline to miss (a fuzz run is bounded by time, so a busy machine only makes it try fewer
# inputs in its FUZZ_SECONDS; `make fuzz` is the place for long runs). The sanitizer unit tests do have deadlines
# (servers that must answer in time), so they run in the foreground once the Slurm stages are done.
echo "== sanitizer build and fuzz targets started in the background (logs: $ASAN/build.log, $ASAN/fuzz.log)"
mkdir -p "$ASAN"
rm -f "$ASAN/.built" "$ASAN/.build-failed"
(
  renice -n 19 -p "$BASHPID" >/dev/null
  if cmake -S . -B "$ASAN" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_C_COMPILER=clang-14 -DGCM_SANITIZE=ON -DGCM_BUILD_BENCH=OFF -DGCM_WERROR=ON \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -gline-tables-only" "-DCMAKE_C_FLAGS_DEBUG=-O0 -gline-tables-only" >"$ASAN/build.log" &&
    ninja -C "$ASAN" -j "$JOBS" unit_tests nvml_device_tests fuzz_targets >>"$ASAN/build.log" 2>&1; then
    touch "$ASAN/.built"
  else
    touch "$ASAN/.build-failed"
    exit 1
  fi
  echo "== fuzz targets, ${FUZZ_SECONDS}s each (run in the background at the lowest priority)" >"$ASAN/fuzz.log"
  ./scripts/run-fuzzers.sh "$ASAN" "$FUZZ_SECONDS" >>"$ASAN/fuzz.log" 2>&1
) &
asan_job=$!
cleanup() {
  pkill -TERM -P "$asan_job" 2>/dev/null || true  # cmake, ninja or the fuzzers
  kill "$asan_job" 2>/dev/null || true
  bash tests/testbed/stop.sh >/dev/null 2>&1 || true
  for v in "${COMPAT_SLURMS[@]}"; do
    (unset GCM_TESTBED_DIR GCM_TESTBED_PORT_BASE && GCM_TESTBED_SLURM=$v bash tests/testbed/stop.sh >/dev/null 2>&1) || true
  done
}
trap cleanup EXIT

echo "== Slurm testbed: its own self-test, then a testbed for the integration tests"
bash tests/testbed/selftest.sh || status=1
bash tests/testbed/start.sh || status=1
# shellcheck source=../tests/testbed/env.sh
. tests/testbed/env.sh
run_ctest "integration ($BUILD)" "$BUILD" -L integration || status=1
bash tests/testbed/stop.sh || status=1

# The tests that talk to Slurm, again on the current versions, each on its own testbed (directory and ports of its
# own, env.sh's defaults): on 25.11 every one of them (collectors on both back ends and every REST API version,
# health checks, prolog, epilog, drains, the agent and the detector); on 24.11 the collectors' (the hooks and drains
# call the same scontrol commands, and take two thirds of the stage's time).
compat_tests() {  # VERSION
  case $1 in
    25.11) echo 'Testbed\.' ;;
    *) echo '^(SlurmRestBackendTestbed|SlurmJobMonitorTestbed|SlurmMonitorTestbed|SacctTestbed|SacctmgrTestbed|SchedulerCollectorsTestbed)\.' ;;
  esac
}
for job in "${slurm_build_jobs[@]}"; do wait "$job"; done  # the Slurm builds started above
for v in "${COMPAT_SLURMS[@]}"; do
  [ -d ../shared/slurm ] || break
  built=$(sed -n 's/^build-slurm: built .* in \([0-9]* s\) .*/\1/p' "$SLURM_BUILDS/$v.log")
  echo "== Slurm $v (${built:+built in }${built:-from the cache}): its testbed, then the tests that talk to Slurm"
  rc=0
  (
    # Its own directory and ports, env.sh's defaults for the version (22.05's testbed has just stopped).
    unset GCM_TESTBED_DIR GCM_TESTBED_PORT_BASE
    export GCM_TESTBED_SLURM=$v
    # shellcheck source=../tests/testbed/env.sh
    . tests/testbed/env.sh
    bash tests/testbed/start.sh || exit 1
    trap 'bash tests/testbed/stop.sh >/dev/null 2>&1 || true' EXIT
    run_ctest "integration on Slurm $v ($BUILD)" "$BUILD" -L integration -R "$(compat_tests "$v")"
  ) || rc=$?
  if [ "$rc" != 0 ]; then
    status=1
    tail -20 "$SLURM_BUILDS/$v.log" >&2 || true
  fi
done
rm -rf "$SLURM_BUILDS"

echo "== Debian package: build, dpkg -i, run the installed commands, remove"
./scripts/test-package.sh "$BUILD" || status=1

echo "== sanitizer build: unit tests under AddressSanitizer + UndefinedBehaviorSanitizer ($ASAN)"
# The build's end is a marker file (the job goes on with the fuzz targets); a job that ended without one failed.
while [ ! -e "$ASAN/.built" ] && [ ! -e "$ASAN/.build-failed" ] && kill -0 "$asan_job" 2>/dev/null; do sleep 1; done
if [ ! -e "$ASAN/.built" ]; then
  tail -60 "$ASAN/build.log"
  if [ -s "$FAILURES" ]; then echo "== what failed before (repeated from above)"; cat "$FAILURES"; fi
  echo "make test: FAILED (the sanitizer build failed; see above)"
  exit 1
fi
# intercept_tls_get_addr=0: the leak check at exit crashed ("Tracer caught signal 11") reading a dynamic-TLS range
# of the main thread that the runtime's __tls_get_addr tracking had recorded as [0x382f, 0x400004931), after tests
# that load the fake NVML and the gRPC module; which tests share a shard decided whether it happened. Without that
# interception dynamic TLS is not scanned; the modules loaded here keep no heap pointers there only (every shard
# checked leak-free both ways where the crash allows a check).
ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1 \
  run_ctest "unit under the sanitizers ($ASAN)" "$ASAN" -L unit -j "$JOBS" || status=1

fuzz_rc=0
wait "$asan_job" || fuzz_rc=$?
trap - EXIT
cat "$ASAN/fuzz.log"
if [ "$fuzz_rc" != 0 ]; then
  status=1
  echo "-- fuzz targets: see above" >>"$FAILURES"
fi

if [ -s "$FAILURES" ]; then
  echo "== what failed (repeated from above)"
  cat "$FAILURES"
fi
rm -f "$FAILURES"
if [ "$status" = 0 ]; then echo "make test: all test stages passed"; else echo "make test: FAILED (see above)"; fi
exit "$status"
