# Shared by start.sh, stop.sh, workload.sh, record-fixtures.sh and selftest.sh. Users source env.sh instead.
# shellcheck shell=bash disable=SC2034  # the variables are used by the scripts that source this file

TESTBED_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$TESTBED_SRC/env.sh"

TB="$GCM_TESTBED_DIR"
TB_ETC="$TB/etc"           # slurm.conf, slurmdbd.conf, gres.conf, my.cnf
TB_RUN="$TB/run"           # pid files and sockets
TB_LOG="$TB/log"           # one log per daemon
TB_MUNGE="$TB/munge"       # munge key, socket, seed
TB_DB="$TB/mysql"          # MariaDB: data/, socket, pid file
TB_CTLD="$TB/slurmctld"    # StateSaveLocation
TB_SPOOL="$TB/spool"       # one SlurmdSpoolDir per node
TB_DEV="$TB/dev"           # fake GPU character devices
TB_JOBS="$TB/jobs"         # job scripts' working directory and output files
TB_REST="$TB/rest"         # slurmrestd's socket (it runs as nobody)

# Ports on 127.0.0.1, all derived from one base so two testbeds can coexist on different bases.
PORT_MYSQL=$((GCM_TESTBED_PORT_BASE + 6))
PORT_CTLD=$((GCM_TESTBED_PORT_BASE + 17))
PORT_DBD=$((GCM_TESTBED_PORT_BASE + 19))
PORT_REST=$((GCM_TESTBED_PORT_BASE + 20)) # slurmrestd with rest_auth/jwt (GCM_TESTBED_REST_URL), where Slurm has JWT
PORT_SLURMD_FIRST=$((GCM_TESTBED_PORT_BASE + 41)) # node1; nodeN uses FIRST+N-1

CLUSTER=testbed
NODE_COUNT=8
NODES=()
for ((i = 1; i <= NODE_COUNT; i++)); do NODES+=("node$i"); done
TB_USERS=(alice bob carol) # local Unix users that submit jobs (created by start.sh when missing)

# Every daemon is started with this variable in its environment, so stop.sh can find a stray process of this
# testbed (and only of this one) even when its pid file is gone.
DAEMON_MARK="GCM_TESTBED_DAEMON=$TB"

log() { printf 'testbed: %s\n' "$*" >&2; }

die() {
  printf 'testbed: ERROR: %s\n' "$1" >&2
  shift
  local f
  for f in "$@"; do
    if [ -s "$f" ]; then
      printf -- '--- last lines of %s ---\n' "$f" >&2
      tail -n 25 "$f" >&2
    fi
  done
  exit 1
}

need_root() {
  [ "$(id -u)" = 0 ] ||
    die "run as root (the testbed creates users and devices, and starts daemons as slurm, munge and mysql)"
}

# alive PID: the process exists and is not a zombie (an exited daemon stays a zombie until init reaps it, which on
# some machines takes seconds).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# daemon_pid PIDFILE COMM: print the pid recorded in PIDFILE when that process is alive and is the expected
# program (its /proc comm is COMM), so a pid reused by an unrelated process is never taken for the daemon.
# Only the first line is the pid: a slurmctld that restarted itself on `scontrol reconfigure` (Slurm 23.11 and
# later) writes its new pid over the old one from offset 0 without truncating (update_pidfile, src/common/
# daemonize.c), so when the new pid is shorter, once pids have wrapped at pid_max (32768 here), the old pid's tail
# stays on a second line: "873\n6\n" after 29476.
daemon_pid() {
  local file=$1 comm=$2 pid
  [ -s "$file" ] || return 1
  pid=$(head -n 1 "$file" | tr -dc '0-9')
  [ -n "$pid" ] && alive "$pid" || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
  printf '%s\n' "$pid"
}

# The daemons of the testbed as "pidfile comm" pairs, in start order.
daemon_table() {
  echo "$TB_MUNGE/munged.pid munged"
  echo "$TB_DB/mariadbd.pid mariadbd"
  echo "$TB_RUN/slurmdbd.pid slurmdbd"
  echo "$TB_RUN/slurmctld.pid slurmctld"
  local n
  for n in "${NODES[@]}"; do echo "$TB_RUN/slurmd-$n.pid slurmd"; done
  echo "$TB_RUN/slurmrestd.pid slurmrestd"
  # the second slurmrestd, for JWTs, where the Slurm has JWT (start.sh then writes the key)
  [ ! -e "$TB_ETC/jwt_hs256.key" ] || echo "$TB_RUN/slurmrestd-jwt.pid slurmrestd"
}

# wait_until SECONDS COMMAND...: poll COMMAND every 0.1 s until it succeeds; fail after SECONDS.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  while ! "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# wait_daemon SECONDS PIDFILE COMM COMMAND...: like wait_until, but gives up early when the daemon has exited
# (after a short grace for a forking daemon to write its pid file).
wait_daemon() {
  local deadline=$((SECONDS + $1)) grace=$((SECONDS + 3)) file=$2 comm=$3
  shift 3
  while ! "$@" >/dev/null 2>&1; do
    if ((SECONDS >= grace)) && ! daemon_pid "$file" "$comm" >/dev/null; then return 1; fi
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# testbed_processes: pids of processes that belong to this testbed: its daemons and their slurmstepd (they carry
# DAEMON_MARK) and job processes (a SLURM_JOB_ID and this testbed's SLURM_CONF), except this shell's ancestors.
testbed_processes() {
  local e p mine=" " pid=$$
  while [ "$pid" -gt 1 ] 2>/dev/null; do
    mine+="$pid "
    pid=$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
  done
  for e in $(grep -lzxF -e "$DAEMON_MARK" -e "SLURM_CONF=$SLURM_CONF" /proc/[0-9]*/environ 2>/dev/null || true); do
    p=${e#/proc/}
    p=${p%/environ}
    [[ $mine != *" $p "* ]] || continue
    if grep -qzxF -- "$DAEMON_MARK" "$e" 2>/dev/null || grep -qz '^SLURM_JOB_ID=' "$e" 2>/dev/null; then echo "$p"; fi
  done
}

# slurm_version: the version of the Slurm on PATH ("22.05.8", "25.11.7").
slurm_version() { slurmctld -V | awk '{ print $2 }'; }
# version_at_least WANT HAVE: HAVE (x.y.z) is WANT or newer.
version_at_least() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]; }
# slurm_plugin_dir: where the Slurm on PATH keeps its plugins (the build's lib/slurm, Debian's slurm-wlm).
slurm_plugin_dir() {
  local top d
  top=$(dirname "$(dirname "$(command -v slurmctld)")")
  for d in "$top"/lib/slurm "$top"/lib64/slurm "$top"/lib/*-linux-gnu/slurm-wlm "$top"/lib/*-linux-gnu/slurm; do
    if [ -e "$d/auth_munge.so" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

# no_jobs: slurmctld lists no job that is pending, running or completing.
no_jobs() { [ -z "$(squeue -h -o %A 2>/dev/null || echo unknown)" ]; }

# Monotonic milliseconds, and the time since such a reading as "1.234 s", for reporting durations.
now_ms() { local up; read -r up _ </proc/uptime; echo $((${up/./} * 10)); }
since() { local ms=$(($(now_ms) - $1)); printf '%d.%03d s' $((ms / 1000)) $((ms % 1000)); }
