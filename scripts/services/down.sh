#!/usr/bin/env bash
# Stop the local test services started by up.sh (SIGTERM, then SIGKILL after
# ${SERVICES_STOP_TIMEOUT:-15}s). Data stays in the state dir; idempotent.
#
#   bash scripts/services/down.sh                  # all
#   bash scripts/services/down.sh kafka [redis]    # only some (fault injection)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

help_if_asked 6 "$@"

parse_services "$@"
# The HA profile shares ClickHouse with the single one: stopping "all of it" leaves ClickHouse
# running (name it to stop it).
if [[ "$PROFILE" == ha && $# -eq 0 ]]; then
  for i in "${!SELECTED[@]}"; do [[ "${SELECTED[$i]}" == clickhouse ]] && unset 'SELECTED[i]'; done
  SELECTED=("${SELECTED[@]}")
fi
[[ -d "$STATE" ]] || {
  for svc in "${SELECTED[@]}"; do printf '%-11s not running\n' "$svc"; done
  exit 0
}
take_lock

# Brokers of the HA profile stop together: the last one alone waits for a controller quorum that
# is gone, until SIGKILL. So all of them get SIGTERM at once, then each is waited for below.
for svc in "${SELECTED[@]}"; do
  if [[ "$svc" == kafka-[1-9] ]] && pid="$(service_pid "$svc")"; then kill -TERM "$pid" 2>/dev/null || true; fi
done

# Stop in reverse start order, each one independently.
rc=0
for ((i = ${#SELECTED[@]} - 1; i >= 0; i--)); do
  stop_service "${SELECTED[$i]}" || rc=1
done
exit "$rc"
