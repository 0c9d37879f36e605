#!/usr/bin/env bash
# Builds the Debian package (cpack), installs it with dpkg -i, runs the installed commands from their installed
# paths, checks the files the package must hold, then removes the package again (dpkg --purge), leaving the machine
# as it was. Needs root. Usage: scripts/test-package.sh [BUILD_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
[ "$(id -u)" = 0 ] || { echo "test-package: needs root (dpkg -i)" >&2; exit 1; }
if dpkg -s gcm >/dev/null 2>&1; then
  echo "test-package: a gcm package is already installed; not touching it" >&2
  exit 1
fi
ninja -C "$BUILD" gcm help_pages >/dev/null
rm -f "$BUILD"/gcm_*.deb
(cd "$BUILD" && cpack -G DEB >/dev/null)
deb=$(ls "$BUILD"/gcm_*.deb)
echo "package: $deb ($(du -k "$deb" | cut -f1) KiB)"
trap 'dpkg --purge gcm >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb" >/dev/null
fail=0
check() { if ! "$@"; then echo "FAILED: $*" >&2; fail=1; fi; }
check /usr/bin/health_checks --help >/dev/null
check test "$(/usr/bin/gcm --version)" = "gcm, version $(sed -n 's/^project(gcm VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")"
check /usr/lib/gcm/gcm-prolog --help >/dev/null
# A static build (GCM_STATIC_DEPS, the default) loads no C++ library at start: one more would bring a second
# libstdc++ into the process, or the start-up cost back.
if grep -q '^GCM_STATIC_DEPS:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  shared_cxx=$(ldd /usr/bin/gcm | grep -E 'libstdc\+\+|libprotobuf|libfmt|libspdlog|libtomlplusplus' || true)
  check test -z "$shared_cxx"
  [ -z "$shared_cxx" ] || echo "test-package: /usr/bin/gcm loads shared C++ libraries: $shared_cxx" >&2
fi
for f in /etc/gcm/config.toml /etc/gcm/suite.toml /lib/systemd/system/gcm.slice \
  /lib/systemd/system/gcm-slurm_monitor.service /lib/systemd/system/gcm-nvml_monitor.service \
  /usr/share/doc/gcm/help/gcm.txt /usr/share/doc/gcm/help/gcm-prolog.txt /usr/share/doc/gcm/help/health_checks.txt \
  /usr/share/doc/gcm/README.md /usr/share/doc/gcm/docs/alerts.md /usr/share/doc/gcm/docs/reference/agent.md \
  /usr/lib/gcm/libgcm_otlp_grpc.so; do
  check test -s "$f"
done
if [ -d "$ROOT/data" ]; then check test -d /usr/share/gcm; fi
check grep -qx /etc/gcm/suite.toml /var/lib/dpkg/info/gcm.conffiles
check getent passwd gcm >/dev/null
# Every unit starts a command this binary has.
for u in /lib/systemd/system/gcm-*.service; do
  cmd=$(sed -n 's|^ExecStart=/usr/bin/gcm \([a-z_]*\).*|\1|p' "$u")
  check /usr/bin/gcm "$cmd" --help >/dev/null
done
# The units and the slices are valid systemd files (systemd need not run here).
if command -v systemd-analyze >/dev/null; then
  check systemd-analyze verify --man=no /lib/systemd/system/gcm-*.service /lib/systemd/system/gcm-*.timer \
    /lib/systemd/system/gcm*.slice
fi
dpkg --purge gcm >/dev/null
check test ! -e /usr/bin/gcm
trap - EXIT
if [ "$fail" = 0 ]; then echo "test-package: installed, ran and removed cleanly"; fi
exit "$fail"
