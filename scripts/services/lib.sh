# shellcheck shell=bash
# Shared helpers for scripts/services/up.sh and down.sh. Sourced, not executed.
#
# Local test services (Redis, ClickHouse, Kafka) run as plain background
# processes whose configs, data, logs and pid files all live in one state dir.

set -Eeuo pipefail

SERVICES_SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SERVICES_SCRIPT_DIR/../.." && pwd)"

# single (default): one Redis, one ClickHouse, one Kafka broker. ha: the forms production runs (ha.sh):
# Redis primary + replica + three Sentinels and three Kafka brokers, next to the same ClickHouse.
PROFILE="${SERVICES_PROFILE:-single}"
# secure: every engine with TLS and authentication (secure.sh), on ports of its own.
# cluster: Redis Cluster, 3 primaries + 3 replicas (cluster.sh), beside the single profile's Kafka and ClickHouse.
case "$PROFILE" in single | ha | secure | cluster) ;; *) printf 'SERVICES_PROFILE must be single, ha, secure or cluster, got "%s"\n' "$PROFILE" >&2; exit 2 ;; esac

STATE="${SERVICES_DIR:-$REPO/.services}"
case "$STATE" in /*) ;; *) STATE="$PWD/$STATE" ;; esac
if [[ "$PROFILE" == ha ]]; then
  ENV_FILE="${SERVICES_ENV_FILE:-$REPO/.services-ha.env}"
elif [[ "$PROFILE" == secure ]]; then
  ENV_FILE="${SERVICES_ENV_FILE:-$REPO/.services-secure.env}"
elif [[ "$PROFILE" == cluster ]]; then
  ENV_FILE="${SERVICES_ENV_FILE:-$REPO/.services-cluster.env}"
else
  ENV_FILE="${SERVICES_ENV_FILE:-$REPO/.services.env}"
fi

BIND_HOST=127.0.0.1
REDIS_PORT="${SERVICES_REDIS_PORT:-6390}"
CH_HTTP_PORT="${SERVICES_CLICKHOUSE_HTTP_PORT:-8124}"
CH_TCP_PORT="${SERVICES_CLICKHOUSE_TCP_PORT:-9001}"
CH_INTERSERVER_PORT="${SERVICES_CLICKHOUSE_INTERSERVER_PORT:-9010}"
CH_DATABASE="${CLICKHOUSE_DATABASE:-gateway_test}"
KAFKA_PORT="${SERVICES_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${SERVICES_KAFKA_CONTROLLER_PORT:-19093}"
# A second listener whose advertised address is a fault proxy's (test/helpers/fault-proxy.ts): a
# client that bootstraps through the proxy is sent back to it for every broker connection, so the
# faults layer can stall, slow or reset all of a client's Kafka traffic. Nothing listens on the
# advertised port unless a test starts the proxy there.
KAFKA_PROXIED_PORT="${SERVICES_KAFKA_PROXIED_PORT:-$((KAFKA_PORT + 2))}"
KAFKA_PROXY_PORT="${SERVICES_KAFKA_PROXY_PORT:-$((KAFKA_PORT + 3))}"
KAFKA_VERSION="${SERVICES_KAFKA_VERSION:-3.9.2}"
: "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
KAFKA_LIBS="${KAFKA_LIB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prestadores-gateway/kafka-libs-$KAFKA_VERSION}"
KAFKA_HEAP_OPTS="${SERVICES_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"

REDIS_START_TIMEOUT="${SERVICES_REDIS_TIMEOUT:-20}"
CH_START_TIMEOUT="${SERVICES_CLICKHOUSE_TIMEOUT:-60}"
KAFKA_START_TIMEOUT="${SERVICES_KAFKA_TIMEOUT:-90}"
STOP_TIMEOUT="${SERVICES_STOP_TIMEOUT:-15}"

# The HA profile's nodes: ports from one base (redis-N: base+N-1, sentinel-N: base+10+N-1,
# kafka-N: base+20+N-1 and its controller base+30+N-1).
HA_PORT_BASE="${SERVICES_HA_PORT_BASE:-16400}"
HA_SENTINEL_NAME="${SERVICES_HA_SENTINEL_NAME:-gateway-redis}"
HA_KAFKA_HEAP_OPTS="${SERVICES_HA_KAFKA_HEAP_OPTS:--Xms128m -Xmx384m}"
# The secure profile's ports: Redis base+0, Sentinel base+1, ClickHouse HTTPS base+10, Kafka base+20 (controller base+21).
SECURE_PORT_BASE="${SERVICES_SECURE_PORT_BASE:-17400}"
# The cluster profile's ports: node N at base+N-1, its cluster bus at base+10+N-1 (cluster.sh).
CLUSTER_PORT_BASE="${SERVICES_CLUSTER_PORT_BASE:-16500}"

if [[ "$PROFILE" == ha ]]; then
  ALL_SERVICES=(clickhouse redis-1 redis-2 sentinel-1 sentinel-2 sentinel-3 kafka-1 kafka-2 kafka-3)
elif [[ "$PROFILE" == secure ]]; then
  ALL_SERVICES=(secure-redis secure-sentinel secure-clickhouse secure-kafka)
elif [[ "$PROFILE" == cluster ]]; then
  ALL_SERVICES=(cluster-1 cluster-2 cluster-3 cluster-4 cluster-5 cluster-6)
else
  ALL_SERVICES=(redis clickhouse kafka)
fi

# svc_fn <function> <service> [args]: calls <service>_<function>; the HA nodes share one
# implementation a kind (ha.sh: ha_redis_*, ha_sentinel_*, ha_kafka_*) taking the node number, and
# so do the cluster's (cluster.sh: cluster_node_*).
svc_fn() {
  local fn="$1" svc="$2"
  shift 2
  if [[ "$svc" =~ ^(redis|sentinel|kafka)-([1-9])$ ]]; then
    "ha_${BASH_REMATCH[1]}_$fn" "${BASH_REMATCH[2]}" "$@"
  elif [[ "$svc" =~ ^cluster-([1-9])$ ]]; then
    "cluster_node_$fn" "${BASH_REMATCH[1]}" "$@"
  else
    "${svc}_$fn" "$@"
  fi
}

# ---------------------------------------------------------------- output ----
log() { printf '[services] %s\n' "$*" >&2; }
die() {
  printf '[services] ERROR: %s\n' "$*" >&2
  exit 1
}
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

LOG_MARK='=== scripts/services/up.sh: starting'
# Append a marker to log files before a launch so failures show only this run.
mark_logs() {
  local f
  for f in "$@"; do printf '%s at %s ===\n' "$LOG_MARK" "$(date -u '+%F %T')" >>"$f"; done
}

# Print the last lines (since the last marker) of each file, for diagnostics.
show_tail() {
  local f start
  for f in "$@"; do
    [[ -s "$f" ]] || continue
    start="$(grep -nF "$LOG_MARK" "$f" | tail -n1 | cut -d: -f1 || true)"
    printf -- '----- last lines of %s -----\n' "$f" >&2
    tail -n +"${start:-1}" "$f" | tail -n "${SERVICES_TAIL_LINES:-40}" | sed 's/\x1b\[[0-9;]*m//g' >&2 || true
  done
  printf -- '-----\n' >&2
}

# help_if_asked <last line> "$@": -h/--help prints the calling script's header comment
# (its lines 2..<last line>) and exits.
help_if_asked() {
  case "${2:-}" in
    -h | --help)
      sed -n "2,${1}p" "${BASH_SOURCE[1]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
  esac
}

# Parse service names from the command line (default: all of them).
parse_services() {
  SELECTED=()
  local a s ok
  if (($# == 0)); then
    SELECTED=("${ALL_SERVICES[@]}")
    return
  fi
  for a in "$@"; do
    [[ "$a" == all ]] && { SELECTED=("${ALL_SERVICES[@]}"); return; }
    # In the HA profile a kind names all its nodes: `redis` = both Redis nodes and the Sentinels.
    if [[ "$PROFILE" == ha && "$a" == redis ]]; then SELECTED+=(redis-1 redis-2 sentinel-1 sentinel-2 sentinel-3); continue; fi
    if [[ "$PROFILE" == ha && "$a" == kafka ]]; then SELECTED+=(kafka-1 kafka-2 kafka-3); continue; fi
    ok=0
    for s in "${ALL_SERVICES[@]}"; do [[ "$a" == "$s" ]] && ok=1; done
    ((ok)) || { printf 'unknown service "%s" (expected: %s or all)\n' "$a" "${ALL_SERVICES[*]}" >&2; exit 2; }
    SELECTED+=("$a")
  done
}

# One up.sh/down.sh at a time per state dir. fd 9 must not leak into the
# servers we start (see launch()), otherwise they would hold the lock forever.
take_lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  if ! flock -w "${SERVICES_LOCK_TIMEOUT:-300}" 9; then
    die "another up.sh/down.sh holds $STATE/.lock"
  fi
}

# ------------------------------------------------------------- processes ----
pid_file() { printf '%s/%s.pid' "$STATE" "$1"; }

# Does pid $2 look like service $1 started from this state dir?
pid_matches() {
  local svc="$1" pid="$2" cmd cwd
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ -n "$cmd" ]] || return 1 # zombie
  case "$svc" in
    redis)
      # redis rewrites its argv ("redis-server 127.0.0.1:6390"); it chdirs to --dir.
      cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null)" || return 1
      [[ "$cmd" == *redis-server* && "$cwd" == "$STATE/redis" ]]
      ;;
    clickhouse) [[ "$cmd" == *clickhouse* && "$cmd" == *"--config-file=$STATE/clickhouse/config.xml"* ]] ;;
    kafka) [[ "$cmd" == *java* && "$cmd" == *kafka.Kafka* && "$cmd" == *"$STATE/kafka/server.properties"* ]] ;;
    redis-[1-9] | sentinel-[1-9])
      cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null)" || return 1
      [[ "$cmd" == *redis-s* && "$cwd" == "$STATE/ha/$svc" ]]
      ;;
    kafka-[1-9]) [[ "$cmd" == *java* && "$cmd" == *kafka.Kafka* && "$cmd" == *"$STATE/ha/$svc/server.properties"* ]] ;;
    secure-redis | secure-sentinel)
      cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null)" || return 1
      [[ "$cmd" == *redis-s* && "$cwd" == "$STATE/secure/${svc#secure-}" ]]
      ;;
    secure-clickhouse) [[ "$cmd" == *clickhouse* && "$cmd" == *"--config-file=$STATE/secure/clickhouse/config.xml"* ]] ;;
    cluster-[1-9])
      cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null)" || return 1
      [[ "$cmd" == *redis-server* && "$cwd" == "$STATE/cluster/$svc" ]]
      ;;
    secure-kafka) [[ "$cmd" == *java* && "$cmd" == *kafka.Kafka* && "$cmd" == *"$STATE/secure/kafka/server.properties"* ]] ;;
    *) return 1 ;;
  esac
}

# Print the pid of service $1 running from this state dir, if any. Falls back
# to scanning /proc when the pid file is missing/stale (and repairs the file).
service_pid() {
  local svc="$1" f pid p
  f="$(pid_file "$svc")"
  if [[ -f "$f" ]]; then
    pid="$(head -n1 "$f" 2>/dev/null || true)"
    if pid_matches "$svc" "$pid"; then
      printf '%s' "$pid"
      return 0
    fi
  fi
  for p in /proc/[0-9]*; do
    pid="${p#/proc/}"
    if pid_matches "$svc" "$pid"; then
      printf '%s\n' "$pid" >"$f"
      printf '%s' "$pid"
      return 0
    fi
  done
  rm -f "$f"
  return 1
}

# launch <svc> <logfile> <cmd...>: start cmd detached (own session, stdin from
# /dev/null, output to logfile, lock fd closed) and record its real pid.
launch() {
  local svc="$1" logf="$2" f i
  shift 2
  f="$(pid_file "$svc")"
  rm -f "$f"
  mark_logs "$logf"
  # shellcheck disable=SC2016
  setsid -f sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$f" "$@" \
    </dev/null >>"$logf" 2>&1 9>&-
  for ((i = 0; i < 100; i++)); do
    [[ -s "$f" ]] && break
    sleep 0.05
  done
  [[ -s "$f" ]] || die "$svc: could not record pid (see $logf)"
  head -n1 "$f"
}

# await_answer <svc> <pid> <timeout s> <poll s> <probe function> <what it answers> <log files...>:
# polls the probe until it succeeds; dies with the logs' tail when the process exits or time runs out.
await_answer() {
  local svc="$1" pid="$2" timeout="$3" poll="$4" probe="$5" what="$6" deadline
  shift 6
  deadline=$((SECONDS + timeout))
  until "$probe"; do
    if ! pid_alive "$pid"; then
      show_tail "$@"
      die "$svc exited during startup (logs: $*)"
    fi
    if ((SECONDS >= deadline)); then
      show_tail "$@"
      die "$svc did not answer $what within ${timeout}s"
    fi
    sleep "$poll"
  done
}

pid_alive() { kill -0 "$1" 2>/dev/null && [[ -r "/proc/$1/cmdline" && -n "$(tr -d '\0' <"/proc/$1/cmdline" 2>/dev/null)" ]]; }

# stop_pid <name> <pid>: SIGTERM, wait up to STOP_TIMEOUT, then SIGKILL.
stop_pid() {
  local name="$1" pid="$2" deadline
  pid_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  kill -CONT "$pid" 2>/dev/null || true # in case it was SIGSTOPped (fault injection)
  deadline=$((SECONDS + STOP_TIMEOUT))
  while pid_alive "$pid"; do
    if ((SECONDS >= deadline)); then
      log "$name (pid $pid) did not stop within ${STOP_TIMEOUT}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      local i
      for ((i = 0; i < 50; i++)); do pid_alive "$pid" || break; sleep 0.1; done
      break
    fi
    sleep 0.1
  done
}

# Stop service $1 if it runs from this state dir. Prints a status line.
stop_service() {
  local svc="$1" pid t0
  t0="$(now)"
  if pid="$(service_pid "$svc")"; then
    stop_pid "$svc" "$pid"
    if pid_alive "$pid"; then
      die "$svc (pid $pid) is still alive after SIGKILL"
    fi
    rm -f "$(pid_file "$svc")"
    printf '%-11s stopped (pid %s) in %s\n' "$svc" "$pid" "$(elapsed "$t0")"
  else
    rm -f "$(pid_file "$svc")"
    printf '%-11s not running\n' "$svc"
  fi
}

# ----------------------------------------------------------------- ports ----
# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

port_owner() {
  if command -v ss >/dev/null 2>&1; then
    ss -Hltnp "sport = :$1" 2>/dev/null | head -n3 || true
  fi
}

# Fail when a port we are about to bind is already taken by someone else.
require_free_port() {
  local svc="$1" port="$2" var="$3"
  if port_open "$port"; then
    die "$svc: port $port on 127.0.0.1 is already in use by a process not started from $STATE:
$(port_owner "$port")
Stop it, or choose another port with $var=..."
  fi
}

# ------------------------------------------------------------------- apt ----
APT_UPDATED=0
apt_install() {
  local sudo="" created_policy=0 rc=0
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need root or sudo to apt-get install $*"
    sudo="sudo -n"
  fi
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install $* manually"
  # Keep Debian maintainer scripts from starting the packaged services (which
  # would grab the default ports 6379/8123/9000): the standard policy-rc.d trick.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    $sudo sh -c 'printf "#!/bin/sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d' && created_policy=1
  fi
  # Several checkouts may install at once: wait for dpkg's lock rather than fail on it.
  local aptopts=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)
  # APT_RECOMMENDS=1 keeps the packages' recommendations (Chromium's fonts).
  local recommends=--no-install-recommends
  [[ "${APT_RECOMMENDS:-0}" == 1 ]] && recommends=--install-recommends
  if ((APT_UPDATED == 0)); then
    log "apt-get update"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q -o DPkg::Lock::Timeout=300 >"$STATE/apt.log" 2>&1 || rc=$?
    APT_UPDATED=1
  fi
  if ((rc == 0)); then
    log "apt-get install $*"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install "${aptopts[@]}" "$recommends" "$@" \
      >>"$STATE/apt.log" 2>&1 </dev/null || rc=$?
  fi
  if ((created_policy)); then $sudo rm -f /usr/sbin/policy-rc.d || true; fi
  if ((rc != 0)); then
    show_tail "$STATE/apt.log"
    die "apt-get failed installing $* (exit $rc)"
  fi
}

# -------------------------------------------------------------- env file ----
env_quote() {
  if [[ "$1" =~ ^[A-Za-z0-9_./:@,+=-]*$ ]]; then printf '%s' "$1"; else printf '"%s"' "${1//\"/\\\"}"; fi
}

# The env file lines both profiles share: ClickHouse and the Kafka jars.
common_env_lines() {
  printf 'CLICKHOUSE_URL=http://%s:%s\n' "$BIND_HOST" "$CH_HTTP_PORT"
  printf 'CLICKHOUSE_DATABASE=%s\n' "$(env_quote "$CH_DATABASE")"
  printf 'CLICKHOUSE_USER=default\n'
  printf 'CLICKHOUSE_PASSWORD=\n'
  printf 'CLICKHOUSE_TCP_PORT=%s\n' "$CH_TCP_PORT"
  printf 'KAFKA_LIBS=%s\n' "$(env_quote "$KAFKA_LIBS")"
}

write_env_file() {
  local tmp="$ENV_FILE.tmp.$$"
  if [[ "$PROFILE" == ha ]]; then
    ha_env_lines >"$tmp"
    mv -f "$tmp" "$ENV_FILE"
    return
  fi
  if [[ "$PROFILE" == secure ]]; then
    secure_env_lines >"$tmp"
    mv -f "$tmp" "$ENV_FILE"
    return
  fi
  if [[ "$PROFILE" == cluster ]]; then
    cluster_env_lines >"$tmp"
    mv -f "$tmp" "$ENV_FILE"
    return
  fi
  {
    printf '# Written by scripts/services/up.sh - local test services. Do not commit.\n'
    printf 'SERVICES_DIR=%s\n' "$(env_quote "$STATE")"
    printf 'REDIS_URL=redis://%s:%s\n' "$BIND_HOST" "$REDIS_PORT"
    printf 'KAFKA_BROKERS=%s:%s\n' "$BIND_HOST" "$KAFKA_PORT"
    printf 'KAFKA_PROXIED_LISTENER=%s:%s\n' "$BIND_HOST" "$KAFKA_PROXIED_PORT"
    printf 'KAFKA_PROXY_ADDRESS=%s:%s\n' "$BIND_HOST" "$KAFKA_PROXY_PORT"
    common_env_lines
  } >"$tmp"
  mv -f "$tmp" "$ENV_FILE"
}
