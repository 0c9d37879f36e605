#!/usr/bin/env bash
# Starts and stops Debian's Alertmanager for the demo and by hand, by its pid file:
#   scripts/alertmanager.sh start DIR CONFIG [PORT]   # listens on 127.0.0.1:PORT (default 9093), state in DIR
#   scripts/alertmanager.sh stop DIR                  # SIGTERM to the pid in DIR/alertmanager.pid, then SIGKILL
#   scripts/alertmanager.sh alerts [PORT]             # the alerts it holds (GET /api/v2/alerts), as JSON
# Gossip is off (--cluster.listen-address=): a lone instance must not look for peers. The tests use
# tests/integration/alertmanager_process.h instead.
set -euo pipefail

am_binary() {
  for b in prometheus-alertmanager alertmanager; do
    if command -v "$b" >/dev/null 2>&1; then echo "$b"; return; fi
  done
  echo "alertmanager.sh: prometheus-alertmanager is not installed (scripts/install-deps.sh)" >&2
  exit 1
}

case "${1:-}" in
  start)
    dir="${2:?usage: alertmanager.sh start DIR CONFIG [PORT]}"
    config="${3:?usage: alertmanager.sh start DIR CONFIG [PORT]}"
    port="${4:-9093}"
    mkdir -p "$dir"
    if [ -f "$dir/alertmanager.pid" ] && kill -0 "$(cat "$dir/alertmanager.pid")" 2>/dev/null; then
      echo "alertmanager.sh: already running (pid $(cat "$dir/alertmanager.pid"))" >&2
      exit 0
    fi
    "$(am_binary)" --config.file="$config" --storage.path="$dir/data" \
      --web.listen-address="127.0.0.1:$port" --cluster.listen-address= >"$dir/alertmanager.log" 2>&1 &
    echo $! >"$dir/alertmanager.pid"
    for _ in $(seq 100); do
      if curl -fsS "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then exit 0; fi
      if ! kill -0 "$(cat "$dir/alertmanager.pid")" 2>/dev/null; then break; fi
      sleep 0.1
    done
    echo "alertmanager.sh: Alertmanager did not start; $dir/alertmanager.log:" >&2
    tail -20 "$dir/alertmanager.log" >&2
    exit 1
    ;;
  stop)
    dir="${2:?usage: alertmanager.sh stop DIR}"
    [ -f "$dir/alertmanager.pid" ] || exit 0
    pid="$(cat "$dir/alertmanager.pid")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/alertmanager.pid"
    ;;
  alerts)
    curl -fsS "http://127.0.0.1:${2:-9093}/api/v2/alerts"
    ;;
  *)
    echo "usage: alertmanager.sh start DIR CONFIG [PORT] | stop DIR | alerts [PORT]" >&2
    exit 2
    ;;
esac
