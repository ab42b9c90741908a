#!/usr/bin/env bash
# The one-command local benchmark of ringkv: builds the jar if needed, starts a fresh three-node
# cluster on loopback, fills it, runs the k6 scenarios at each offered rate, then does the same
# against two baselines (one ringkv node alone, and a bare Reactor Netty server answering from
# memory), stops everything and writes loadtest/results/<timestamp>/ with report.md and charts.
#
#   loadtest/run.sh
#   RATES="200" DURATION=5s KEYSPACE=2000 SCENARIOS="get mixed" REPLICAS_LIST="2/3" loadtest/run.sh
#
# Settings (environment):
#   SCENARIOS      put get mixed range       scenarios to run (loadtest/kv.js)
#   REPLICAS_LIST  "2/3 3/3"                  replicas for put/get/mixed on the cluster; "default"
#                                             sends none (majority); range never takes replicas
#   RATES          "300 600 1200 2400"        offered rates (requests/s), one k6 run each; on a
#                                             2-core machine the knees of all three targets are in it
#   DURATION       20s                        length of each run
#   BASELINES      "single netty"             baselines to run too, or "none"
#   KEYSPACE       20000                      keys filled and used; VALUE_SIZE 1024 bytes per value
#   WARMUP         60s                        before measuring on each target (and before the fill),
#                                             a mixed run at WARMUP_RATE (default: the first of
#                                             RATES) whose results are kept apart; 0 skips it.
#                                             The JIT needs it: a node's CPU per request fell from
#                                             5 ms to 2.2 ms over the first 40 s at 200/s
#   NODE_HEAP      256m                       -Xmx of every JVM started
#   PORT_BASE      18080                      cluster on PORT_BASE..+2, single node +10, netty +11
#   SLOW_NODE_DELAY  unset                    e.g. 50ms: the cluster's third node answers every replica
#                                             call that much late (ringkv.testing.replica-delay)
#   NO_BUILD=1     never build the jar          KEEP_DATA=1  keep the RocksDB data after the run
#   KEEP_RAW=1     keep k6's per-request CSVs   K6=path      the k6 binary to use
#   FAIL_ON_THRESHOLDS=1  exit 1 when a run missed its thresholds (default: report them, exit 0)
# Everything else (VUS, MAX_VUS, P99_MS, DISTRIBUTION, READ_RATIO, RANGE_SIZE, EXECUTOR, ...) is
# passed through to k6: see loadtest/BENCHMARKS.md. Only loopback addresses are ever targeted.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

SCENARIOS=${SCENARIOS:-"put get mixed range"}
REPLICAS_LIST=${REPLICAS_LIST:-"2/3 3/3"}
RATES=${RATES:-"300 600 1200 2400"}
DURATION=${DURATION:-20s}
BASELINES=${BASELINES:-"single netty"}
KEYSPACE=${KEYSPACE:-20000}
VALUE_SIZE=${VALUE_SIZE:-1024}
NODE_HEAP=${NODE_HEAP:-256m}
PORT_BASE=${PORT_BASE:-18080}
WARMUP=${WARMUP:-60s}
SLOW_NODE_DELAY=${SLOW_NODE_DELAY:-}
read -r first_rate _ <<<"$RATES"
WARMUP_RATE=${WARMUP_RATE:-$first_rate}
export KEYSPACE VALUE_SIZE DURATION
export K6_NO_USAGE_REPORT=true # k6 would otherwise phone home at the end of each run
export K6_CSV_TIME_FORMAT=unix_milli

cache_dir=${LOADTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run_dir=$repo/loadtest/results/$stamp
data_dir=$run_dir/data
mkdir -p "$run_dir/k6" "$run_dir/logs" "$data_dir" "$cache_dir"
: >"$run_dir/procs.tsv"
printf 'target\tscenario\treplicas\trate\tduration\tstart\tend\trc\tsummary\tcsv\n' >"$run_dir/runs.tsv"
printf 'step\tseconds\n' >"$run_dir/timings.tsv"

t0=$(date +%s)
log() { printf '==> [%5ss] %s\n' "$(($(date +%s) - t0))" "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }
step_start=$t0
step_name=""
step() { # ends the current step (recording its time) and starts the next one
  local now; now=$(date +%s)
  if [ -n "$step_name" ]; then
    printf '%s\t%s\n' "$step_name" "$((now - step_start))" >>"$run_dir/timings.tsv"
    log "$step_name: done in $((now - step_start))s"
  fi
  step_name=$1; step_start=$now
  [ -z "$step_name" ] || log "$step_name"
}

contains() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }

# ---- processes: everything started here is stopped on exit ---------------------------------------
pids=()
sampler_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_all
  if [ -n "$sampler_pid" ]; then kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; fi
  if [ "${KEEP_DATA:-0}" != 1 ]; then rm -rf "$data_dir"; fi
  # Stopped part-way: still report what was measured.
  if [ "$rc" -ne 0 ] && [ -n "${py:-}" ] && [ ! -f "$run_dir/report.md" ] &&
    [ "$(wc -l <"$run_dir/runs.tsv")" -gt 1 ]; then
    "$py" loadtest/report.py "$run_dir" || true
  fi
  [ "$rc" -eq 0 ] || printf 'run.sh: stopped (exit %s); what was measured is in %s\n' "$rc" "${run_dir#"$repo"/}" >&2
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stop_all() { # SIGTERM (a node finishes what is in flight and closes RocksDB), SIGKILL after 30 s
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local _
  for _ in $(seq 1 60); do
    local alive=0 pid
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    sleep 0.5
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  : >"$run_dir/procs.tsv"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_java() { # name log java-args... ; the JVM's pid is recorded for stopping and RSS sampling
  local name=$1 logf=$2; shift 2
  bin/with-jdk java -Xmx"$NODE_HEAP" -XX:+ExitOnOutOfMemoryError --enable-native-access=ALL-UNNAMED "$@" \
    >"$logf" 2>&1 &
  local pid=$! # bin/with-jdk execs java, so this is the JVM itself
  pids+=("$pid")
  printf '%s\t%s\n' "$name" "$pid" >>"$run_dir/procs.tsv"
  log "$name: pid $pid, log ${logf#"$repo"/}"
}

wait_ready() { # url pid log
  local url=$1 pid=$2 logf=$3 _
  for _ in $(seq 1 240); do
    kill -0 "$pid" 2>/dev/null || { tail -n 20 "$logf" >&2; die "the process for $url exited"; }
    curl -fs -o /dev/null "$url/v0/status" && return 0
    sleep 0.5
  done
  die "$url did not serve /v0/status within 120 s"
}

# Every second: the resident memory (VmRSS, KiB) and CPU time (utime+stime, clock ticks) of every
# process we started, in rss.tsv; the machine's CPU counters and load, in machine.tsv.
rss_sampler() {
  local now name pid rss ticks user nice sys idle iowait irq softirq steal load _
  while :; do
    now=$(date +%s)
    while IFS=$'\t' read -r name pid; do
      [ -n "$pid" ] || continue
      rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
      ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || true)
      [ -z "$rss" ] || printf '%s\t%s\t%s\t%s\t%s\n' "$now" "$name" "$pid" "$rss" "${ticks:-0}" >>"$run_dir/rss.tsv"
    done <"$run_dir/procs.tsv"
    read -r _ user nice sys idle iowait irq softirq steal _ </proc/stat
    read -r load _ </proc/loadavg
    printf '%s\t%s\t%s\t%s\n' "$now" "$((user + nice + sys + irq + softirq + steal))" \
      "$((user + nice + sys + irq + softirq + steal + idle + iowait))" "$load" >>"$run_dir/machine.tsv"
    sleep 1
  done
}

print_peaks() { # since-epoch process-name-prefix
  [ -s "$run_dir/rss.tsv" ] || return 0
  awk -F'\t' -v since="$1" -v prefix="$2" '$1 >= since && index($2, prefix) == 1 && $4 > peak[$2] { peak[$2] = $4 }
    END { for (n in peak) printf "    peak RSS %-12s %6.0f MiB\n", n, peak[n] / 1024 }' "$run_dir/rss.tsv" | sort
}

# ---- tools ---------------------------------------------------------------------------------------
step "checking tools"
jar=service/target/ringkv.jar
if [ "${NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$jar" ] || [ -n "$(find pom.xml service/pom.xml service/src/main -newer "$jar" -type f -print -quit)" ]; then
    step "building $jar (it is missing or older than the sources)"
    bin/with-jdk ./mvnw -B -q -DskipTests package
  else
    log "$jar is up to date"
  fi
fi
[ -f "$jar" ] || die "no $jar: build it with bin/with-jdk ./mvnw -B -DskipTests package"
# The nodes run a copy, so a rebuild during the benchmark cannot change the jar under them.
cp "$jar" "$data_dir/ringkv.jar"
node_jar=$data_dir/ringkv.jar

step "finding k6 (bin/k6: the pinned static build, built with go install when missing)"
k6=$(bin/k6) || die "no k6: see the message above"
[ -x "$k6" ] || die "k6 at $k6 is not executable"
log "k6: $k6 ($("$k6" version 2>/dev/null | head -n 1))"

py=""
if python3 -c 'import matplotlib' 2>/dev/null; then py=python3; fi
if [ -z "$py" ]; then
  venv=$cache_dir/venv
  if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    step "installing matplotlib into ${venv/#"$HOME"/\~} (for the charts)"
    if python3 -m venv "$venv" && "$venv/bin/pip" install -q matplotlib; then :; else
      log "WARNING: no matplotlib: the report will have tables but no charts"
    fi
  fi
  if "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then py=$venv/bin/python; else py=python3; fi
fi

classpath=""
if contains "$BASELINES" netty; then
  key=$(sha1sum pom.xml service/pom.xml | sha1sum | cut -c1-12)
  classpath_file=$cache_dir/classpath-$key.txt
  if [ ! -s "$classpath_file" ]; then
    step "resolving the service's runtime classpath for the Netty baseline"
    bin/with-jdk ./mvnw -B -q -f service/pom.xml dependency:build-classpath \
      -Dmdep.includeScope=runtime -Dmdep.outputFile="$classpath_file"
  fi
  classpath=$(cat "$classpath_file")
fi

cluster_ports=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))")
single_port=$((PORT_BASE + 10))
netty_port=$((PORT_BASE + 11))
for port in "${cluster_ports[@]}" "$single_port" "$netty_port"; do
  port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
done

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "command: $(printf '%q ' env RATES="$RATES" DURATION="$DURATION" SCENARIOS="$SCENARIOS" \
    REPLICAS_LIST="$REPLICAS_LIST" KEYSPACE="$KEYSPACE" VALUE_SIZE="$VALUE_SIZE" BASELINES="$BASELINES" loadtest/run.sh)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- service 2>/dev/null || echo ' (service/ has uncommitted changes)')"
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
  echo "load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "java: $(bin/with-jdk java -version 2>&1 | head -n 1)"
  echo "k6: $("$k6" version 2>/dev/null | head -n 1)"
  echo "heap: -Xmx$NODE_HEAP"
  echo "clock ticks: $(getconf CLK_TCK)"
  echo "warm-up: mixed at $WARMUP_RATE/s for $WARMUP per target"
  [ -z "$SLOW_NODE_DELAY" ] || echo "slow node: the cluster's third node answers replica calls $SLOW_NODE_DELAY late"
  for v in DISTRIBUTION VUS MAX_VUS P99_MS READ_RATIO DELETE_RATIO RANGE_SIZE EXECUTOR STAGES RATE_START ZIPF_THETA TIMEOUT; do
    [ -z "${!v:-}" ] || echo "$v: ${!v}"
  done
} >"$run_dir/env.txt"
log "results: ${run_dir#"$repo"/}"
sed 's/^/    /' "$run_dir/env.txt"

rss_sampler &
sampler_pid=$!

# ---- k6 runs ---------------------------------------------------------------------------------------
threshold_misses=0
run_k6() { # target scenario replicas rate nodes
  local target=$1 scenario=$2 replicas=$3 rate=$4 nodes=$5
  local label="${target}_${scenario}_${replicas//\//of}_${rate}"
  local summary=$run_dir/k6/$label.json csv=$run_dir/k6/$label.csv.gz start end rc=0
  local send_replicas=$replicas
  [ "$send_replicas" != default ] && [ "$send_replicas" != - ] || send_replicas=""
  log "k6: $scenario on $target, replicas $replicas, $rate/s for $DURATION"
  start=$(date +%s)
  "$k6" run --out "csv=$csv" \
    -e SCENARIO="$scenario" -e RATE="$rate" -e REPLICAS="$send_replicas" -e NODES="$nodes" \
    -e SUMMARY_JSON="$summary" loadtest/kv.js 2>&1 | tee "$run_dir/k6/$label.log" || rc=$?
  end=$(date +%s)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$scenario" "$replicas" "$rate" "$DURATION" \
    "$start" "$end" "$rc" "k6/$label.json" "k6/$label.csv.gz" >>"$run_dir/runs.tsv"
  # Per-second buckets for the charts; the raw per-request CSV is large.
  if [ -f "$csv" ]; then
    "$py" loadtest/report.py --timeline "$csv" "$run_dir/k6/$label.timeline.csv" || log "WARNING: no timeline for $label"
    [ "${KEEP_RAW:-0}" = 1 ] || rm -f "$csv"
  fi
  case $rc in
    0) ;;
    99) threshold_misses=$((threshold_misses + 1)); log "thresholds missed (k6 exit 99)" ;;
    *) log "WARNING: k6 exited with $rc" ;;
  esac
  [ ! -f "$summary" ] || printf '    %s\n' "$("$py" loadtest/report.py --line "$summary")"
  [ "$target" = netty ] || scrape_metrics "$label" "$nodes"
}

fill() { # target nodes
  local target=$1 nodes=$2 rc=0
  "$k6" run -e NODES="$nodes" -e REPLICAS= -e SUMMARY_JSON="$run_dir/k6/${target}_fill.json" \
    loadtest/fill.js 2>&1 | tee "$run_dir/k6/${target}_fill.log" || rc=$?
  scrape_metrics "${target}_fill" "$nodes"
  [ "$rc" -eq 0 ] || die "fill of $target failed (k6 exit $rc): see ${run_dir#"$repo"/}/k6/${target}_fill.log"
}

warmup() { # target nodes: JIT compilation and connection pools warm, results not in the report
  local target=$1 nodes=$2
  [ "$WARMUP" != 0 ] || return 0
  "$k6" run -e SCENARIO=mixed -e RATE="$WARMUP_RATE" -e DURATION="$WARMUP" -e REPLICAS= -e NODES="$nodes" \
    -e FILLED=0 -e SUMMARY_JSON="$run_dir/k6/${target}_warmup.json" loadtest/kv.js \
    >"$run_dir/k6/${target}_warmup.log" 2>&1 || true
  [ ! -f "$run_dir/k6/${target}_warmup.json" ] ||
    printf '    warm-up %s\n' "$("$py" loadtest/report.py --line "$run_dir/k6/${target}_warmup.json")"
  [ "$target" = netty ] || scrape_metrics "${target}_warmup" "$nodes"
}

# Each node's Actuator metrics after a run (counters since the node started), and a digest of
# what explains 504s: answers without enough replicas, replica calls that failed or that an open
# circuit breaker rejected, breakers not closed right now.
scrape_metrics() { # label urls (comma-separated)
  local label=$1 url port digest urls
  mkdir -p "$run_dir/metrics"
  IFS=, read -ra urls <<<"$2"
  for url in "${urls[@]}"; do
    port=${url##*:}
    curl -fs --max-time 5 "$url/actuator/prometheus" >"$run_dir/metrics/$label-$port.prom" 2>/dev/null || continue
    digest=$(awk '
      /^ringkv_client_not_enough_replicas_total/ { n += $NF }
      /^ringkv_replica_calls_seconds_count/ && /outcome="failure"/ { f += $NF }
      /^ringkv_replica_calls_seconds_count/ && /outcome="rejected"/ { r += $NF }
      /^ringkv_replica_breaker_state/ && $NF > 0 { b++ }
      END { printf "504s %d, replica calls failed %d, rejected by a breaker %d, breakers not closed %d", n, f, r, b }' \
      "$run_dir/metrics/$label-$port.prom")
    printf '    node %s since start: %s\n' "$port" "$digest"
  done
}

needs_fill=0
for s in get mixed range; do contains "$SCENARIOS" "$s" && needs_fill=1; done

# One target, already started: warm-up, fill, every scenario at every rate, then stopped.
measure() { # target nodes process-name-prefix replicas-list fill(1|0)
  local target=$1 nodes=$2 prefix=$3 replicas_list=$4 with_fill=$5 since scenario replicas rate list
  since=$(date +%s)
  step "warming $target up: mixed at $WARMUP_RATE/s for $WARMUP"
  warmup "$target" "$nodes"
  if [ "$with_fill" = 1 ] && [ "$needs_fill" = 1 ]; then
    step "filling $target with $KEYSPACE keys of $VALUE_SIZE B"
    fill "$target" "$nodes"
  fi
  step "scenarios on $target"
  for scenario in $SCENARIOS; do
    list=$replicas_list
    # Ranges take no replicas: they always merge every node.
    [ "$scenario" != range ] || [ "$list" = - ] || list=default
    for replicas in $list; do
      for rate in $RATES; do run_k6 "$target" "$scenario" "$replicas" "$rate" "$nodes"; done
    done
  done
  print_peaks "$since" "$prefix"
  step "stopping $target"
  stop_all
}

# ---- the cluster -----------------------------------------------------------------------------------
step "starting a three-node cluster"
peers=$(printf 'http://127.0.0.1:%s,' "${cluster_ports[@]}"); peers=${peers%,}
for port in "${cluster_ports[@]}"; do
  slow=()
  # The seed's slow-node scenario: the last node answers every replica call late.
  [ -z "$SLOW_NODE_DELAY" ] || [ "$port" != "${cluster_ports[2]}" ] || slow=(--ringkv.testing.replica-delay="$SLOW_NODE_DELAY")
  start_java "node-$port" "$run_dir/logs/node-$port.log" -jar "$node_jar" \
    --server.port="$port" --ringkv.data-dir="$data_dir/node-$port" \
    --ringkv.cluster.self="http://127.0.0.1:$port" --ringkv.cluster.peers="$peers" "${slow[@]}"
done
for i in "${!cluster_ports[@]}"; do
  wait_ready "http://127.0.0.1:${cluster_ports[$i]}" "${pids[$i]}" "$run_dir/logs/node-${cluster_ports[$i]}.log"
done
measure cluster "$peers" node- "$REPLICAS_LIST" 1

# ---- baseline: one node alone ----------------------------------------------------------------------
if contains "$BASELINES" single; then
  step "baseline: one ringkv node alone"
  url=http://127.0.0.1:$single_port
  start_java "single-$single_port" "$run_dir/logs/single-$single_port.log" -jar "$node_jar" \
    --server.port="$single_port" --ringkv.data-dir="$data_dir/single-$single_port" --ringkv.cluster.self="$url"
  wait_ready "$url" "${pids[0]}" "$run_dir/logs/single-$single_port.log"
  measure single "$url" single- - 1
fi

# ---- baseline: bare Reactor Netty ------------------------------------------------------------------
if contains "$BASELINES" netty; then
  step "baseline: bare Reactor Netty answering from memory"
  url=http://127.0.0.1:$netty_port
  start_java "netty-$netty_port" "$run_dir/logs/netty-$netty_port.log" -cp "$classpath" \
    loadtest/baseline/NettyBaseline.java "$netty_port" "$VALUE_SIZE"
  wait_ready "$url" "${pids[0]}" "$run_dir/logs/netty-$netty_port.log"
  # It answers from memory: nothing to fill.
  measure netty "$url" netty- - 0
fi

# ---- report ----------------------------------------------------------------------------------------
step "writing the report"
"$py" loadtest/report.py "$run_dir"
step ""
log "report: ${run_dir#"$repo"/}/report.md"
for png in "$run_dir"/charts/*.png; do [ ! -f "$png" ] || echo "    ${png#"$repo"/}"; done
if [ "$threshold_misses" -gt 0 ]; then
  log "$threshold_misses run(s) missed their thresholds (marked in the report)"
  [ "${FAIL_ON_THRESHOLDS:-0}" != 1 ] || exit 1
fi
