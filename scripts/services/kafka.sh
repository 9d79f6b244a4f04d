# shellcheck shell=bash
# Kafka for up.sh (sourced): a single-node KRaft broker+controller on the system Java, from
# Maven Central jars cached in $KAFKA_LIBS (fetched once, see kafka/pom.xml).

kafka_packages() {
  command -v java >/dev/null 2>&1 || printf '%s\n' openjdk-17-jre-headless
  kafka_libs_complete || command -v mvn >/dev/null 2>&1 || printf '%s\n' maven
}

kafka_pom() { printf '%s/kafka/pom.xml' "$SERVICES_SCRIPT_DIR"; }
kafka_libs_stamp() { printf 'kafka=%s pom=%s\n' "$KAFKA_VERSION" "$(sha256sum <"$(kafka_pom)" | cut -c1-16)"; }
kafka_libs_complete() {
  [[ -f "$KAFKA_LIBS/.complete" && "$(cat "$KAFKA_LIBS/.complete")" == "$(kafka_libs_stamp)" ]] &&
    compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" >/dev/null
}

kafka_fetch_libs() {
  kafka_libs_complete && return 0
  command -v mvn >/dev/null 2>&1 || die "maven (mvn) is needed once to fetch the Kafka jars"
  local t0 tmp mlog attempt rc=1
  t0="$(now)"
  mkdir -p "$(dirname "$KAFKA_LIBS")" "$STATE/kafka/logs"
  tmp="$KAFKA_LIBS.tmp.$$"
  # leftovers of interrupted fetches (old enough not to be a concurrent one)
  find "$(dirname "$KAFKA_LIBS")" -maxdepth 1 -name "${KAFKA_LIBS##*/}.tmp.*" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
  mlog="$STATE/kafka/logs/mvn.log"
  : >"$mlog"
  log "fetching Kafka $KAFKA_VERSION jars from Maven Central into $KAFKA_LIBS"
  for attempt in 1 2 3; do
    rm -rf "$tmp"
    if mvn -q -B -ntp -Dstyle.color=never -f "$(kafka_pom)" "-Dkafka.version=$KAFKA_VERSION" \
      dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$tmp" \
      </dev/null >>"$mlog" 2>&1 9>&-; then
      rc=0
      break
    fi
    ((attempt < 3)) || break
    log "mvn attempt $attempt failed; retrying"
    sleep $((attempt * 2))
  done
  if ((rc != 0)) || ! compgen -G "$tmp/kafka_2.13-*.jar" >/dev/null; then
    rm -rf "$tmp"
    show_tail "$mlog"
    die "could not fetch the Kafka jars with maven (log: $mlog)"
  fi
  kafka_libs_stamp >"$tmp/.complete"
  if kafka_libs_complete; then
    rm -rf "$tmp" # another checkout sharing the cache finished first; keep its copy
  else
    rm -rf "$KAFKA_LIBS"
    mv "$tmp" "$KAFKA_LIBS"
  fi
  log "fetched $(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars in $(elapsed "$t0")"
}

# On a cold machine the apt install and the Maven download are independent: start the download
# in the background while apt works (when mvn and java are there already)...
kafka_fetch_libs_early() {
  FETCH_PID=""
  if ! kafka_libs_complete && command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
    mkdir -p "$STATE/kafka/logs"
    kafka_fetch_libs >"$STATE/kafka/logs/fetch.out" 2>&1 9>&- &
    FETCH_PID=$!
  fi
}

# ...and once apt is done, wait for it, or fetch now.
kafka_fetch_libs_finish() {
  if [[ -n "$FETCH_PID" ]]; then
    if ! wait "$FETCH_PID"; then
      cat "$STATE/kafka/logs/fetch.out" >&2
      die "fetching the Kafka jars failed"
    fi
    cat "$STATE/kafka/logs/fetch.out" >&2
  fi
  command -v java >/dev/null 2>&1 || die "java not found (need Java 11+, e.g. openjdk-17-jre-headless)"
  kafka_fetch_libs
}

kafka_version() {
  local j
  j="$(compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" | head -n1)"
  j="${j##*/kafka_2.13-}"
  printf '%s' "${j%.jar}"
}

# Low-level liveness: send an ApiVersions v0 request and expect a reply with the
# same correlation id and error code 0. Costs milliseconds (no JVM).
kafka_api_versions_ok() {
  # Short timeout: the broker binds its port before it starts serving requests.
  timeout 1 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "\x00\x00\x00\x0b\x00\x12\x00\x00\x00\x00\x00\x07\x00\x01p" >&3
    r="$(head -c 10 <&3 | od -An -tx1 | tr -d " \n")"
    [[ "${r:8:12}" == 000000070000 ]]
  ' _ "$1" 2>/dev/null
}
kafka_ping() { kafka_api_versions_ok "$KAFKA_PORT"; }

# kafka_tool <timeout-seconds> <class> [args...]: run a Kafka CLI class with the
# cached jars and quiet logging.
kafka_tool() {
  local secs="$1"
  shift
  timeout -k 5 "$secs" java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto \
    -Djava.net.preferIPv4Stack=true \
    "-Dlog4j.configuration=file:$STATE/kafka/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" "$@" </dev/null 9>&-
}

# ------------------------------------------------------------ one KRaft node, every profile ----
# The single profile's broker, each node of the HA profile (ha.sh) and the secure profile's broker
# (secure.sh) are each one of these: a directory holding server.properties, log4j.properties,
# data/ and logs/. A profile writes the lines that make it what it is (listeners, replication,
# security) after kafka_node_properties' shared ones, then formats, launches and waits through
# the kafka_node_* functions below.

# kafka_node_properties <node.id> <controller.quorum.voters> <dir> <replication factor>:
# the server.properties lines every profile's nodes share.
kafka_node_properties() {
  local id="$1" voters="$2" d="$3" rf="$4"
  cat <<EOF
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
controller.listener.names=CONTROLLER
log.dirs=$d/data
num.partitions=4
default.replication.factor=$rf
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$rf
transaction.state.log.num.partitions=4
delete.topic.enable=true
group.initial.rebalance.delay.ms=0
# After a crash (SIGKILL) the restarted node must wait for its previous broker
# session to expire before it can re-register; the default 9 s makes every
# crash-restart take ~15 s. Heartbeats are loopback-local, so 5 s is ample.
broker.session.timeout.ms=5000
broker.heartbeat.interval.ms=1000
num.network.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.dedupe.buffer.size=16777216
log.retention.hours=24
log.segment.bytes=67108864
EOF
}

# The CLI tools' log4j file (warnings to stderr), shared by every profile's kafka_tool calls.
kafka_write_tools_log4j() {
  mkdir -p "$STATE/kafka"
  cat >"$STATE/kafka/tools-log4j.properties" <<EOF
# generated by scripts/services/up.sh (CLI tools: warnings to stderr)
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
}

# kafka_node_dirs <dir>: data/, logs/ and the node's log4j file (a rolling server.log in logs/).
kafka_node_dirs() {
  local d="$1"
  mkdir -p "$d/data" "$d/logs"
  kafka_write_tools_log4j
  cat >"$d/log4j.properties" <<EOF
# generated by scripts/services/up.sh
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$d/logs/server.log
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.network.RequestChannel\$=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.storage.internals.log.LogCleaner=WARN
EOF
}

# kafka_cluster_id <file>: the cluster id kept in <file>, made on first use. Same shape as
# `StorageTool random-uuid` (16 random bytes, base64url, no padding; Kafka avoids a leading "-")
# without paying for another JVM.
kafka_cluster_id() {
  local f="$1" id=-
  if [[ ! -s "$f" ]]; then
    while [[ "$id" == -* ]]; do id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"; done
    [[ "$id" =~ ^[A-Za-z0-9_-]{22}$ ]] || die "kafka: could not generate a cluster id ($id)"
    mkdir -p "$(dirname "$f")"
    printf '%s\n' "$id" >"$f"
  fi
  cat "$f"
}

kafka_node_formatted() { [[ -f "$1/data/meta.properties" ]]; }

# kafka_node_format <svc> <dir> <cluster id> [StorageTool arguments...]: formats the node's KRaft
# storage unless it is formatted already.
kafka_node_format() {
  local svc="$1" d="$2" id="$3"
  shift 3
  kafka_node_formatted "$d" && return 0
  if ! kafka_tool 90 kafka.tools.StorageTool format --ignore-formatted -t "$id" -c "$d/server.properties" "$@" \
    >>"$d/logs/format.log" 2>&1; then
    show_tail "$d/logs/format.log"
    die "$svc: formatting KRaft storage failed (log: $d/logs/format.log)"
  fi
}

# kafka_node_launch <svc> <dir> <heap options>: starts the node's JVM; prints its pid.
kafka_node_launch() {
  local svc="$1" d="$2" heap
  read -r -a heap <<<"$3"
  mark_logs "$d/logs/server.log"
  (cd "$d" && launch "$svc" "$d/logs/stdout.log" \
    java "${heap[@]}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Djava.net.preferIPv4Stack=true \
    "-Dlog4j.configuration=file:$d/log4j.properties" "-Dkafka.logs.dir=$d/logs" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$d/server.properties" >/dev/null)
}

# kafka_node_wait <svc> <pid> <dir> <port> <probe function> <what it answers> [TopicCommand args...]:
# the probe answers (a cheap check, no JVM), then a full client round trip (the topic list through
# the admin client, as tests will do; a node of several needs the controller quorum for it).
kafka_node_wait() {
  local svc="$1" pid="$2" d="$3" port="$4" probe="$5" what="$6" deadline=$((SECONDS + KAFKA_START_TIMEOUT)) out
  shift 6
  await_answer "$svc" "$pid" "$KAFKA_START_TIMEOUT" 0.25 "$probe" "$what" "$d/logs/stdout.log" "$d/logs/server.log"
  [[ -z "${SERVICES_DEBUG:-}" ]] || log "$svc: $what after $(elapsed "${T0[$svc]}")"
  while ! out="$(kafka_tool 45 org.apache.kafka.tools.TopicCommand --bootstrap-server "$BIND_HOST:$port" "$@" --list 2>&1)"; do
    if ! pid_alive "$pid" || ((SECONDS >= deadline)); then
      printf '%s\n' "$out" >&2
      show_tail "$d/logs/stdout.log" "$d/logs/server.log"
      die "$svc: TopicCommand --list failed against 127.0.0.1:$port"
    fi
    sleep 1
  done
}

# ------------------------------------------------------------------ the single profile's broker ----
kafka_prepare() {
  local d="$STATE/kafka"
  kafka_node_dirs "$d"
  {
    printf '# generated by scripts/services/up.sh: single-node KRaft broker+controller for tests\n'
    kafka_node_properties 1 "1@$BIND_HOST:$KAFKA_CONTROLLER_PORT" "$d" 1
    cat <<EOF
listeners=PLAINTEXT://$BIND_HOST:$KAFKA_PORT,CONTROLLER://$BIND_HOST:$KAFKA_CONTROLLER_PORT,PROXIED://$BIND_HOST:$KAFKA_PROXIED_PORT
advertised.listeners=PLAINTEXT://$BIND_HOST:$KAFKA_PORT,PROXIED://$BIND_HOST:$KAFKA_PROXY_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,PROXIED:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
min.insync.replicas=1
transaction.state.log.min.isr=1
auto.create.topics.enable=true
num.io.threads=4
EOF
  } >"$d/server.properties"
  require_free_port kafka "$KAFKA_PORT" SERVICES_KAFKA_PORT
  require_free_port kafka "$KAFKA_CONTROLLER_PORT" SERVICES_KAFKA_CONTROLLER_PORT
  require_free_port kafka "$KAFKA_PROXIED_PORT" SERVICES_KAFKA_PROXIED_PORT
  kafka_node_format kafka "$d" "$(kafka_cluster_id "$d/cluster.id")"
}

kafka_launch() { kafka_node_launch kafka "$STATE/kafka" "$KAFKA_HEAP_OPTS"; }

kafka_wait() { kafka_node_wait kafka "$1" "$STATE/kafka" "$KAFKA_PORT" kafka_ping "ApiVersions on 127.0.0.1:$KAFKA_PORT"; }

# Version and address, tab-separated, for up.sh's report line.
kafka_describe() {
  printf '%s\t%s' "$(kafka_version)" "$BIND_HOST:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT)"
}
