#!/usr/bin/env bash
# A throwaway ClickHouse 18.16 server in the foreground, for a test that may crash it:
#   clickhouse-scratch.sh DIR HTTP_PORT TCP_PORT INTERSERVER_PORT
# Same config as up.sh's server (ch_write_config), its state under DIR. The caller kills it
# (SIGKILL is fine) and removes DIR. Why it exists: 18.16's Kafka engine can abort the whole
# server (SIGABRT inside librdkafka) when a Kafka table is dropped, so tests that open one must
# not do it on the shared server every other suite uses.
set -Eeuo pipefail
(($# == 4)) || { echo "usage: $0 DIR HTTP_PORT TCP_PORT INTERSERVER_PORT" >&2; exit 2; }
export SERVICES_DIR="$1" SERVICES_CLICKHOUSE_HTTP_PORT="$2" SERVICES_CLICKHOUSE_TCP_PORT="$3" SERVICES_CLICKHOUSE_INTERSERVER_PORT="$4"
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=clickhouse.sh
source "$SERVICES_SCRIPT_DIR/clickhouse.sh"
ch_write_config
read -r -a bin <<<"$(ch_server_bin)"
cd "$STATE/clickhouse"
exec "${bin[@]}" "--config-file=$STATE/clickhouse/config.xml"
