#!/usr/bin/env bash
# The one-command local benchmark of ringkv: builds the jar if needed, then, one target after the
# other (each started fresh, measured, stopped): a three-node ringkv cluster, the same with an
# fsync per write, one ringkv node alone, a bare Reactor Netty server answering from memory, and
# a three-member etcd cluster, all on loopback; k6 scenarios at each offered rate (open model),
# then one closed-loop wrk run per target. Writes loadtest/results/<timestamp>/ with report.md
# and charts.
#
#   loadtest/run.sh
#   RATES="200" DURATION=5s KEYSPACE=2000 SCENARIOS="get mixed" REPLICAS_LIST="2/3" loadtest/run.sh
#   JAR=/tmp/a.jar TARGETS=cluster loadtest/run.sh; JAR=/tmp/b.jar TARGETS=cluster loadtest/run.sh
#
# Settings (environment):
#   TARGETS        "cluster cluster-sync single netty webflux etcd"   what to measure, in this order:
#                    cluster       three ringkv nodes (WAL written, not fsynced per write)
#                    cluster-sync  the same with --ringkv.storage.sync-writes=true (fsync per write)
#                    single        one ringkv node alone
#                    netty         loadtest/baseline/NettyBaseline.java: HTTP from memory, no storage
#                    webflux       loadtest/baseline/WebFluxBaseline.java: the same through Spring
#                                  WebFlux's functional endpoints, the framework ringkv's API runs on
#                    etcd          three etcd members (Raft, fsync per write on every member; reads
#                                  linearizable), through etcd's JSON gateway; no range, no replicas
#                  (BASELINES is gone: name the baselines in TARGETS)
#   SCENARIOS      put get mixed range       scenarios to run (loadtest/kv.js)
#   REPLICAS_LIST  "2/3 3/3"                  replicas for put/get/mixed on the clusters; "default"
#                                             sends none (majority); range never takes replicas
#   RATES          "300 600 1200 2400"        offered rates (requests/s), one k6 run each; on a
#                                             2-core machine the knees of all targets are in it
#   DURATION       20s                        length of each run
#   KEYSPACE       20000                      keys filled and used; VALUE_SIZE 1024 bytes per value
#   WARMUP         120s                       before measuring on each target (and before the fill),
#                                             a mixed run at WARMUP_RATE (default: the first of
#                                             RATES) whose results are kept apart; 0 skips it.
#                                             The JIT needs it: three nodes share two cores, and
#                                             after 30 s at 1000/s the C2 compiler still took 37-39 %
#                                             of each node's CPU (p99 25 ms; after 120 s, 8.4 ms)
#   COLD_RATE      300                        cluster, cluster-sync: as soon as every node answers
#   COLD_DURATION  30s                        /actuator/health/readiness (each node's time to ready
#                                             is recorded), k6 mixed at COLD_RATE with replicas 2/3
#                                             on the empty store, before the warm-up; 0 skips it
#   WRK=1          after each target's k6 runs, one closed-loop wrk run of the mixed load: three
#                  wrk processes (-t1 -c$WRK_CONNECTIONS, default 16), one per node (single,
#                  netty, webflux: all three to the one node), for WRK_DURATION (20s); 0 skips it
#   PROFILE=0      1: cpu, alloc and lock flame graphs (async-profiler 4.5 from Maven Central,
#                  attached with jcmd) of every JVM of the target for every measured run, in
#                  profiles/<run>/; PROFILE_ALLOC (512k) and PROFILE_LOCK (10us) set the sampling
#   JAR=path       run that ringkv jar instead of building service/target/ringkv.jar (implies NO_BUILD)
#   AOT=1          start ringkv nodes with the JVM's ahead-of-time cache, as the image does
#                  (bin/aot-cache: the jar extracted and a training run, kept in the cache dir per
#                  jar); 0 starts them from the fat jar. A jar without the training mode (older
#                  builds) always starts without.
#   NODE_HEAP      256m                       -Xmx of every JVM started (ringkv nodes: bin/node --heap,
#                                             direct memory a quarter of it)
#   PORT_BASE      18080                      clusters on PORT_BASE..+2, single node +10, netty +11, webflux +12,
#                                             etcd clients +20..+22 and peers +30..+32
#   SLOW_NODE_DELAY  unset                    e.g. 50ms: the clusters' third node answers every replica
#                                             call that much late (ringkv.testing.replica-delay, from
#                                             the tests' service/target/ringkv-faults.jar)
#   NO_BUILD=1     never build the jar          KEEP_DATA=1  keep the RocksDB and etcd data after the run
#   KEEP_RAW=1     keep k6's per-request CSVs (the cold run's is always kept) and the profiles' .jfr
#   TIMELINE=0     1: per-second timelines (the over-time charts) of every k6 run, from k6's
#                  per-request CSV output; 0 writes them for the cold runs only. The CSV costs k6
#                  CPU that the servers then lack (a dozen rows per request): with it, bare Netty's
#                  p99 at 3000/s was 51.7 ms, without it 6.3 ms
#   K6=path        the k6 binary to use
#   FAIL_ON_THRESHOLDS=1  exit 1 when a run missed its thresholds (default: report them, exit 0)
# wrk and etcd come from Debian's packages (wrk, etcd-server): installed with apt-get when missing
# (as root). Everything else (VUS, MAX_VUS, P99_MS, DISTRIBUTION, READ_RATIO, RANGE_SIZE, EXECUTOR,
# ...) is passed through to k6: see loadtest/BENCHMARKS.md. Only loopback addresses are ever targeted.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=loadtest
. bin/lib/common.sh
. loadtest/lib/targets.sh # start_server, stop_all, rss_sampler, start_etcd, apt_install

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

[ -z "${BASELINES+x}" ] || die "BASELINES is gone: use TARGETS, e.g. TARGETS=\"cluster single netty\" (default: \"cluster cluster-sync single netty webflux etcd\")"

TARGETS=${TARGETS:-"cluster cluster-sync single netty webflux etcd"}
SCENARIOS=${SCENARIOS:-"put get mixed range"}
REPLICAS_LIST=${REPLICAS_LIST:-"2/3 3/3"}
RATES=${RATES:-"300 600 1200 2400"}
DURATION=${DURATION:-20s}
KEYSPACE=${KEYSPACE:-20000}
VALUE_SIZE=${VALUE_SIZE:-1024}
NODE_HEAP=${NODE_HEAP:-256m}
PORT_BASE=${PORT_BASE:-18080}
WARMUP=${WARMUP:-120s}
SLOW_NODE_DELAY=${SLOW_NODE_DELAY:-}
COLD_RATE=${COLD_RATE:-300}
COLD_DURATION=${COLD_DURATION:-30s}
WRK=${WRK:-1}
TIMELINE=${TIMELINE:-0}
WRK_CONNECTIONS=${WRK_CONNECTIONS:-16}
WRK_DURATION=${WRK_DURATION:-20s}
PROFILE=${PROFILE:-0}
PROFILE_ALLOC=${PROFILE_ALLOC:-512k}
PROFILE_LOCK=${PROFILE_LOCK:-10us}
JAR=${JAR:-}
read -r first_rate _ <<<"$RATES"
WARMUP_RATE=${WARMUP_RATE:-$first_rate}
export KEYSPACE VALUE_SIZE DURATION
export K6_NO_USAGE_REPORT=true # k6 would otherwise phone home at the end of each run
export K6_CSV_TIME_FORMAT=unix_milli

readonly ALL_TARGETS="cluster cluster-sync single netty webflux etcd"
contains() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }
for t in $TARGETS; do contains "$ALL_TARGETS" "$t" || die "unknown target \"$t\" in TARGETS: pick from $ALL_TARGETS"; done
[ -n "${TARGETS// /}" ] || die "TARGETS is empty"
case $WRK in 0 | 1) ;; *) die "WRK must be 0 or 1, got \"$WRK\"" ;; esac
case $PROFILE in 0 | 1) ;; *) die "PROFILE must be 0 or 1, got \"$PROFILE\"" ;; esac
if [ -n "$JAR" ]; then
  [ -f "$JAR" ] || die "JAR=$JAR: no such file"
  NO_BUILD=1
fi

cache_dir=${LOADTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run_dir=$repo/loadtest/results/$stamp
data_dir=$run_dir/data
mkdir -p "$run_dir/k6" "$run_dir/logs" "$data_dir" "$cache_dir"
: >"$run_dir/procs.tsv"
printf 'target\tscenario\treplicas\trate\tduration\tstart\tend\trc\tsummary\tcsv\n' >"$run_dir/runs.tsv"
printf 'step\tseconds\n' >"$run_dir/timings.tsv"

step_start=$(date +%s)
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

# ---- processes: everything started here is stopped on exit ---------------------------------------
pids=()    # the servers of the target being measured (JVMs, etcd members)
helpers=() # short-lived helpers in the background (readiness pollers, wrk processes)
sampler_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_started
  if [ "${KEEP_DATA:-0}" != 1 ]; then rm -rf "$data_dir"; fi
  # Stopped part-way: still report what was measured.
  if [ "$rc" -ne 0 ] && [ -n "${py:-}" ] && [ ! -f "$run_dir/report.md" ] &&
    [ "$(wc -l <"$run_dir/runs.tsv")" -gt 1 ]; then
    "$py" loadtest/report.py "$run_dir" || true
  fi
  [ "$rc" -eq 0 ] || log "stopped (exit $rc); what was measured is in ${run_dir#"$repo"/}"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# PROFILE=1: async-profiler is loaded into the running JVM before each run (no warning about a
# dynamically loaded agent), and the JIT keeps debug info at every instruction, not only at
# safepoints, so that inlined frames are attributed right.
profile_flags=()
[ "$PROFILE" != 1 ] || profile_flags=(-XX:+EnableDynamicAgentLoading -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints)

print_peaks() { # since-epoch process-name-prefix
  [ -s "$run_dir/rss.tsv" ] || return 0
  awk -F'\t' -v since="$1" -v prefix="$2" '$1 >= since && index($2, prefix) == 1 && $4 > peak[$2] { peak[$2] = $4 }
    END { for (n in peak) printf "    peak RSS %-12s %6.0f MiB\n", n, peak[n] / 1024 }' "$run_dir/rss.tsv" | sort
}

# ---- tools ---------------------------------------------------------------------------------------
step "checking tools"
if [ -n "$JAR" ]; then
  jar=$JAR
  log "jar: $jar (JAR is set: nothing is built)"
else
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
fi
# The nodes run a copy, so a rebuild during the benchmark cannot change the jar under them.
cp "$jar" "$data_dir/ringkv.jar"
node_jar=$data_dir/ringkv.jar
if [ -n "$SLOW_NODE_DELAY" ]; then
  # The slow node's delay is test code, apart from ringkv.jar: the tests' fault injection.
  [ -f service/target/ringkv-faults.jar ] ||
    die "SLOW_NODE_DELAY needs service/target/ringkv-faults.jar: bin/with-jdk ./mvnw -B -DskipTests package builds it"
  cp service/target/ringkv-faults.jar "$data_dir/ringkv-faults.jar"
fi

# wrk and etcd: Debian's packages, installed when missing (CI machines start fresh).
[ "$WRK" != 1 ] || apt_install wrk wrk "or set WRK=0"
if contains "$TARGETS" etcd; then
  apt_install etcd etcd-server "or leave etcd out of TARGETS"
  if [ "$(pgrep -x etcd | wc -l)" -gt 0 ]; then log "WARNING: an etcd not started by run.sh is running (pid $(pgrep -x etcd | tr '\n' ' ')): it shares the CPU"; fi
fi

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
if contains "$TARGETS" netty || contains "$TARGETS" webflux; then
  key=$(sha1sum pom.xml service/pom.xml | sha1sum | cut -c1-12)
  classpath_file=$cache_dir/classpath-$key.txt
  if [ ! -s "$classpath_file" ]; then
    step "resolving the service's runtime classpath for the Netty and WebFlux baselines"
    bin/with-jdk ./mvnw -B -q -f service/pom.xml dependency:build-classpath \
      -Dmdep.includeScope=runtime -Dmdep.outputFile="$classpath_file"
  fi
  classpath=$(cat "$classpath_file")
fi

# async-profiler and its JFR converter, from Maven Central once into the cache.
readonly AP_VERSION=4.5
ap_lib="" ap_conv=""
if [ "$PROFILE" = 1 ]; then
  case $(uname -m) in
    x86_64) ap_arch=linux-x64 ;;
    aarch64) ap_arch=linux-arm64 ;;
    *) die "PROFILE=1: async-profiler's jar has no library for $(uname -m)" ;;
  esac
  ap_dir=$cache_dir/async-profiler-$AP_VERSION
  ap_lib=$ap_dir/$ap_arch/libasyncProfiler.so
  ap_conv=$ap_dir/jfr-converter-$AP_VERSION.jar
  if [ ! -f "$ap_lib" ] || [ ! -f "$ap_conv" ]; then
    step "fetching async-profiler $AP_VERSION and jfr-converter $AP_VERSION (Maven Central)"
    mkdir -p "$ap_dir"
    for artifact in async-profiler jfr-converter; do
      bin/with-jdk ./mvnw -B -q -N dependency:copy -Dartifact="tools.profiler:$artifact:$AP_VERSION" \
        -DoutputDirectory="$ap_dir" || die "could not fetch tools.profiler:$artifact:$AP_VERSION"
    done
    (cd "$ap_dir" && "$repo/bin/with-jdk" jar xf "async-profiler-$AP_VERSION.jar" "$ap_arch/libasyncProfiler.so")
    [ -f "$ap_lib" ] && [ -f "$ap_conv" ] || die "no $ap_lib or $ap_conv after fetching async-profiler"
  fi
  log "async-profiler: $ap_lib"
fi

cluster_ports=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))")
single_port=$((PORT_BASE + 10))
netty_port=$((PORT_BASE + 11))
webflux_port=$((PORT_BASE + 12))
etcd_client_ports=("$((PORT_BASE + 20))" "$((PORT_BASE + 21))" "$((PORT_BASE + 22))")
etcd_peer_ports=("$((PORT_BASE + 30))" "$((PORT_BASE + 31))" "$((PORT_BASE + 32))")
ports=()
for t in $TARGETS; do
  case $t in
    cluster | cluster-sync) ports+=("${cluster_ports[@]}") ;;
    single) ports+=("$single_port") ;;
    netty) ports+=("$netty_port") ;;
    webflux) ports+=("$webflux_port") ;;
    etcd) ports+=("${etcd_client_ports[@]}" "${etcd_peer_ports[@]}") ;;
  esac
done
for port in $(printf '%s\n' "${ports[@]}" | sort -u); do
  port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
done

# One random cluster secret per benchmark, given to every ringkv node (internal calls carry it).
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

jar_sum=$(sha256sum "$node_jar" | cut -c1-16)

# How ringkv nodes are launched (bin/node, as bin/cluster and the tests launch them): from the fat
# jar, or (AOT=1, a jar that has the training mode) from its extracted form with the ahead-of-time
# cache, the way the container image starts them.
ringkv_node=(bin/node --heap "$NODE_HEAP")
for flag in "${profile_flags[@]}"; do ringkv_node+=(--jvm "$flag"); done
# On every node's class path; only the slow node sets the delay.
[ -z "$SLOW_NODE_DELAY" ] || ringkv_node+=(--faults "$data_dir/ringkv-faults.jar")
launch_jar=(--jar "$node_jar")
aot_used="no (AOT=${AOT:-1})"
if [ "${AOT:-1}" = 1 ]; then
  # Listed first: grep -q would stop reading early, and pipefail would take unzip's SIGPIPE for a no.
  jar_listing=$(unzip -l "$node_jar" 2>/dev/null || true)
  if [[ $jar_listing == *io/ringkv/startup/TrainingRun.class* ]]; then
    step "ahead-of-time cache for the jar (bin/aot-cache; trained once per jar, then kept)"
    mkdir -p "$cache_dir/aot"
    [ -f "$cache_dir/aot/ringkv-$jar_sum.jar" ] || cp "$node_jar" "$cache_dir/aot/ringkv-$jar_sum.jar"
    aot_dir=$(bin/aot-cache "$cache_dir/aot/ringkv-$jar_sum.jar") || die "bin/aot-cache failed"
    launch_jar=(--jar "$cache_dir/aot/ringkv-$jar_sum.jar" --aot)
    aot_used="yes: $aot_dir/ringkv.aot"
  else
    aot_used="no: this jar has no training mode (io.ringkv.startup.TrainingRun)"
  fi
fi
ringkv_node+=("${launch_jar[@]}")
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "ahead-of-time cache: $aot_used"
  echo "command: $(printf '%q ' env TARGETS="$TARGETS" RATES="$RATES" DURATION="$DURATION" SCENARIOS="$SCENARIOS" \
    REPLICAS_LIST="$REPLICAS_LIST" KEYSPACE="$KEYSPACE" VALUE_SIZE="$VALUE_SIZE" WARMUP="$WARMUP" \
    COLD_DURATION="$COLD_DURATION" WRK="$WRK" WRK_DURATION="$WRK_DURATION" PROFILE="$PROFILE" \
    ${JAR:+JAR="$JAR"} loadtest/run.sh)"
  if [ -n "$JAR" ]; then
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) (the checkout; the nodes run JAR, not a build of it)"
  else
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- service 2>/dev/null || echo ' (service/ has uncommitted changes)')"
  fi
  echo "jar: $jar, sha256 $jar_sum…, $(($(stat -c %s "$node_jar") / 1048576)) MiB, modified $(date -u -r "$jar" '+%Y-%m-%d %H:%M:%S UTC')"
  echo "targets: $TARGETS"
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
  echo "load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "java: $(bin/with-jdk java -version 2>&1 | head -n 1)"
  echo "k6: $("$k6" version 2>/dev/null | head -n 1)"
  [ "$WRK" != 1 ] || echo "wrk: $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
  ! contains "$TARGETS" etcd || echo "etcd: $(etcd --version 2>/dev/null | head -n 1 | sed 's/^etcd Version: //')"
  echo "heap: -Xmx$NODE_HEAP (ringkv nodes: direct memory a quarter of it, as bin/node --heap sizes it)"
  echo "clock ticks: $(getconf CLK_TCK)"
  # What an acknowledged write survives, and what a read sees, for each store measured.
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
  echo "cluster secret: a random one per benchmark, given to every ringkv node (--ringkv.cluster.secret)"
  echo "warm-up: mixed at $WARMUP_RATE/s for $WARMUP per target"
  if contains "$TARGETS" cluster || contains "$TARGETS" cluster-sync; then
    echo "cold start (cluster targets): mixed at $COLD_RATE/s, replicas 2/3, for $COLD_DURATION on the empty store as soon as every node is ready"
  fi
  [ "$WRK" != 1 ] ||
    echo "wrk: closed loop, mixed (READ_RATIO ${READ_RATIO:-0.5}, uniform keys), 3 processes × -t1 -c$WRK_CONNECTIONS for $WRK_DURATION per target"
  [ -z "$SLOW_NODE_DELAY" ] || echo "slow node: the clusters' third node answers replica calls $SLOW_NODE_DELAY late"
  for v in DISTRIBUTION VUS MAX_VUS P99_MS READ_RATIO DELETE_RATIO RANGE_SIZE EXECUTOR STAGES RATE_START ZIPF_THETA TIMEOUT; do
    [ -z "${!v:-}" ] || echo "$v: ${!v}"
  done
} >"$run_dir/env.txt"
log "results: ${run_dir#"$repo"/}"
sed 's/^/    /' "$run_dir/env.txt"

rss_sampler &
sampler_pid=$!

# ---- profiles (PROFILE=1) --------------------------------------------------------------------------
# async-profiler is loaded into every JVM of the target (not etcd, not k6 or wrk) before a measured
# run and stopped after it: one JFR per JVM with cpu, alloc and lock samples, then three flame
# graphs each, profiles/<run>/<process>-{cpu,alloc,lock}.html.
profiled=() # "name pid jfr" of the recordings under way
jcmd_agent() { # pid options: the options are one quoted argument, or jcmd would split them at '='
  bin/with-jdk jcmd "$1" JVMTI.agent_load "$ap_lib" "\"$2\"" >>"$run_dir/profiles/jcmd.log" 2>&1
}
profile_start() { # run-label
  [ "$PROFILE" = 1 ] || return 0
  local label=$1 name pid dir=$run_dir/profiles/$1 entry jfr waits=()
  profiled=()
  while IFS=$'\t' read -r name pid; do
    case $name in etcd-*) continue ;; esac # JVMs only
    [ -z "$pid" ] || profiled+=("$name $pid $dir/$name.jfr")
  done <"$run_dir/procs.tsv"
  [ ${#profiled[@]} -gt 0 ] || return 0
  mkdir -p "$dir"
  for entry in "${profiled[@]}"; do
    read -r name pid jfr <<<"$entry"
    jcmd_agent "$pid" "start,event=cpu,alloc=$PROFILE_ALLOC,lock=$PROFILE_LOCK,jfr,file=$jfr" &
    waits+=($!)
  done
  [ ${#waits[@]} -eq 0 ] || wait "${waits[@]}" || log "WARNING: starting the profiler failed somewhere: see profiles/jcmd.log and the node logs"
}
profile_stop() { # run-label
  [ "$PROFILE" = 1 ] || return 0
  local label=$1 entry name pid jfr kind waits=()
  for entry in "${profiled[@]}"; do
    read -r name pid jfr <<<"$entry"
    jcmd_agent "$pid" stop &
    waits+=($!)
  done
  [ ${#waits[@]} -eq 0 ] || wait "${waits[@]}" || log "WARNING: stopping the profiler failed somewhere: see profiles/jcmd.log"
  for entry in "${profiled[@]}"; do
    read -r name pid jfr <<<"$entry"
    if [ ! -s "$jfr" ]; then log "WARNING: no profile from $name (${jfr#"$repo"/})"; continue; fi
    if ! grep -q '^profiler:' "$run_dir/env.txt"; then
      # Which engine sampled the CPU: perf_events, or a timer (ctimer) where perf_events is not allowed.
      local engine
      engine=$(bin/with-jdk jfr print --events jdk.ActiveSetting "$jfr" 2>/dev/null |
        awk '/name = "engine"/ { getline; sub(/.*= "/, ""); sub(/".*/, ""); print; exit }')
      echo "profiler: async-profiler $AP_VERSION, loaded with jcmd JVMTI.agent_load around each measured run; cpu engine: ${engine:-unknown} (kernel.perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')); alloc sampled every $PROFILE_ALLOC, lock every $PROFILE_LOCK of contention" >>"$run_dir/env.txt"
      log "profiler: cpu engine ${engine:-unknown}"
    fi
    for kind in cpu alloc lock; do
      bin/with-jdk java -jar "$ap_conv" --"$kind" --title "$label: $name, $kind" "$jfr" "${jfr%.jfr}-$kind.html" \
        >>"$run_dir/profiles/convert.log" 2>&1 || log "WARNING: no $kind flame graph for $name in $label"
    done
    [ "${KEEP_RAW:-0}" = 1 ] || rm -f "$jfr"
  done
  profiled=()
}

# ---- k6 runs ---------------------------------------------------------------------------------------
store=ringkv # what the current target speaks: ringkv (also netty) or etcd
threshold_misses=0
run_k6() { # target scenario replicas rate nodes [cold]
  local target=$1 scenario=$2 replicas=$3 rate=$4 nodes=$5 kind=${6:-}
  local row_scenario=$scenario duration=$DURATION extra=()
  if [ "$kind" = cold ]; then
    # The cold start: on the empty store (a GET may answer 404), raw CSV kept for the report.
    row_scenario=cold-$scenario duration=$COLD_DURATION extra=(-e FILLED=0 -e DURATION="$COLD_DURATION")
  fi
  local label="${target}_${row_scenario}_${replicas//\//of}_${rate}"
  local summary=$run_dir/k6/$label.json csv=$run_dir/k6/$label.csv.gz start end rc=0
  local out=(--out "csv=$csv")
  [ "$TIMELINE" = 1 ] || [ "$kind" = cold ] || out=()
  local send_replicas=$replicas
  [ "$send_replicas" != default ] && [ "$send_replicas" != - ] || send_replicas=""
  log "k6: $row_scenario on $target, replicas $replicas, $rate/s for $duration"
  profile_start "$label"
  start=$(date +%s)
  "$k6" run "${out[@]}" "${extra[@]}" -e STORE="$store" \
    -e SCENARIO="$scenario" -e RATE="$rate" -e REPLICAS="$send_replicas" -e NODES="$nodes" \
    -e SUMMARY_JSON="$summary" loadtest/kv.js 2>&1 | tee "$run_dir/k6/$label.log" || rc=$?
  end=$(date +%s)
  profile_stop "$label"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$row_scenario" "$replicas" "$rate" "$duration" \
    "$start" "$end" "$rc" "k6/$label.json" "k6/$label.csv.gz" >>"$run_dir/runs.tsv"
  # Per-second buckets for the charts; the raw per-request CSV is large.
  if [ -f "$csv" ]; then
    "$py" loadtest/report.py --timeline "$csv" "$run_dir/k6/$label.timeline.csv" || log "WARNING: no timeline for $label"
    [ "${KEEP_RAW:-0}" = 1 ] || [ "$kind" = cold ] || rm -f "$csv"
  fi
  case $rc in
    0) ;;
    99)
      # A cold start is expected to miss them: it is measured, not judged.
      [ "$kind" = cold ] || threshold_misses=$((threshold_misses + 1))
      log "thresholds missed (k6 exit 99)"
      ;;
    *) log "WARNING: k6 exited with $rc" ;;
  esac
  [ ! -f "$summary" ] || printf '    %s\n' "$("$py" loadtest/report.py --line "$summary")"
  scrape_metrics "$label" "$nodes"
}

fill() { # target nodes
  local target=$1 nodes=$2 rc=0
  "$k6" run -e STORE="$store" -e NODES="$nodes" -e REPLICAS= -e SUMMARY_JSON="$run_dir/k6/${target}_fill.json" \
    loadtest/fill.js 2>&1 | tee "$run_dir/k6/${target}_fill.log" || rc=$?
  scrape_metrics "${target}_fill" "$nodes"
  [ "$rc" -eq 0 ] || die "fill of $target failed (k6 exit $rc): see ${run_dir#"$repo"/}/k6/${target}_fill.log"
}

warmup() { # target nodes: JIT compilation and connection pools warm, results not in the report
  local target=$1 nodes=$2
  [ "$WARMUP" != 0 ] || return 0
  "$k6" run -e STORE="$store" -e SCENARIO=mixed -e RATE="$WARMUP_RATE" -e DURATION="$WARMUP" -e REPLICAS= -e NODES="$nodes" \
    -e FILLED=0 -e SUMMARY_JSON="$run_dir/k6/${target}_warmup.json" loadtest/kv.js \
    >"$run_dir/k6/${target}_warmup.log" 2>&1 || true
  [ ! -f "$run_dir/k6/${target}_warmup.json" ] ||
    printf '    warm-up %s\n' "$("$py" loadtest/report.py --line "$run_dir/k6/${target}_warmup.json")"
  scrape_metrics "${target}_warmup" "$nodes"
}

# ---- wrk: the mixed load, closed loop ----------------------------------------------------------------
# Three wrk processes at once, one per node (the same URL three times for one server), each one
# thread with WRK_CONNECTIONS connections; every connection sends its next request as soon as the
# last one answered. Each prints one WRK_SUMMARY line (loadtest/wrk/common.lua).
run_wrk() { # target nodes replicas
  local target=$1 nodes=$2 replicas=$3 urls i url rc=0 r start end files=() waits=()
  [ "$WRK" = 1 ] || return 0
  local label=${target}_wrk-mixed script=loadtest/wrk/$store.lua
  [ "$replicas" = - ] || label+=_${replicas//\//of}
  local send_replicas=$replicas
  [ "$send_replicas" != default ] && [ "$send_replicas" != - ] || send_replicas=""
  IFS=, read -ra urls <<<"$nodes"
  [ ${#urls[@]} -ge 3 ] || urls=("${urls[0]}" "${urls[0]}" "${urls[0]}")
  mkdir -p "$run_dir/wrk"
  step "wrk on $target: mixed, closed loop, 3 × -t1 -c$WRK_CONNECTIONS for $WRK_DURATION${send_replicas:+, replicas $send_replicas}"
  profile_start "$label"
  start=$(date +%s)
  for i in 0 1 2; do
    url=${urls[$i]}
    files+=("wrk/$label-$((i + 1)).txt")
    printf '# url: %s\n' "$url" >"$run_dir/${files[$i]}"
    KEYSPACE=$KEYSPACE VALUE_SIZE=$VALUE_SIZE READ_RATIO=${READ_RATIO:-0.5} REPLICAS=$send_replicas \
      WRK_DIR=$repo/loadtest/wrk wrk -t1 -c"$WRK_CONNECTIONS" -d"$WRK_DURATION" --timeout "${TIMEOUT:-10s}" \
      -s "$script" "$url" >>"$run_dir/${files[$i]}" 2>&1 &
    waits+=($!)
    helpers+=($!)
  done
  for i in "${waits[@]}"; do
    r=0; wait "$i" || r=$?
    [ "$r" -eq 0 ] || rc=$r
  done
  helpers=()
  end=$(date +%s)
  profile_stop "$label"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" wrk-mixed "$replicas" closed "$WRK_DURATION" \
    "$start" "$end" "$rc" "$(IFS=,; echo "${files[*]}")" - >>"$run_dir/runs.tsv"
  [ "$rc" -eq 0 ] || log "WARNING: a wrk process exited with $rc: see ${run_dir#"$repo"/}/wrk/$label-*.txt"
  printf '    %s\n' "$(cd "$run_dir" && "$py" "$repo/loadtest/report.py" --wrk-line "${files[@]}")"
  scrape_metrics "$label" "$nodes"
}

# Each node's Actuator metrics after a run (counters since the node started), and a digest of
# what explains 504s: answers without enough replicas, replica calls that failed or that an open
# circuit breaker rejected, breakers not closed right now. ringkv targets only.
scrape_metrics() { # label urls (comma-separated)
  local label=$1 url port digest urls
  [ "$store" = ringkv ] && [ "$current_target" != netty ] && [ "$current_target" != webflux ] || return 0
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

needs_fill=$WRK # wrk's mixed load reads keys too
for s in get mixed range; do contains "$SCENARIOS" "$s" && needs_fill=1; done

# One target, already started: warm-up, fill, every scenario at every rate, wrk, then stopped.
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
    if [ "$scenario" = range ] && [ "$store" = etcd ]; then
      log "range: not run on $target (etcd's gateway has no range of ringkv's kind here)"
      continue
    fi
    list=$replicas_list
    # Ranges take no replicas: they always merge every node.
    [ "$scenario" != range ] || [ "$list" = - ] || list=default
    for replicas in $list; do
      for rate in $RATES; do run_k6 "$target" "$scenario" "$replicas" "$rate" "$nodes"; done
    done
  done
  read -r replicas _ <<<"$replicas_list"
  run_wrk "$target" "$nodes" "$replicas"
  print_peaks "$since" "$prefix"
  step "stopping $target"
  stop_all
}

# ---- starting the targets ----------------------------------------------------------------------------
# ringkv nodes are started together, then each one's time from its JVM's start to readiness
# (GET /actuator/health/readiness answering 200, polled every 100 ms) and to /v0/status is
# recorded in startup.tsv.
printf 'target\tprocess\tport\tready_ms\tstatus_ms\n' >"$run_dir/startup.tsv"
ringkv_names=() ringkv_urls=() ringkv_launch=() ringkv_pids=()
start_ringkv() { # target name port peers(or "") extra-args...
  local target=$1 name=$2 port=$3 peers=$4 peer_args=()
  shift 4
  local url=http://127.0.0.1:$port
  [ -z "$peers" ] || peer_args=(--ringkv.cluster.peers="$peers")
  ringkv_launch+=("$(date +%s%3N)")
  start_server "$name" "$run_dir/logs/$name.log" "${ringkv_node[@]}" \
    --server.port="$port" --ringkv.data-dir="$data_dir/$target/$name" --ringkv.cluster.self="$url" \
    "${peer_args[@]}" --ringkv.cluster.secret="$secret" "$@"
  ringkv_names+=("$name") ringkv_urls+=("$url") ringkv_pids+=("${pids[-1]}")
}

poll_ready() { # url pid launch-ms out-file: "ready_ms<TAB>status_ms", or "exited" / "timeout"
  local url=$1 pid=$2 launch=$3 out=$4 ready="" status="" now
  while :; do
    if [ -z "$ready" ] &&
      [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/actuator/health/readiness" 2>/dev/null)" = 200 ]; then
      ready=$(($(date +%s%3N) - launch))
    fi
    if [ -z "$status" ] && curl -fs -o /dev/null --max-time 2 "$url/v0/status" 2>/dev/null; then
      status=$(($(date +%s%3N) - launch))
    fi
    if [ -n "$ready" ] && [ -n "$status" ]; then printf '%s\t%s\n' "$ready" "$status" >"$out"; return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo exited >"$out"; return 1; }
    now=$(date +%s%3N)
    [ $((now - launch)) -lt 120000 ] || { echo timeout >"$out"; return 1; }
    sleep 0.1
  done
}

wait_ringkv_ready() { # target
  local target=$1 i out res waits=()
  for i in "${!ringkv_names[@]}"; do
    poll_ready "${ringkv_urls[$i]}" "${ringkv_pids[$i]}" "${ringkv_launch[$i]}" "$run_dir/logs/${ringkv_names[$i]}.ready" &
    waits+=($!)
    helpers+=($!)
  done
  for i in "${waits[@]}"; do wait "$i" || true; done
  helpers=()
  for i in "${!ringkv_names[@]}"; do
    out=$run_dir/logs/${ringkv_names[$i]}.ready
    res=$(cat "$out" 2>/dev/null || echo missing)
    rm -f "$out"
    case $res in
      exited | timeout | missing)
        tail -n 20 "$run_dir/logs/${ringkv_names[$i]}.log" >&2
        [ "$res" = exited ] && die "${ringkv_names[$i]} exited before it was ready"
        die "${ringkv_urls[$i]} was not ready (readiness and /v0/status) within 120 s"
        ;;
    esac
    printf '%s\t%s\t%s\t%s\n' "$target" "${ringkv_names[$i]}" "${ringkv_urls[$i]##*:}" "$res" >>"$run_dir/startup.tsv"
    log "${ringkv_names[$i]}: ready in $(awk -v ms="${res%%$'\t'*}" 'BEGIN { printf "%.1f", ms / 1000 }') s (readiness 200), /v0/status in $(awk -v ms="${res##*$'\t'}" 'BEGIN { printf "%.1f", ms / 1000 }') s, from its JVM's start"
  done
  ringkv_names=() ringkv_urls=() ringkv_launch=() ringkv_pids=()
}

start_cluster() { # target name-prefix extra-args...
  local target=$1 prefix=$2 port slow
  shift 2
  local peers
  peers=$(printf 'http://127.0.0.1:%s,' "${cluster_ports[@]}"); peers=${peers%,}
  for port in "${cluster_ports[@]}"; do
    slow=()
    # The seed's slow-node scenario: the last node answers every replica call late.
    [ -z "$SLOW_NODE_DELAY" ] || [ "$port" != "${cluster_ports[2]}" ] || slow=(--ringkv.testing.replica-delay="$SLOW_NODE_DELAY")
    start_ringkv "$target" "$prefix$port" "$port" "$peers" "$@" "${slow[@]}"
  done
  wait_ringkv_ready "$target"
  # The cold start: straight after readiness, before any warm-up.
  if [ "$COLD_DURATION" != 0 ] && [ "$COLD_DURATION" != 0s ]; then
    step "cold start of $target: mixed at $COLD_RATE/s, replicas 2/3, $COLD_DURATION on the empty store"
    run_k6 "$target" mixed 2/3 "$COLD_RATE" "$peers" cold
  fi
  cluster_urls=$peers
}

# ---- the targets, one after the other ----------------------------------------------------------------
current_target=""
for current_target in $TARGETS; do
  case $current_target in
    cluster)
      step "starting a three-node cluster"
      store=ringkv
      start_cluster cluster node-
      measure cluster "$cluster_urls" node- "$REPLICAS_LIST" 1
      ;;
    cluster-sync)
      step "starting a three-node cluster with an fsync per write (--ringkv.storage.sync-writes=true)"
      store=ringkv
      start_cluster cluster-sync sync- --ringkv.storage.sync-writes=true
      measure cluster-sync "$cluster_urls" sync- "$REPLICAS_LIST" 1
      ;;
    single)
      step "baseline: one ringkv node alone"
      store=ringkv
      start_ringkv single "single-$single_port" "$single_port" ""
      wait_ringkv_ready single
      measure single "http://127.0.0.1:$single_port" single- - 1
      ;;
    netty | webflux)
      if [ "$current_target" = netty ]; then
        step "baseline: bare Reactor Netty answering from memory"
        port=$netty_port source=loadtest/baseline/NettyBaseline.java
      else
        step "baseline: Spring WebFlux's functional endpoints on Reactor Netty, answering from memory"
        port=$webflux_port source=loadtest/baseline/WebFluxBaseline.java
      fi
      store=ringkv # both speak ringkv's public API
      url=http://127.0.0.1:$port
      start_server "$current_target-$port" "$run_dir/logs/$current_target-$port.log" bin/with-jdk java -Xmx"$NODE_HEAP" \
        -XX:+ExitOnOutOfMemoryError --enable-native-access=ALL-UNNAMED "${profile_flags[@]}" -cp "$classpath" "$source" "$port" "$VALUE_SIZE"
      await_node "$url" "${pids[0]}" "$run_dir/logs/$current_target-$port.log"
      # It answers from memory: nothing to fill.
      measure "$current_target" "$url" "$current_target-" - 0
      ;;
    etcd)
      step "starting a three-member etcd cluster (Raft, fsync per write)"
      store=etcd
      start_etcd # sets etcd_urls
      # shellcheck disable=SC2154 # etcd_urls: set by start_etcd (loadtest/lib/targets.sh)
      measure etcd "$etcd_urls" etcd- - 1
      ;;
  esac
done
current_target=""
store=ringkv

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
