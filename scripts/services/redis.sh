# shellcheck shell=bash
# Redis for up.sh (sourced): Debian's redis-server on $REDIS_PORT, nothing persisted.
# Each service file defines <svc>_packages, _ping, _prepare, _launch, _wait and _describe.

redis_packages() {
  { command -v redis-server && command -v redis-cli; } >/dev/null 2>&1 || printf '%s\n' redis-server redis-tools
}

redis_ping() { [[ "$(timeout 3 redis-cli -h "$BIND_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }
redis_version() { redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p'; }

redis_prepare() {
  mkdir -p "$STATE/redis"
  require_free_port redis "$REDIS_PORT" SERVICES_REDIS_PORT
}

redis_launch() {
  launch redis "$STATE/redis/redis.log" \
    "$(command -v redis-server)" --port "$REDIS_PORT" --bind "$BIND_HOST" --save '' --appendonly no \
    --dir "$STATE/redis" --daemonize no --protected-mode yes >/dev/null
}

redis_wait() {
  await_answer redis "$1" "$REDIS_START_TIMEOUT" 0.05 redis_ping "PING on 127.0.0.1:$REDIS_PORT" "$STATE/redis/redis.log"
}

# Version and address, tab-separated, for up.sh's report line.
redis_describe() {
  printf '%s\t%s' "$(redis_version)" "redis://$BIND_HOST:$REDIS_PORT"
}
