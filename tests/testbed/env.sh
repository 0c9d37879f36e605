# shellcheck shell=sh
# Source this file to talk to the local Slurm testbed:  . tests/testbed/env.sh
# It only sets variables (no side effects), so it is safe in an interactive shell and in test scripts.
#   GCM_TESTBED_DIR        the one directory that holds every piece of testbed state (default /tmp/gcm-testbed)
#   GCM_TESTBED_PORT_BASE  first of the TCP ports the testbed uses on 127.0.0.1 (default 16800; see lib.sh)
#   SLURM_CONF             what every Slurm client command needs to find the testbed's controller
#   GCM_TESTBED_REST_SOCKET  slurmrestd's unix socket (curl --unix-socket "$GCM_TESTBED_REST_SOCKET" http://x/...)
GCM_TESTBED_DIR="${GCM_TESTBED_DIR:-/tmp/gcm-testbed}"
GCM_TESTBED_PORT_BASE="${GCM_TESTBED_PORT_BASE:-16800}"
export GCM_TESTBED_DIR GCM_TESTBED_PORT_BASE
export SLURM_CONF="$GCM_TESTBED_DIR/etc/slurm.conf"
export GCM_TESTBED_REST_SOCKET="$GCM_TESTBED_DIR/rest/slurmrestd.sock"
# The daemons live in /usr/sbin, which a non-login shell of an ordinary user may not have on PATH.
case ":$PATH:" in *:/usr/sbin:*) ;; *) export PATH="$PATH:/usr/sbin" ;; esac
