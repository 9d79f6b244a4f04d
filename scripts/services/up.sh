#!/usr/bin/env bash
# Start local test services as plain background processes (no Docker):
#   Redis 7 (Debian), ClickHouse 18.16 (Debian), Kafka 3.9 KRaft (Maven Central jars).
#
#   bash scripts/services/up.sh                    # all three
#   bash scripts/services/up.sh kafka [redis ...]  # only some
#   SERVICES_FRESH=1 bash scripts/services/up.sh   # wipe their data first
#
# Idempotent: a service already running from the state dir and answering is left alone.
# State (configs, data, logs, pids): ${SERVICES_DIR:-<repo>/.services}
# Connection settings for tests: <repo>/.services.env (KEY=value lines).
# Ports (127.0.0.1 only) and other knobs: see README.md next to this script.

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# One file a service, each defining <svc>_packages, _ping, _prepare, _launch, _wait, _describe.
# shellcheck source=redis.sh
source "$SERVICES_SCRIPT_DIR/redis.sh"
# shellcheck source=clickhouse.sh
source "$SERVICES_SCRIPT_DIR/clickhouse.sh"
# shellcheck source=kafka.sh
source "$SERVICES_SCRIPT_DIR/kafka.sh"
# The HA profile's nodes (SERVICES_PROFILE=ha): ha_redis_*, ha_sentinel_*, ha_kafka_* <node>.
# shellcheck source=ha.sh
source "$SERVICES_SCRIPT_DIR/ha.sh"
# The secure profile's engines (SERVICES_PROFILE=secure): secure-redis, -sentinel, -clickhouse, -kafka.
# shellcheck source=secure.sh
source "$SERVICES_SCRIPT_DIR/secure.sh"
# The cluster profile's nodes (SERVICES_PROFILE=cluster): cluster_node_* <node>, and the forming of the cluster.
# shellcheck source=cluster.sh
source "$SERVICES_SCRIPT_DIR/cluster.sh"

help_if_asked 13 "$@"

parse_services "$@"
want() {
  local s
  for s in "${SELECTED[@]}"; do [[ "$s" == "$1" || "$s" == "$1"-[1-9] ]] && return 0; done
  return 1
}

T_ALL="$(now)"
take_lock
trap 'rc=$?; if ((rc != 0)); then printf "[services] up.sh failed (exit %s); state dir: %s\n" "$rc" "$STATE" >&2; fi' EXIT

# apt-get only what a selected service is missing (curl is up.sh's own HTTP client).
ensure_packages() {
  local pkgs=() svc t0
  for svc in "${SELECTED[@]}"; do
    mapfile -t -O "${#pkgs[@]}" pkgs < <(svc_fn packages "$svc")
  done
  command -v curl >/dev/null 2>&1 || pkgs+=(curl ca-certificates)
  ((${#pkgs[@]})) || return 0
  t0="$(now)"
  apt_install "${pkgs[@]}"
  log "installed ${pkgs[*]} in $(elapsed "$t0")"
}

# Is an already-running service healthy? A few tries, so a busy machine does
# not get a perfectly good server restarted.
svc_answers() {
  local i
  for i in 1 2 3; do
    svc_fn ping "$1" && return 0
    sleep 0.5
  done
  return 1
}

mkdir -p "$STATE"
FETCH_PID=""
if want kafka || want secure-kafka; then kafka_fetch_libs_early; fi
ensure_packages
if want kafka || want secure-kafka; then kafka_fetch_libs_finish; fi

declare -A PID=() T0=() STATUS=()

# Phase 1: wipe (SERVICES_FRESH=1), reuse what is already running, prepare the rest
# (configs, port checks, Kafka storage format).
for svc in "${SELECTED[@]}"; do
  if [[ "${SERVICES_FRESH:-0}" == 1 ]]; then
    stop_service "$svc" >/dev/null
    if [[ "$svc" == cluster-[1-9] ]]; then rm -rf "${STATE:?}/cluster/$svc"; elif [[ "$svc" == *-[1-9] ]]; then rm -rf "${STATE:?}/ha/$svc"; elif [[ "$svc" == secure-* ]]; then rm -rf "${STATE:?}/secure/${svc#secure-}"; else rm -rf "${STATE:?}/$svc"; fi
    log "$svc: data wiped (SERVICES_FRESH=1)"
  fi
  if pid="$(service_pid "$svc")"; then
    if svc_answers "$svc"; then
      PID[$svc]="$pid"
      STATUS[$svc]=running
      continue
    fi
    log "$svc: pid $pid from $STATE is alive but not answering; restarting it"
    stop_service "$svc" >/dev/null
  fi
  svc_fn prepare "$svc"
  STATUS[$svc]=prepared
done
# Launch everything that needs starting back to back so they boot in parallel.
for svc in "${SELECTED[@]}"; do
  [[ "${STATUS[$svc]}" == prepared ]] || continue
  T0[$svc]="$(now)"
  svc_fn launch "$svc"
  PID[$svc]="$(head -n1 "$(pid_file "$svc")")"
  STATUS[$svc]=started
done

# Phase 2: wait for the ones we launched (they boot in parallel), then report.
for svc in "${SELECTED[@]}"; do
  pid="${PID[$svc]}"
  if [[ "${STATUS[$svc]}" == started ]]; then
    svc_fn wait "$svc" "$pid"
    took="ready in $(elapsed "${T0[$svc]}")"
  else
    # A service reused as it runs may still owe a step its _wait takes (ClickHouse's database).
    if declare -F "${svc}_reused" >/dev/null; then "${svc}_reused"; fi
    if [[ "$svc" == sentinel-[1-9] ]]; then svc_fn wait "$svc" "$pid"; fi
    took="already running"
  fi
  described="$(svc_fn describe "$svc" "$pid")"
  ver="${described%%$'\t'*}" addr="${described#*$'\t'}"
  printf '%-11s %-9s %-18s pid %-7s %s\n' "$svc" "$ver" "$took" "$pid" "$addr"
done

# A profile whose nodes form something together once they all answer (the cluster) does it now.
if declare -F "${PROFILE}_profile_ready" >/dev/null; then "${PROFILE}_profile_ready"; fi

write_env_file
printf 'services    up in %s; env: %s; state: %s\n' "$(elapsed "$T_ALL")" "$ENV_FILE" "$STATE"
