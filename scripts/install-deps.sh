#!/usr/bin/env bash
# Installs every Debian package (and the npm test peer) that the build, the tests, the demo and the benchmarks need.
# Idempotent: a second run installs nothing and takes well under a second.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang-14 libclang-rt-14-dev
  # lld lays out gcm's start-up functions together and packs its relocations (cmake/startup_order.cmake; packing
  # needs lld 15 or later, Debian 12's default lld is 14)
  lld-16
  # libraries
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  libcpp-httplib-dev libcurl4-openssl-dev libprotobuf-dev protobuf-compiler zlib1g-dev libgrpc++-dev
  # web config (--web.config.file): YAML (static libyaml.a), OpenSSL and libxcrypt headers (both dlopen'ed)
  libyaml-dev libssl-dev libcrypt-dev
  # tests and benchmarks (valgrind: which functions a health check runs, tests/startup_order_check.sh)
  libgtest-dev libgmock-dev libbenchmark-dev valgrind
  # real peers for the integration tests and the demo
  prometheus prometheus-alertmanager curl time procps
  # the CA, server and client certificates of the TLS tests
  openssl
  # gcm jobstats --html: its test loads the page in headless Chromium and reads the screenshot back with libpng
  # (this script installs without recommends, which is all Chromium needs to run headless)
  chromium libpng-dev
  # a real Slurm 22.05 cluster with accounting for the tests and the demo (tests/testbed/)
  slurm-wlm slurmctld slurmd slurm-client slurmdbd slurmrestd munge mariadb-server
  # the testbed's newer Slurm (24.11, 25.11), built from ../shared/slurm by tests/testbed/build-slurm.sh: munge,
  # JSON and YAML (--json, slurmrestd), JWT, slurmrestd's HTTP parser, slurmdbd's MariaDB client, LZ4
  libmunge-dev libjson-c-dev libjwt-dev libhttp-parser-dev libmariadb-dev liblz4-dev
)
# Node.js runs the npm OTLP receiver. Images that ship their own Node.js (with npm) keep it; elsewhere Debian's.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The OTLP receiver used by the integration tests and the demo (@elastic/mockotlpserver), pinned by package-lock.json.
OTLP_DIR="$ROOT/tests/integration/otlp_receiver"
if [ -f "$OTLP_DIR/package.json" ] && [ ! -d "$OTLP_DIR/node_modules/@elastic/mockotlpserver" ]; then
  echo "install-deps: installing the npm OTLP receiver" >&2
  (cd "$OTLP_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# The Grafana dashboard schema check (@grafana/schema, @grafana/grafana-foundation-sdk and typescript), pinned by
# package-lock.json.
GRAFANA_DIR="$ROOT/tests/grafana"
if [ -f "$GRAFANA_DIR/package.json" ] && [ ! -d "$GRAFANA_DIR/node_modules/@grafana/schema" ]; then
  echo "install-deps: installing the npm Grafana schema packages" >&2
  (cd "$GRAFANA_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
