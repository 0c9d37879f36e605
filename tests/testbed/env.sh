# shellcheck shell=sh
# Source this file to talk to the local Slurm testbed:  . tests/testbed/env.sh
# It only sets variables (no side effects), so it is safe in an interactive shell and in test scripts.
#   GCM_TESTBED_SLURM      which Slurm the testbed runs: empty (the default) for the system's, Debian 12's 22.05 in
#                          /usr; a version, 24.11 or 25.11 (or 24.11.7, 25.11.7), for the build of
#                          tests/testbed/build-slurm.sh in $GCM_SLURM_CACHE (default /var/cache/gcm-slurm); or the
#                          absolute prefix of a Slurm installation (a directory with bin/ and sbin/: a site's own)
#   GCM_TESTBED_DIR        the one directory that holds every piece of testbed state (default /tmp/gcm-testbed, and
#                          /tmp/gcm-testbed-<version> for another Slurm, so two testbeds can run side by side)
#   GCM_TESTBED_PORT_BASE  first of the TCP ports the testbed uses on 127.0.0.1 (see lib.sh; default 16800 for the
#                          system's Slurm, 17600 for 24.11, 17800 for 25.11, 18000 for a prefix)
#   SLURM_CONF             what every Slurm client command needs to find the testbed's controller
#   GCM_TESTBED_REST_SOCKET  slurmrestd's unix socket (curl --unix-socket "$GCM_TESTBED_REST_SOCKET" http://x/...)
#   GCM_TESTBED_REST_URL   slurmrestd on TCP, where it takes JWTs (rest_auth/jwt; a token from `scontrol token`)
#   GCM_TESTBED_SLURM_PREFIX  the prefix of GCM_TESTBED_SLURM ("" for the system's), whose bin/ and sbin/ lead PATH
GCM_TESTBED_SLURM="${GCM_TESTBED_SLURM:-}"
case $GCM_TESTBED_SLURM in
  "")
    GCM_TESTBED_SLURM_PREFIX=""
    _gcm_tb_dir=/tmp/gcm-testbed _gcm_tb_base=16800 ;;
  /*)
    GCM_TESTBED_SLURM_PREFIX="$GCM_TESTBED_SLURM"
    _gcm_tb_dir=/tmp/gcm-testbed-$(basename "$GCM_TESTBED_SLURM") _gcm_tb_base=18000 ;;
  *)
    GCM_TESTBED_SLURM_PREFIX="${GCM_SLURM_CACHE:-/var/cache/gcm-slurm}/slurm-$GCM_TESTBED_SLURM"
    _gcm_tb_dir=/tmp/gcm-testbed-$GCM_TESTBED_SLURM
    case $GCM_TESTBED_SLURM in
      24.11 | 24.11.*) _gcm_tb_base=17600 ;;
      25.11 | 25.11.*) _gcm_tb_base=17800 ;;
      *) _gcm_tb_base=18000 ;;
    esac ;;
esac
GCM_TESTBED_DIR="${GCM_TESTBED_DIR:-$_gcm_tb_dir}"
GCM_TESTBED_PORT_BASE="${GCM_TESTBED_PORT_BASE:-$_gcm_tb_base}"
unset _gcm_tb_dir _gcm_tb_base
export GCM_TESTBED_SLURM GCM_TESTBED_SLURM_PREFIX GCM_TESTBED_DIR GCM_TESTBED_PORT_BASE
export SLURM_CONF="$GCM_TESTBED_DIR/etc/slurm.conf"
export GCM_TESTBED_REST_SOCKET="$GCM_TESTBED_DIR/rest/slurmrestd.sock"
export GCM_TESTBED_REST_URL="http://127.0.0.1:$((GCM_TESTBED_PORT_BASE + 20))"
if [ -n "$GCM_TESTBED_SLURM_PREFIX" ]; then
  case ":$PATH:" in
    *":$GCM_TESTBED_SLURM_PREFIX/bin:$GCM_TESTBED_SLURM_PREFIX/sbin:"*) ;;
    *) export PATH="$GCM_TESTBED_SLURM_PREFIX/bin:$GCM_TESTBED_SLURM_PREFIX/sbin:$PATH" ;;
  esac
fi
# The daemons live in /usr/sbin, which a non-login shell of an ordinary user may not have on PATH.
case ":$PATH:" in *:/usr/sbin:*) ;; *) export PATH="$PATH:/usr/sbin" ;; esac
