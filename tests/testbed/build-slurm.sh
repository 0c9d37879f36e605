#!/usr/bin/env bash
# Builds one of the Slurm source trees in ../shared/slurm/ (SchedMD's tarballs, checked against its SHA256SUMS) for
# the testbed, into a cache outside the work tree, and prints the installation prefix on stdout:
#   tests/testbed/build-slurm.sh 25.11        # or 25.11.7, 24.11, 24.11.7
# The cache entry is named after the version, the tarball's SHA-256 and this script's build recipe, so a machine
# builds each tarball once: a second run only checks the checksum (well under a second) and prints the same prefix.
# A build is written under a temporary name and renamed when complete, under a lock, so an interrupted or concurrent
# build never leaves a half-installed prefix behind. The cache also keeps a link slurm-<version> (and
# slurm-<major.minor>) to the newest entry of each version, which env.sh follows.
#
# Only what the testbed runs is built: the daemons (slurmctld, slurmd, slurmdbd with accounting_storage/mysql on the
# testbed's MariaDB, slurmrestd), the commands, and the plugins of src/; optional libraries the testbed never uses
# (PMIx, UCX, NVML, RSMI, oneAPI, FreeIPMI, HDF5, Lua, OFED, eBPF, s2n, PAM, X11, GTK) are left out even when
# installed, so the build is the same on every machine. Needs the -dev packages of scripts/install-deps.sh.
#
# Environment:
#   GCM_SLURM_SOURCES  where the tarballs and SHA256SUMS are (default: ../shared/slurm next to the work tree)
#   GCM_SLURM_CACHE    the cache (default /var/cache/gcm-slurm)
#   GCM_SLURM_JOBS     parallel compile jobs (default: the number of cores)
#   GCM_SLURM_NICE     the build's niceness (default 10: other work on the machine goes first)
# Exit status: 0 with the prefix on stdout; 77 when the sources are absent (callers skip with the message); 1 on a
# failed build (the last lines of its log on stderr; the whole log is kept in the cache).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SOURCES="${GCM_SLURM_SOURCES:-$ROOT/../shared/slurm}"
CACHE="${GCM_SLURM_CACHE:-/var/cache/gcm-slurm}"
JOBS="${GCM_SLURM_JOBS:-$(nproc)}"
NICE="${GCM_SLURM_NICE:-10}"

say() { printf 'build-slurm: %s\n' "$*" >&2; }
usage() {
  echo "usage: $0 VERSION   (a version of a tarball in $SOURCES: 24.11.7 or 24.11, 25.11.7 or 25.11)" >&2
  exit 2
}
[ $# = 1 ] || usage
want=$1
[[ $want =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || usage

if [ ! -d "$SOURCES" ]; then
  say "skipped: $SOURCES is absent (it holds SchedMD's Slurm tarballs; see README.md, \"Testing against your Slurm\")"
  exit 77
fi
# The newest tarball of that version (a full version names one tarball).
tarball=""
for t in "$SOURCES"/slurm-"$want"*.tar.gz; do
  [ -e "$t" ] || continue
  v=${t##*/slurm-}
  v=${v%.tar.gz}
  [[ $v == "$want" || $v == "$want".* ]] || continue
  if [ -z "$tarball" ] || [ "$(printf '%s\n%s\n' "$version" "$v" | sort -V | tail -1)" = "$v" ]; then
    tarball=$t
    version=$v
  fi
done
if [ -z "$tarball" ]; then
  say "skipped: no slurm-$want*.tar.gz in $SOURCES (it has: $(cd "$SOURCES" && ls -- *.tar.gz 2>/dev/null | tr '\n' ' '))"
  exit 77
fi
name=${tarball##*/}
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ -f "$SOURCES/SHA256SUMS" ]; then
  listed=$(awk -v f="$name" '$2 == f || $2 == "*" f { print $1 }' "$SOURCES/SHA256SUMS")
  [ -n "$listed" ] || { say "$name is not listed in $SOURCES/SHA256SUMS"; exit 1; }
  [ "$listed" = "$sum" ] || { say "$name: SHA-256 $sum, but SHA256SUMS says $listed"; exit 1; }
fi

# The recipe: changing any of it makes a new cache entry (the old one stays until removed by hand).
CONFIGURE_ARGS=(
  --disable-static --disable-dependency-tracking --enable-multiple-slurmd
  --with-munge --with-json --with-yaml --with-jwt --with-http-parser --with-lz4
  --disable-x11 --disable-sview --disable-pam --disable-selinux
  --without-pmix --without-ucx --without-nvml --without-rsmi --without-oneapi --without-freeipmi --without-hdf5
  --without-lua --without-ofed --without-bpf --without-s2n --without-rdkafka --without-hwloc
  --without-hpe-slingshot --without-readline
)
# -g1: function names and line tables for a backtrace of a crashed daemon, at less compile time than -g.
CFLAGS_RECIPE="-O2 -g1 -fno-omit-frame-pointer"
recipe=$(printf '%s\n' "${CONFIGURE_ARGS[@]}" "CFLAGS=$CFLAGS_RECIPE" "make -C src" | sha256sum | cut -c1-8)
key="slurm-$version-${sum:0:16}-$recipe"
prefix="$CACHE/$key"

link_versions() {
  local short=${version%.*} l
  for l in "slurm-$version" "slurm-$short"; do
    # the link of the major.minor follows the newest patch release built
    if [ "$l" = "slurm-$short" ] && [ -e "$CACHE/$l/.version" ] &&
      [ "$(printf '%s\n%s\n' "$(cat "$CACHE/$l/.version")" "$version" | sort -V | tail -1)" != "$version" ]; then
      continue
    fi
    ln -sfn "$key" "$CACHE/$l.tmp" && mv -T "$CACHE/$l.tmp" "$CACHE/$l"
  done
}

if [ -f "$prefix/.complete" ]; then
  link_versions
  echo "$prefix"
  exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock-$key"
if ! flock -n 9; then
  say "another build of $key is running; waiting for it"
  flock 9
fi
if [ -f "$prefix/.complete" ]; then # built by the one we waited for
  link_versions
  echo "$prefix"
  exit 0
fi

for dep in gcc make mariadb_config; do
  command -v "$dep" >/dev/null || { say "$dep is missing: run scripts/install-deps.sh"; exit 1; }
done
work="$CACHE/.build-$key"
log="$CACHE/$key.log"
rm -rf "$work" "$prefix"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
say "building Slurm $version from $name into $prefix (log: $log)"
t0=$SECONDS
step() { # step WHAT COMMAND...: run COMMAND at low priority with its output in the log
  local what=$1
  shift
  if ! nice -n "$NICE" "$@" >>"$log" 2>&1; then
    say "$what failed; the last lines of $log:"
    tail -n 40 "$log" >&2
    rm -rf "$prefix"
    exit 1
  fi
}
: >"$log"
step tar tar -xzf "$tarball" -C "$work" --strip-components=1
cd "$work"
step configure ./configure --prefix="$prefix" --sysconfdir="$prefix/etc" "${CONFIGURE_ARGS[@]}" \
  CFLAGS="$CFLAGS_RECIPE"
t1=$SECONDS
# src/ only: the daemons, commands and plugins; not the test suite, the documentation or contribs/.
step make make -C src -j "$JOBS"
t2=$SECONDS
step install make -C src -j "$JOBS" install
rm -rf "$prefix/include" "$prefix/share"
# configure leaves out, without failing, what it does not find; the testbed needs these.
for f in sbin/slurmctld sbin/slurmd sbin/slurmdbd sbin/slurmrestd bin/sinfo lib/slurm/auth_munge.so \
  lib/slurm/auth_jwt.so lib/slurm/accounting_storage_mysql.so lib/slurm/rest_auth_local.so lib/slurm/rest_auth_jwt.so \
  lib/slurm/serializer_json.so lib/slurm/serializer_yaml.so; do
  [ -e "$prefix/$f" ] || { say "the build has no $f (see $log: a -dev package missing?)"; rm -rf "$prefix"; exit 1; }
done
echo "$version" >"$prefix/.version"
echo "$sum  $name" >"$prefix/.source"
touch "$prefix/.complete"
link_versions
say "built Slurm $version in $((SECONDS - t0)) s (configure $((t1 - t0)) s, make $((t2 - t1)) s, install $((SECONDS - t2)) s)"
echo "$prefix"
