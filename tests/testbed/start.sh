#!/usr/bin/env bash
# Starts a real Slurm cluster with accounting on this one machine:
#   munged, MariaDB, slurmdbd, slurmctld, slurmrestd and 8 slurmd (node1..node8, 2 fake GPUs each),
#   partitions gpu (node[1-6], default) and debug (node[6-8]), accounts, users and QOS.
# The Slurm is the system's (Debian 12's 22.05) unless GCM_TESTBED_SLURM names another (env.sh): a version is built
# from ../shared/slurm first when the cache lacks it (tests/testbed/build-slurm.sh; exit status 77 when the sources
# are absent), a prefix is used as it is. Where that Slurm has JWT (auth/jwt), slurmctld and slurmdbd accept tokens
# (`scontrol token`) and slurmrestd serves rest_auth/jwt on GCM_TESTBED_REST_URL besides its unix socket; from 25.11
# slurmctld also serves its OpenMetrics (MetricsType=metrics/openmetrics) on its port.
# Every file it writes is under $GCM_TESTBED_DIR (default /tmp/gcm-testbed); nothing depends on the hostname.
# Idempotent: when the testbed is already up it only says so. It returns once all 8 nodes are idle and sacctmgr
# answers, or fails after GCM_TESTBED_TIMEOUT seconds (default 60) with the log of the daemon that did not come up
# (the daemons that did come up are left running for inspection; stop.sh stops them).
# Needs root and the packages of scripts/install-deps.sh. Stop with stop.sh.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TIMEOUT=${GCM_TESTBED_TIMEOUT:-60}
t0=$(now_ms)
need_root
if [ -n "$GCM_TESTBED_SLURM" ]; then
  if [[ $GCM_TESTBED_SLURM != /* ]]; then
    rc=0
    "$TESTBED_SRC/build-slurm.sh" "$GCM_TESTBED_SLURM" >/dev/null || rc=$?
    if ((rc == 77)); then
      log "skipped: no Slurm $GCM_TESTBED_SLURM to run (see above)"
      exit 77
    fi
    ((rc == 0)) || die "building Slurm $GCM_TESTBED_SLURM failed (see above)"
  fi
  [ -x "$GCM_TESTBED_SLURM_PREFIX/sbin/slurmctld" ] ||
    die "GCM_TESTBED_SLURM=$GCM_TESTBED_SLURM: no $GCM_TESTBED_SLURM_PREFIX/sbin/slurmctld"
  [ "$(command -v slurmctld)" = "$GCM_TESTBED_SLURM_PREFIX/sbin/slurmctld" ] ||
    die "PATH leads to $(command -v slurmctld), not $GCM_TESTBED_SLURM_PREFIX/sbin/slurmctld"
fi
for b in munged mungekey mariadbd mariadb slurmdbd slurmctld slurmd slurmrestd sacctmgr sinfo; do
  command -v "$b" >/dev/null || die "$b is missing: run scripts/install-deps.sh"
done
SLURM_VERSION=$(slurm_version)
PLUGIN_DIR=$(slurm_plugin_dir) || die "no plugin directory (auth_munge.so) next to $(command -v slurmctld)"
HAVE_JWT=0
[ -e "$PLUGIN_DIR/auth_jwt.so" ] && [ -e "$PLUGIN_DIR/rest_auth_jwt.so" ] && HAVE_JWT=1
HAVE_METRICS=0
[ -e "$PLUGIN_DIR/metrics_openmetrics.so" ] && HAVE_METRICS=1

all_up() {
  local f c
  while read -r f c; do daemon_pid "$f" "$c" >/dev/null || return 1; done < <(daemon_table)
}
if all_up && sinfo -h >/dev/null 2>&1; then
  log "already running (state in $TB)"
  exit 0
fi

# A daemon that is not running needs its port free; say so plainly instead of leaving it to a bind error in a log.
listening=$(awk '$4 == "0A" { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
port_taken() { grep -qx "$(printf '%04X' "$1")" <<<"$listening"; }
check_port() { # check_port PIDFILE COMM PORT
  if ! daemon_pid "$1" "$2" >/dev/null && port_taken "$3"; then
    die "port $3 (for $2) is already in use: another testbed or service? Stop it or set GCM_TESTBED_PORT_BASE"
  fi
}
check_port "$TB_DB/mariadbd.pid" mariadbd "$PORT_MYSQL"
check_port "$TB_RUN/slurmdbd.pid" slurmdbd "$PORT_DBD"
check_port "$TB_RUN/slurmctld.pid" slurmctld "$PORT_CTLD"
((HAVE_JWT == 0)) || check_port "$TB_RUN/slurmrestd-jwt.pid" slurmrestd "$PORT_REST"
for ((i = 1; i <= NODE_COUNT; i++)); do
  check_port "$TB_RUN/slurmd-node$i.pid" slurmd $((PORT_SLURMD_FIRST + i - 1))
done

# --- users, directories, fake GPUs -----------------------------------------------------------------------------
for u in "${TB_USERS[@]}"; do
  id -u "$u" >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$u"
done
install -d -m 755 "$TB" "$TB_ETC" "$TB_RUN" "$TB_DEV" "$TB_SPOOL"
# The Slurm daemons chdir to their log directory and want to write there (core files) as SlurmUser.
install -d -m 1775 -g slurm "$TB_LOG"
install -d -m 755 -o nobody "$TB_REST"
install -d -m 700 -o slurm -g slurm "$TB_CTLD"
install -d -m 755 -o munge -g munge "$TB_MUNGE" # munged insists the socket's directory is searchable by all
install -d -m 750 -o mysql -g mysql "$TB_DB"
install -d -m 1777 "$TB_JOBS"
for n in "${NODES[@]}"; do install -d -m 755 "$TB_SPOOL/$n"; done
# Daemons that drop privileges early append to a log file they own.
for f in munged:munge mariadb:mysql slurmctld:slurm slurmdbd:slurm; do
  [ -e "$TB_LOG/${f%%:*}.log" ] || install -m 640 -o "${f#*:}" /dev/null "$TB_LOG/${f%%:*}.log"
done
AS_MUNGE=(--reuid=munge --regid=munge --clear-groups)
# slurmd only checks that the device files exist; c 1 3 is the same device as /dev/null.
for g in 0 1; do [ -c "$TB_DEV/nvidia$g" ] || mknod -m 666 "$TB_DEV/nvidia$g" c 1 3; done

# --- configuration (rewritten every time; identical content when nothing changed) -------------------------------
AUTHINFO="socket=$TB_MUNGE/munge.socket"
# JWT beside munge: slurmctld and slurmdbd take a token from `scontrol token` (and slurmrestd's rest_auth/jwt).
JWT_KEY="$TB_ETC/jwt_hs256.key"
JWT_CONF=""
if ((HAVE_JWT)); then
  if [ ! -s "$JWT_KEY" ]; then
    (umask 077 && head -c 32 /dev/urandom >"$JWT_KEY.tmp") && mv "$JWT_KEY.tmp" "$JWT_KEY"
  fi
  chown slurm:slurm "$JWT_KEY"
  chmod 600 "$JWT_KEY"
  JWT_CONF="AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$JWT_KEY"
fi
METRICS_CONF=""
# Slurm 25.11's own metrics over HTTP on slurmctld's port: /metrics/jobs, /metrics/nodes, /metrics/partitions, ...
((HAVE_METRICS == 0)) || METRICS_CONF="MetricsType=metrics/openmetrics"
cat >"$TB_ETC/slurm.conf" <<EOF
# Generated by tests/testbed/start.sh: a local Slurm $SLURM_VERSION test cluster. Edits are overwritten.
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmctldPort=$PORT_CTLD
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
AuthInfo=$AUTHINFO
CredType=cred/munge
$JWT_CONF
$METRICS_CONF
StateSaveLocation=$TB_CTLD
SlurmdSpoolDir=$TB_SPOOL/%n
SlurmctldPidFile=$TB_RUN/slurmctld.pid
SlurmdPidFile=$TB_RUN/slurmd-%n.pid
SlurmctldLogFile=$TB_LOG/slurmctld.log
SlurmdLogFile=$TB_LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$PORT_DBD
# With auth/munge this names the munge socket for talking to slurmdbd (AuthInfo is not used for that).
AccountingStoragePass=$TB_MUNGE/munge.socket
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations,limits,qos
JobCompType=jobcomp/none
MailProg=/bin/true
SchedulerType=sched/backfill
# React within seconds instead of a minute, so the workload and the tests settle quickly.
SchedulerParameters=bf_interval=5,sched_interval=10
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# A two-level switch tree (topology.conf below), so scontrol show topo has something to print for gcm
# scontrol_topology; Slurm 22.05 has no topology/block.
TopologyPlugin=topology/tree
PriorityType=priority/multifactor
PriorityWeightQOS=1000
PriorityWeightAge=100
# A partition factor too, the same for every job, so gcm sprio sees a non-zero PARTITION_PRIO without changing the
# order of the workload's jobs. A fair-share weight would: workload.sh relies on submission order (sshare reports
# the fair-share factors without one).
PriorityWeightPartition=100
DefMemPerCPU=500
MpiDefault=none
ReturnToService=1
KillWait=2
MinJobAge=300
GresTypes=gpu
NodeName=DEFAULT CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000
NodeName=DEFAULT Gres=gpu:fake:2 State=UNKNOWN
EOF
for ((i = 1; i <= NODE_COUNT; i++)); do
  echo "NodeName=node$i NodeAddr=127.0.0.1 Port=$((PORT_SLURMD_FIRST + i - 1))" >>"$TB_ETC/slurm.conf"
done
cat >>"$TB_ETC/slurm.conf" <<EOF
PartitionName=gpu Nodes=node[1-6] Default=YES MaxTime=INFINITE State=UP TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=4.0
PartitionName=debug Nodes=node[6-8] MaxTime=01:00:00 DefaultTime=00:10:00 MaxNodes=2 PriorityTier=2 State=UP
# Prolog=, Epilog=, HealthCheckProgram= (none by default). Tests rewrite hooks.conf and run scontrol reconfigure.
Include $TB_ETC/hooks.conf
EOF
{
  echo "# Generated by tests/testbed/start.sh from GCM_TESTBED_PROLOG, _EPILOG, _HEALTHCHECK (+ _HEALTHCHECK_INTERVAL)."
  [ -z "${GCM_TESTBED_PROLOG:-}" ] || echo "Prolog=$GCM_TESTBED_PROLOG"
  [ -z "${GCM_TESTBED_EPILOG:-}" ] || echo "Epilog=$GCM_TESTBED_EPILOG"
  if [ -n "${GCM_TESTBED_HEALTHCHECK:-}" ]; then
    echo "HealthCheckProgram=$GCM_TESTBED_HEALTHCHECK"
    echo "HealthCheckInterval=${GCM_TESTBED_HEALTHCHECK_INTERVAL:-10}"
    echo "HealthCheckNodeState=ANY"
  fi
} >"$TB_ETC/hooks.conf"

cat >"$TB_ETC/topology.conf" <<EOF
# Generated by tests/testbed/start.sh: two leaf switches of four nodes under one spine.
SwitchName=leaf1 Nodes=node[1-4] LinkSpeed=100
SwitchName=leaf2 Nodes=node[5-$NODE_COUNT] LinkSpeed=100
SwitchName=spine Switches=leaf[1-2] LinkSpeed=200
EOF

cat >"$TB_ETC/gres.conf" <<EOF
# Generated by tests/testbed/start.sh. Without File= a gpu GRES is dropped and the node drained.
AutoDetect=off
NodeName=node[1-$NODE_COUNT] Name=gpu Type=fake File=$TB_DEV/nvidia[0-1]
EOF

# slurmdbd reads slurmdbd.conf next to SLURM_CONF and wants it private to SlurmUser.
umask 077
cat >"$TB_ETC/slurmdbd.conf" <<EOF
# Generated by tests/testbed/start.sh.
AuthType=auth/munge
AuthInfo=$AUTHINFO
$JWT_CONF
DbdHost=localhost
DbdPort=$PORT_DBD
SlurmUser=slurm
LogFile=$TB_LOG/slurmdbd.log
PidFile=$TB_RUN/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$PORT_MYSQL
StorageUser=slurm
StoragePass=testbed
StorageLoc=slurm_acct_db
EOF
umask 022
chown slurm:slurm "$TB_ETC/slurmdbd.conf"

cat >"$TB_ETC/my.cnf" <<EOF
# Generated by tests/testbed/start.sh: a private MariaDB for slurmdbd (never the system one).
[mysqld]
datadir=$TB_DB/data
socket=$TB_DB/mysqld.sock
pid-file=$TB_DB/mariadbd.pid
log-error=$TB_LOG/mariadb.log
port=$PORT_MYSQL
bind-address=127.0.0.1
skip-name-resolve
skip-log-bin
# slurmdbd logs "Database settings not recommended values: innodb_buffer_pool_size" below its production advice
# (gigabytes); 64M is plenty for a test cluster.
innodb_buffer_pool_size=64M
innodb_log_file_size=64M
innodb_lock_wait_timeout=900
innodb_flush_log_at_trx_commit=2
innodb_doublewrite=0
[client]
socket=$TB_DB/mysqld.sock
EOF

# start_daemon NAME COMMAND...: run a daemon with its stdio on its own log (so no caller's pipe is held open) and
# with the testbed mark in its environment. Daemons that fork write their own pid file.
start_daemon() {
  local name=$1
  shift
  env "$DAEMON_MARK" setsid "$@" </dev/null >>"$TB_LOG/$name.stdio" 2>&1
}

# --- munge ---------------------------------------------------------------------------------------------------
munge_ok() { munge -n -S "$TB_MUNGE/munge.socket" | unmunge -S "$TB_MUNGE/munge.socket"; }
if ! daemon_pid "$TB_MUNGE/munged.pid" munged >/dev/null; then
  [ -s "$TB_MUNGE/munge.key" ] || setpriv "${AS_MUNGE[@]}" mungekey --create --keyfile="$TB_MUNGE/munge.key"
  start_daemon munged setpriv "${AS_MUNGE[@]}" munged --key-file="$TB_MUNGE/munge.key" \
    --socket="$TB_MUNGE/munge.socket" --pid-file="$TB_MUNGE/munged.pid" --log-file="$TB_LOG/munged.log" \
    --seed-file="$TB_MUNGE/munged.seed" || die "munged did not start" "$TB_LOG/munged.log" "$TB_LOG/munged.stdio"
fi
wait_daemon "$TIMEOUT" "$TB_MUNGE/munged.pid" munged munge_ok ||
  die "munged does not answer on $TB_MUNGE/munge.socket" "$TB_LOG/munged.log"

# --- MariaDB -------------------------------------------------------------------------------------------------
# init_db: create the data directory the way mariadb-install-db does, minus the 3 MB of help tables and the sys
# schema that slurmdbd never uses (that saves 2-4 s of the first start). mariadb-install-db is the fallback.
init_db() {
  local share=/usr/share/mysql f sql=()
  log "creating the MariaDB data directory (first start only)"
  rm -rf "$TB_DB/data"
  for f in mysql_system_tables.sql mysql_performance_tables.sql mysql_system_tables_data.sql \
    maria_add_gis_sp_bootstrap.sql; do
    sql+=("$share/$f")
  done
  if ls "${sql[@]}" >/dev/null 2>&1; then
    install -d -m 700 -o mysql -g mysql "$TB_DB/data"
    # --bootstrap reads one statement per line; root may log in over the socket as the OS user root.
    {
      printf '%s\n' "CREATE DATABASE IF NOT EXISTS mysql;" "USE mysql;" "SET @auth_root_socket='root';"
      cat "${sql[@]}" | sed '/@current_hostname/d' # as --cross-bootstrap: no rows naming this host
    } |
      mariadbd --defaults-file="$TB_ETC/my.cnf" --user=mysql --bootstrap --log-warnings=0 \
        >"$TB_LOG/mariadb-bootstrap.log" 2>&1 || die "creating the MariaDB system tables failed" "$TB_LOG/mariadb.log"
  else
    mariadb-install-db --defaults-file="$TB_ETC/my.cnf" --user=mysql --auth-root-authentication-method=socket \
      --skip-test-db --skip-name-resolve >"$TB_LOG/mariadb-bootstrap.log" 2>&1 ||
      die "mariadb-install-db failed" "$TB_LOG/mariadb-bootstrap.log" "$TB_LOG/mariadb.log"
  fi
  touch "$TB_DB/initialized"
}
SQL=(mariadb --defaults-file="$TB_ETC/my.cnf" -u root)
if ! daemon_pid "$TB_DB/mariadbd.pid" mariadbd >/dev/null; then
  [ -e "$TB_DB/initialized" ] || init_db
  # mariadbd does not fork; setsid detaches it and it writes its own pid file.
  env "$DAEMON_MARK" setsid mariadbd --defaults-file="$TB_ETC/my.cnf" --user=mysql \
    </dev/null >>"$TB_LOG/mariadb.stdio" 2>&1 &
fi
wait_daemon "$TIMEOUT" "$TB_DB/mariadbd.pid" mariadbd "${SQL[@]}" -e "SELECT 1" ||
  die "MariaDB did not come up" "$TB_LOG/mariadb.log" "$TB_LOG/mariadb.stdio"
"${SQL[@]}" -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'testbed';
  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || die "could not create the slurm database user"

# --- slurmdbd and the accounting data -------------------------------------------------------------------------
if ! daemon_pid "$TB_RUN/slurmdbd.pid" slurmdbd >/dev/null; then
  start_daemon slurmdbd slurmdbd || die "slurmdbd did not start" "$TB_LOG/slurmdbd.log" "$TB_LOG/slurmdbd.stdio"
fi
wait_daemon "$TIMEOUT" "$TB_RUN/slurmdbd.pid" slurmdbd sacctmgr -n show cluster ||
  die "slurmdbd does not answer sacctmgr" "$TB_LOG/slurmdbd.log" "$TB_LOG/slurmdbd.stdio"

# QOS first (the associations name them), then the cluster with its accounts and users from one load file: one
# sacctmgr call instead of one per entity saves seconds on the first start.
acct() { sacctmgr -i "$@" >>"$TB_LOG/sacctmgr.log" 2>&1 || die "sacctmgr $* failed" "$TB_LOG/sacctmgr.log"; }
have_qos=$(sacctmgr -nP show qos format=name)
grep -qx high <<<"$have_qos" || acct add qos high Priority=100 Description="urgent work"
grep -qx limited <<<"$have_qos" ||
  acct add qos limited Priority=0 MaxJobsPerUser=1 MaxWall=02:00:00 Description="one running job per user"
have_cluster=$(sacctmgr -nP show cluster format=cluster | grep -cx "$CLUSTER" || true)
have_users=$(sacctmgr -nP show user format=user | grep -cxE 'alice|bob|carol' || true)
if [ "$have_cluster" != 1 ] || [ "$have_users" != 3 ]; then
  [ "$have_cluster" = 0 ] || acct delete cluster "$CLUSTER" # an interrupted first start: load it again
  cat >"$TB_ETC/associations.cfg" <<EOF
Cluster - '$CLUSTER'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator'
Account - 'research':Description='research groups':Organization='research'
Account - 'infra':Description='cluster operations':Organization='ops'
Parent - 'research'
Account - 'ml':Description='machine learning':Organization='research'
User - 'alice':DefaultAccount='research':QOS='normal,high,limited':DefaultQOS='normal'
Parent - 'ml'
User - 'alice':QOS='normal,high,limited':DefaultQOS='normal'
User - 'bob':DefaultAccount='ml':QOS='normal,limited':DefaultQOS='normal'
Parent - 'infra'
User - 'carol':DefaultAccount='infra':QOS='normal,limited':DefaultQOS='limited'
EOF
  acct load file="$TB_ETC/associations.cfg"
fi

# --- slurmctld, slurmd, slurmrestd -----------------------------------------------------------------------------
fresh_ctld=0
if ! daemon_pid "$TB_RUN/slurmctld.pid" slurmctld >/dev/null; then
  # -c: start from a clean slate (no jobs, no node states from a previous run).
  start_daemon slurmctld slurmctld -c -f "$SLURM_CONF" ||
    die "slurmctld did not start" "$TB_LOG/slurmctld.log" "$TB_LOG/slurmctld.stdio"
  fresh_ctld=1
fi
# The eight slurmd start side by side (each takes a few tenths of a second to initialise before it forks).
starting=()
for n in "${NODES[@]}"; do
  if ! daemon_pid "$TB_RUN/slurmd-$n.pid" slurmd >/dev/null; then
    start_daemon "slurmd-$n" slurmd -f "$SLURM_CONF" -N "$n" &
    starting+=("$!:$n")
  fi
done
for s in "${starting[@]}"; do
  n=${s#*:}
  wait "${s%%:*}" || die "slurmd for $n did not start" "$TB_LOG/slurmd-$n.log" "$TB_LOG/slurmd-$n.stdio"
done
# slurmrestd refuses to run as root or SlurmUser. As nobody with local auth it serves the unix socket; where Slurm has
# JWT a second one serves 127.0.0.1:PORT_REST with rest_auth/jwt (a token and X-SLURM-USER-NAME in each request). One
# process cannot do both: rest_auth/jwt needs SLURM_JWT=daemon (without it slurmrestd rejects every token, "Rejecting
# thread config token"), and with it slurmrestd talks to slurmctld and slurmdbd by JWT only, so that local requests
# carry no credential.
# start_rest PIDFILE ENV... -- ARGS...: setpriv execs (runuser would fork), so $! is slurmrestd's own pid.
start_rest() {
  local pidfile=$1 env=()
  shift
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  daemon_pid "$pidfile" slurmrestd >/dev/null && return 0
  env "$DAEMON_MARK" "${env[@]}" setsid setpriv --reuid=nobody --regid=nogroup --clear-groups \
    slurmrestd "$@" </dev/null >>"$TB_LOG/$(basename "$pidfile" .pid).log" 2>&1 &
  echo $! >"$pidfile"
}
daemon_pid "$TB_RUN/slurmrestd.pid" slurmrestd >/dev/null || rm -f "$GCM_TESTBED_REST_SOCKET"
start_rest "$TB_RUN/slurmrestd.pid" -- -a rest_auth/local "unix:$GCM_TESTBED_REST_SOCKET"
((HAVE_JWT == 0)) ||
  start_rest "$TB_RUN/slurmrestd-jwt.pid" SLURM_JWT=daemon -- -a rest_auth/jwt "127.0.0.1:$PORT_REST"

# --- ready? ----------------------------------------------------------------------------------------------------
# After a fresh slurmctld every node must be idle; when only some daemons were restarted the nodes may be busy
# with jobs, so then it is enough that every node responds.
nodes_ready() {
  local states
  states=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  [ "$(wc -l <<<"$states")" = "$NODE_COUNT" ] || return 1
  if ((fresh_ctld)); then
    if grep -qv ' idle$' <<<"$states"; then return 1; fi
  else
    # a state flag suffix (* = not responding, ~ = powered off, ...) or unknown means not ready
    if grep -qE '[*~#!%$@^-]$|unk' <<<"$states"; then return 1; fi
  fi
}
if ! wait_daemon "$TIMEOUT" "$TB_RUN/slurmctld.pid" slurmctld nodes_ready; then
  bad=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | grep -v ' idle$' | cut -d' ' -f1 | head -2 || true)
  logs=("$TB_LOG/slurmctld.log")
  for n in $bad; do logs+=("$TB_LOG/slurmd-$n.log"); done
  echo "node states:" >&2
  sinfo -N -o '%N %t %E' >&2 || true
  die "not every node became ready within ${TIMEOUT}s" "${logs[@]}"
fi
wait_until "$TIMEOUT" sacctmgr -n show user alice || die "sacctmgr does not list the users" "$TB_LOG/slurmdbd.log"
# No job runs under `capped`: it sets every limit sacctmgr prints, so that the REST back end's QOS records are compared
# with sacctmgr's on every column (tests/integration/slurm_rest_backend_test.cc). It is added once slurmctld has
# registered: slurmdbd knows the TRES gres/gpu only from slurmctld's AccountingStorageTRES, so on a fresh database
# an earlier `add qos` fails with "no TRES known by type gres/gpu".
gpu_tres_known() { sacctmgr -nP show tres format=type,name | grep -qx 'gres|gpu'; }
# The limits are set on every start, so a testbed whose database was made by an older start.sh (or another Slurm
# version sharing nothing but the recipe) gets the same QOS: `add` only creates it, `modify` sets every limit.
# MaxTRESRunMinsPA/PU are sacctmgr options from Slurm 23.02 on (22.05's sacctmgr refuses them).
capped_limits=(Priority=10 GraceTime=120 Preempt=normal,limited PreemptMode=requeue PreemptExemptTime=00:05:00
  Flags=DenyOnLimit,NoReserve UsageFactor=2 UsageThreshold=0.5 GrpTRES=cpu=64,mem=64G,gres/gpu=16
  GrpTRESMins=cpu=100000 GrpTRESRunMins=cpu=50000 GrpJobs=20 GrpSubmitJobs=40 GrpWall=7-00:00:00
  MaxTRESPerJob=cpu=16,mem=1536M,gres/gpu=4 MaxTRESPerNode=gres/gpu=4 MaxTRESMinsPerJob=cpu=6000
  MaxWallDurationPerJob=1-00:00:00 MaxTRESPerUser=gres/gpu=8 MaxJobsPerUser=4 MaxSubmitJobsPerUser=8
  MaxTRESPerAccount=gres/gpu=12 MaxJobsPerAccount=6 MaxSubmitJobsPerAccount=12 MinTRESPerJob=cpu=1
  Description="every limit set")
version_at_least 23.02.0 "$SLURM_VERSION" && capped_limits+=(MaxTRESRunMinsPA=cpu=40000 MaxTRESRunMinsPU=cpu=30000)
wait_until "$TIMEOUT" gpu_tres_known || die "slurmdbd does not know the TRES gres/gpu" "$TB_LOG/slurmdbd.log"
grep -qx capped <<<"$(sacctmgr -nP show qos format=name)" || acct add qos capped "${capped_limits[@]}"
# sacctmgr modify exits 1 with "Nothing modified" when every limit already has its value: that is success here.
sacctmgr -i modify qos where name=capped set "${capped_limits[@]}" >>"$TB_LOG/sacctmgr.log" 2>&1 ||
  grep -q "Nothing modified" <(tail -n 3 "$TB_LOG/sacctmgr.log") ||
  die "sacctmgr modify qos capped failed" "$TB_LOG/sacctmgr.log"
wait_until 5 test -S "$GCM_TESTBED_REST_SOCKET" || die "slurmrestd did not create its socket" "$TB_LOG/slurmrestd.log"
daemon_pid "$TB_RUN/slurmrestd.pid" slurmrestd >/dev/null || die "slurmrestd exited" "$TB_LOG/slurmrestd.log"
if ((HAVE_JWT)); then
  rest_jwt_up() { curl -s -o /dev/null --max-time 2 "$GCM_TESTBED_REST_URL/"; }
  wait_daemon 10 "$TB_RUN/slurmrestd-jwt.pid" slurmrestd rest_jwt_up ||
    die "slurmrestd (JWT) does not listen on $GCM_TESTBED_REST_URL" "$TB_LOG/slurmrestd-jwt.log"
fi

log "up in $(since "$t0"): Slurm $SLURM_VERSION, ${#NODES[@]} nodes idle; state in $TB; . tests/testbed/env.sh to use it"
