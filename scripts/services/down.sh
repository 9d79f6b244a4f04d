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
[[ -d "$STATE" ]] || {
  for svc in "${SELECTED[@]}"; do printf '%-11s not running\n' "$svc"; done
  exit 0
}
take_lock

# Stop in reverse start order, each one independently.
rc=0
for ((i = ${#SELECTED[@]} - 1; i >= 0; i--)); do
  stop_service "${SELECTED[$i]}" || rc=1
done
exit "$rc"
