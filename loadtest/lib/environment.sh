# Sourced by loadtest/run.sh: what it needs beside k6 (a Python with matplotlib for the charts,
# the service's classpath for the baselines), and env.txt, what a reader of the report must know
# about the run: the machine, the builds and tools, each store's durability, the settings.
# Uses run.sh's globals and settings (see its --help).
# shellcheck shell=bash disable=SC2154,SC2034

find_python() { # sets py: python3 when it has matplotlib, else a venv in the cache with it
  py=""
  if python3 -c 'import matplotlib' 2>/dev/null; then py=python3; return 0; fi
  local venv=$cache_dir/venv
  if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    step "installing matplotlib into ${venv/#"$HOME"/\~} (for the charts)"
    if python3 -m venv "$venv" && "$venv/bin/pip" install -q matplotlib; then :; else
      log "WARNING: no matplotlib: the report will have tables but no charts"
    fi
  fi
  if "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then py=$venv/bin/python; else py=python3; fi
}

# vegeta (PEAK_FRACTIONS' open-loop load), the pinned version, built with go install from the Go
# module proxy into the cache the first time. Sets vegeta.
readonly VEGETA_VERSION=v12.13.0
find_vegeta() {
  vegeta=$cache_dir/vegeta-$VEGETA_VERSION/vegeta
  [ -x "$vegeta" ] && return 0
  command -v go >/dev/null || die "PEAK_FRACTIONS needs vegeta, built with Go: install Go, or leave PEAK_FRACTIONS unset"
  step "building vegeta $VEGETA_VERSION with go install (Go module proxy)"
  CGO_ENABLED=0 GOBIN=$(dirname "$vegeta") go install -trimpath "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"
}

# vegeta at a constant rate, each request started on schedule, on as many workers at first as
# wrk's three processes have connections, over at most that many connections to each node
# (HTTP/1.1, as wrk's); its results as prefix.csv.gz, its errors in prefix.log. Returns vegeta's
# exit code (the results are written either way). Used by run.sh (measure.sh) and ab.sh.
vegeta_attack() { # targets rate duration connections-per-node ca-file|"" prefix
  local rc=0
  "$vegeta" attack -format=json -targets="$1" -rate="$2/s" -duration="$3" -http2=false \
    -workers=$((3 * $4)) -max-connections="$4" -max-body=0 -timeout="${TIMEOUT:-10s}" ${5:+-root-certs="$5"} \
    -output="$6.bin" 2>"$6.log" || rc=$?
  "$vegeta" encode --to csv "$6.bin" | gzip -1 >"$6.csv.gz"
  rm -f "$6.bin"
  return "$rc"
}

baseline_classpath() { # sets classpath: the service's runtime classpath (resolved once per pom, then cached)
  local key file
  key=$(sha1sum pom.xml service/pom.xml | sha1sum | cut -c1-12)
  file=$cache_dir/classpath-$key.txt
  if [ ! -s "$file" ]; then
    step "resolving the service's runtime classpath for the Netty and WebFlux baselines"
    bin/with-jdk ./mvnw -B -q -f service/pom.xml dependency:build-classpath \
      -Dmdep.includeScope=runtime -Dmdep.outputFile="$file"
  fi
  classpath=$(cat "$file")
}

# A path as a report shows it: relative to the checkout, or else its file name alone, so that no
# report (some are committed, loadtest/benchmarks/) names the directories of the machine it ran on.
shown_path() {
  case $1 in
    "$repo"/*) printf '%s' "${1#"$repo"/}" ;;
    *) printf '%s' "${1##*/}" ;;
  esac
}

describe_run() { # env.txt on stdout
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "ahead-of-time cache: $aot_used"
  echo "command: $(printf '%q ' env TARGETS="$TARGETS" RATES="$RATES" DURATION="$DURATION" SCENARIOS="$SCENARIOS" \
    REPLICAS_LIST="$REPLICAS_LIST" KEYSPACE="$KEYSPACE" VALUE_SIZE="$VALUE_SIZE" WARMUP="$WARMUP" \
    COLD_DURATION="$COLD_DURATION" WRK="$WRK" WRK_DURATION="$WRK_DURATION" PEAK_FRACTIONS="$PEAK_FRACTIONS" PROFILE="$PROFILE" \
    ${JAR:+JAR="$(shown_path "$JAR")"} loadtest/run.sh)"
  if [ -n "$JAR" ]; then
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) (the checkout; the nodes run JAR, not a build of it)"
  else
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- service 2>/dev/null || echo ' (service/ has uncommitted changes)')"
  fi
  echo "jar: $(shown_path "$jar"), sha256 $jar_sum…, $(($(stat -c %s "$node_jar") / 1048576)) MiB, modified $(date -u -r "$jar" '+%Y-%m-%d %H:%M:%S UTC')"
  echo "targets: $TARGETS"
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
  echo "load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "java: $(bin/with-jdk java -version 2>&1 | head -n 1)"
  echo "k6: $("$k6" version 2>/dev/null | head -n 1)"
  [ "$WRK" != 1 ] || echo "wrk: $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
  [ -z "$PEAK_FRACTIONS" ] || echo "vegeta: $VEGETA_VERSION"
  ! contains "$TARGETS" etcd || echo "etcd: $(etcd --version 2>/dev/null | head -n 1 | sed 's/^etcd Version: //')"
  echo "heap: -Xmx$NODE_HEAP (ringkv nodes: direct memory a quarter of it, as bin/node --heap sizes it)"
  echo "clock ticks: $(getconf CLK_TCK)"
  durability
  echo "cluster secret: a random one per benchmark, given to every ringkv node (--ringkv.cluster.secret)"
  echo "warm-up: mixed at $WARMUP_RATE/s for $WARMUP per target"
  if contains "$TARGETS" cluster || contains "$TARGETS" cluster-sync; then
    echo "cold start (cluster targets): mixed at $COLD_RATE/s, replicas 2/3, for $COLD_DURATION on the empty store as soon as every node is ready"
  fi
  [ "$WRK" != 1 ] ||
    echo "wrk: closed loop, mixed (READ_RATIO ${READ_RATIO:-0.5}, uniform keys), 3 processes × -t1 -c$WRK_CONNECTIONS for $WRK_DURATION per target"
  [ -z "$PEAK_FRACTIONS" ] ||
    echo "open loop: vegeta, the same mixed load at a constant rate of $PEAK_FRACTIONS × each target's wrk rate, at most $WRK_CONNECTIONS connections a node, for $DURATION each after $OPEN_LOOP_SETTLE not counted"
  [ -z "$SLOW_NODE_DELAY" ] || echo "slow node: the clusters' third node answers replica calls $SLOW_NODE_DELAY late"
  local v
  for v in DISTRIBUTION VUS MAX_VUS P99_MS READ_RATIO DELETE_RATIO RANGE_SIZE EXECUTOR STAGES RATE_START ZIPF_THETA TIMEOUT; do
    [ -z "${!v:-}" ] || echo "$v: ${!v}"
  done
}

durability() { # what an acknowledged write survives, and what a read sees, for each store measured
  if contains "$TARGETS" cluster || contains "$TARGETS" single; then
    echo "durability ringkv (cluster, single): WAL written but not fsynced per write (ringkv.storage.sync-writes=false, the default); a write is acknowledged once ack of from replicas have it"
  fi
  ! contains "$TARGETS" cluster-sync ||
    echo "durability cluster-sync: WAL fsynced per write (--ringkv.storage.sync-writes=true); a write is acknowledged once ack of from replicas have fsynced it"
  ! contains "$TARGETS" etcd ||
    echo "durability etcd: Raft, every write fsynced on every member (etcd's default), acknowledged once a majority has it"
  ! contains "$TARGETS" netty || echo "durability netty: none (answers from memory, stores nothing)"
  ! contains "$TARGETS" webflux || echo "durability webflux: none (answers from memory, stores nothing)"
  if contains "$TARGETS" etcd; then
    echo "reads: ringkv a quorum of ack of from replicas (REPLICAS); etcd linearizable (the default, serializable=false)"
  else
    echo "reads: ringkv a quorum of ack of from replicas (REPLICAS)"
  fi
}
