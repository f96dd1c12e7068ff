#!/usr/bin/env bash
# Starts the services the tests of index/ and server/ use: a standalone Redis
# on 127.0.0.1:6379 and a 3-node Redis cluster (no replicas) on 127.0.0.1
# ports 7001-7003, installing redis-server with apt-get if it is missing.
# Idempotent: servers that already answer are left alone. Loopback only, no
# persistence (the tests make their own keys under random prefixes).
#
#   .ci/services.sh            # start (or check) everything
#   .ci/services.sh stop       # stop what this script started
#
# Environment: NEARDUP_REDIS_PORT (6379), NEARDUP_REDIS_CLUSTER_PORTS
# ("7001 7002 7003"), NEARDUP_REDIS_DIR (/tmp/neardup-redis).
set -euo pipefail

port="${NEARDUP_REDIS_PORT:-6379}"
cluster_ports="${NEARDUP_REDIS_CLUSTER_PORTS:-7001 7002 7003}"
dir="${NEARDUP_REDIS_DIR:-/tmp/neardup-redis}"

answers() { redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null | grep -q PONG; }

start() { # port [extra args...]
  local p="$1"; shift
  mkdir -p "$dir/$p"
  redis-server --bind 127.0.0.1 --port "$p" --dir "$dir/$p" --daemonize yes \
    --pidfile "$dir/$p/redis.pid" --logfile "$dir/$p/redis.log" \
    --save '' --appendonly no --protected-mode yes "$@"
  for _ in $(seq 50); do answers "$p" && return 0; sleep 0.1; done
  echo "redis-server on port $p did not start; see $dir/$p/redis.log" >&2
  return 1
}

if [ "${1:-}" = stop ]; then
  for p in $port $cluster_ports; do
    if [ -f "$dir/$p/redis.pid" ]; then
      kill "$(cat "$dir/$p/redis.pid")" 2>/dev/null || true
      rm -f "$dir/$p/redis.pid"
    fi
  done
  exit 0
fi

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "== installing redis-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
fi

if answers "$port"; then
  echo "== redis standalone already on 127.0.0.1:$port"
else
  echo "== starting redis standalone on 127.0.0.1:$port"
  start "$port"
fi

nodes=()
for p in $cluster_ports; do
  nodes+=("127.0.0.1:$p")
  if ! answers "$p"; then
    echo "== starting redis cluster node on 127.0.0.1:$p"
    # A nodes.conf left by an earlier run (same /tmp, servers since killed)
    # would make the node rejoin that old cluster and refuse --cluster create.
    rm -f "$dir/$p/nodes.conf"
    start "$p" --cluster-enabled yes --cluster-config-file "$dir/$p/nodes.conf" --cluster-node-timeout 5000
  fi
done

first="${cluster_ports%% *}"
cluster_ok() {
  for p in $cluster_ports; do
    redis-cli -h 127.0.0.1 -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' || return 1
  done
}

# An already formed cluster may need a moment to agree after a restart.
for _ in $(seq 30); do cluster_ok && break; sleep 0.1; done
if cluster_ok; then
  echo "== redis cluster already formed (${nodes[*]})"
else
  echo "== forming redis cluster ${nodes[*]}"
  # Start from empty nodes whatever state they were left in: the tests keep
  # nothing in Redis between runs.
  for p in $cluster_ports; do
    redis-cli -h 127.0.0.1 -p "$p" flushall >/dev/null || true
    redis-cli -h 127.0.0.1 -p "$p" cluster reset hard >/dev/null || true
  done
  if ! out=$(redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes 2>&1); then
    echo "redis-cli --cluster create failed:" >&2; echo "$out" >&2
    for p in $cluster_ports; do echo "--- $dir/$p/redis.log" >&2; tail -n 20 "$dir/$p/redis.log" >&2; done
    exit 1
  fi
  for _ in $(seq 100); do cluster_ok && break; sleep 0.1; done
  cluster_ok || { echo "redis cluster did not become ready:" >&2; redis-cli -h 127.0.0.1 -p "$first" cluster info >&2 || true; exit 1; }
fi
echo "== redis ready: standalone 127.0.0.1:$port, cluster ${nodes[*]}"
