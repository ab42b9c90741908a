#!/usr/bin/env bash
# Conditional writes against etcd's compare-and-swap, same run, same client; and plain requests
# before and after conditional writes came in. A closed loop of k6 virtual users (loadtest/cas.js,
# VUS_LIST: one run each, DURATION long), each iteration a random key of KEYSPACE (filled first
# with VALUE_SIZE-byte values) read, then written back through the same node:
#   cas    ringkv: GET (its ETag), PUT with If-Match (201 success, 412 conflict, else error);
#          etcd: range (its mod_revision), txn comparing MOD == mod_revision, request_put on success
#   plain  ringkv: GET, then PUT without a condition
# Targets, one at a time, each started fresh, filled, warmed up (WARMUP of the loop it then runs)
# and stopped:
#   before   three nodes of the commit before conditional writes (BEFORE, 2060d02; built once in a
#            temporary git worktree, the jar kept in ${LOADTEST_CACHE:-~/.cache/ringkv-loadtest}/cas/):
#            plain
#   cluster  three nodes of this build (service/target/ringkv.jar, built when stale; JAR=path runs
#            another): plain, then cas
#   etcd     three etcd members (Debian's etcd-server, its JSON gateway): cas
# before and cluster run back to back ROUNDS times (cas on the first round only), then etcd.
# Nodes at -Xmx$NODE_HEAP, replicas the default (2/3), no ahead-of-time cache (the warm-up is the
# JIT's). Exits 1 when a target cannot be started, a fill fails, or a measured run has no success.
# Writes loadtest/results/<stamp>-cas/: report.md (also printed), results.tsv, k6/ (each run's
# summary and log), metrics/ (every node's Prometheus after each run), logs/.
#
#   loadtest/cas.sh                                      the whole comparison (~13 min on a quiet machine)
#   ROUNDS=2 TARGETS="before cluster" LOOPS=plain loadtest/cas.sh   plain before/after only, twice
#   VUS_LIST=16 DURATION=20s WARMUP=10s loadtest/cas.sh  a quick look
#
# Settings (environment): TARGETS ("before cluster etcd"), LOOPS ("plain cas": which loops cluster
# runs), VUS_LIST ("16 32"), DURATION (60s), WARMUP (30s), KEYSPACE (10000), VALUE_SIZE (100),
# ROUNDS (1), BEFORE (2060d02), NODE_HEAP (256m), PORT_BASE (19480: +0..+2 ringkv, +20..+22 and
# +30..+32 etcd), READY_TIMEOUT (300: seconds for three nodes to be ready), QUIET_WAIT (60: seconds
# to wait before each measured run for other processes to leave the cores), JAR, KEEP_DATA=1.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=cas
. bin/lib/common.sh
. loadtest/lib/targets.sh # start_server, stop_all, stop_started, start_etcd, apt_install
. loadtest/lib/jar.sh     # find_jar, random_secret

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

TARGETS=${TARGETS:-"before cluster etcd"} LOOPS=${LOOPS:-"plain cas"} VUS_LIST=${VUS_LIST:-"16 32"}
DURATION=${DURATION:-60s} WARMUP=${WARMUP:-30s} KEYSPACE=${KEYSPACE:-10000} VALUE_SIZE=${VALUE_SIZE:-100}
ROUNDS=${ROUNDS:-1} READY_TIMEOUT=${READY_TIMEOUT:-300} QUIET_WAIT=${QUIET_WAIT:-60} BEFORE=${BEFORE:-2060d02} NODE_HEAP=${NODE_HEAP:-256m} PORT_BASE=${PORT_BASE:-19480} JAR=${JAR:-}
for v in KEYSPACE VALUE_SIZE ROUNDS PORT_BASE READY_TIMEOUT QUIET_WAIT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not \"${!v}\""
done
for v in $VUS_LIST; do [[ $v =~ ^[1-9][0-9]*$ ]] || die "VUS_LIST: \"$v\" is no number of VUs"; done
[[ $DURATION =~ ^[0-9]+s$ ]] || die "DURATION must be whole seconds, e.g. 60s, not \"$DURATION\""
[[ $WARMUP =~ ^[0-9]+s$ ]] || die "WARMUP must be whole seconds, e.g. 30s (0s: none), not \"$WARMUP\""
for t in $TARGETS; do case $t in before | cluster | etcd) ;; *) die "unknown target \"$t\": pick from before cluster etcd" ;; esac; done
for l in $LOOPS; do case $l in plain | cas) ;; *) die "unknown loop \"$l\" in LOOPS: plain or cas" ;; esac; done
((ROUNDS >= 1 && KEYSPACE >= 1)) || die "ROUNDS and KEYSPACE must be at least 1"
contains() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }
export KEYSPACE VALUE_SIZE K6_NO_USAGE_REPORT=true

step() { log "$*"; }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run_dir=$repo/loadtest/results/$stamp-cas
data_dir=$run_dir/data
mkdir -p "$run_dir/k6" "$run_dir/logs" "$run_dir/metrics" "$data_dir"
: >"$run_dir/procs.tsv"
printf 'round\ttarget\tloop\tvus\tsummary\tk6_cpu_s\tservers_cpu_s\tmachine_cpu_s\tstart\tend\n' >"$run_dir/results.tsv"
pids=() helpers=() sampler_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_started
  [ "${KEEP_DATA:-0}" = 1 ] || rm -rf "$data_dir"
  [ "$rc" -eq 0 ] || log "stopped (exit $rc); what was measured is in ${run_dir#"$repo"/}"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- tools and jars --------------------------------------------------------------------------------
k6=$(bin/k6) || die "no k6: see the message above"
! contains "$TARGETS" etcd || apt_install etcd etcd-server "or leave etcd out of TARGETS"
if contains "$TARGETS" etcd && [ "$(pgrep -x etcd | wc -l)" -gt 0 ]; then
  log "WARNING: an etcd not started here is running (pid $(pgrep -x etcd | tr '\n' ' ')): it shares the CPU"
fi

# The jar of BEFORE, the commit before conditional writes: built once in a temporary worktree.
before_jar() {
  local commit cache tree
  commit=$(git rev-parse --short=7 "$BEFORE^{commit}") || die "BEFORE=$BEFORE is no commit here"
  cache=${LOADTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest}/cas
  before=$cache/ringkv-$commit.jar
  [ -s "$before" ] && { log "before: $commit, cached ${before/#"$HOME"/\~}"; return 0; }
  mkdir -p "$cache"
  tree=$(mktemp -d "${TMPDIR:-/tmp}/ringkv-cas-before.XXXXXX")
  git worktree add --detach "$tree" "$commit" >&2
  step "building the before jar of $commit, once"
  (cd "$tree" && bin/with-jdk ./mvnw -B -o -q -DskipTests package -pl service) >&2 ||
    { git worktree remove --force "$tree"; die "the build of $commit failed"; }
  [ -s "$tree/service/target/ringkv.jar" ] || die "$tree/service/target/ringkv.jar was not built"
  cp "$tree/service/target/ringkv.jar" "$before"
  git worktree remove --force "$tree"
}
before=""
! contains "$TARGETS" before || before_jar
contains "$TARGETS" cluster || JAR=${JAR:-$before} # find_jar needs one; nothing of it runs
find_jar "$data_dir"                               # sets node_jar: this build's copy
# The build as a reader knows it: the last commit that changed what goes into the jar.
after_commit=$(git log -1 --format=%h --abbrev=7 -- service pom.xml)
[ -z "$before" ] || cp "$before" "$data_dir/before.jar"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "command: $(printf '%q ' env TARGETS="$TARGETS" LOOPS="$LOOPS" VUS_LIST="$VUS_LIST" DURATION="$DURATION" \
    WARMUP="$WARMUP" KEYSPACE="$KEYSPACE" VALUE_SIZE="$VALUE_SIZE" ROUNDS="$ROUNDS" ${JAR:+JAR="${JAR##*/}"} loadtest/cas.sh)"
  echo "commit: $(git rev-parse --short=7 HEAD) (the jar's sources: $after_commit)$(git diff --quiet HEAD -- service 2>/dev/null || echo ' (service/ has uncommitted changes)')"
  echo "jar (cluster): ${jar##*/}, sha256 $(sha256sum "$node_jar" | cut -c1-16)…"
  [ -z "$before" ] || echo "jar (before): $(basename "$before"), sha256 $(sha256sum "$before" | cut -c1-16)…"
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
  echo "load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "java: $(bin/with-jdk java -version 2>&1 | head -n 1)"
  echo "k6: $("$k6" version 2>/dev/null | head -n 1)"
  ! contains "$TARGETS" etcd || echo "etcd: $(etcd --version 2>/dev/null | head -n 1 | sed 's/^etcd Version: //')"
  echo "heap: -Xmx$NODE_HEAP; ringkv replicas: the default (2/3); ringkv WAL not fsynced per write, etcd fsyncs on every member"
} >"$run_dir/env.txt"
sed 's/^/    /' "$run_dir/env.txt"

# ---- targets -----------------------------------------------------------------------------------------
start_cluster() { # label jar: three ringkv nodes, ready (readiness and /v0/status); sets nodes
  local label=$1 node_jar=$2 port urls=() i secret
  secret=$(random_secret)
  for i in 0 1 2; do
    port=$((PORT_BASE + i))
    port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
    urls+=("http://127.0.0.1:$port")
  done
  nodes=$(IFS=,; echo "${urls[*]}")
  step "$label: three nodes of ${node_jar##*/}"
  for i in 0 1 2; do
    port=$((PORT_BASE + i))
    start_server "$label-$port" "$run_dir/logs/$label-$port.log" bin/node --heap "$NODE_HEAP" --jar "$node_jar" \
      --server.port="$port" --ringkv.data-dir="$data_dir/$label/node-$port" --ringkv.cluster.self="${urls[$i]}" \
      --ringkv.cluster.peers="$nodes" --ringkv.cluster.secret="$secret"
  done
  local deadline=$((SECONDS + READY_TIMEOUT)) logf path
  for i in 0 1 2; do
    logf=$run_dir/logs/$label-$((PORT_BASE + i)).log
    for path in /actuator/health/readiness /v0/status; do
      until curl -fs -o /dev/null --max-time 2 "${urls[$i]}$path"; do
        kill -0 "${pids[$i]}" 2>/dev/null || { tail -n 20 "$logf" >&2; die "the node at ${urls[$i]} exited (its log: $logf)"; }
        [ "$SECONDS" -lt "$deadline" ] ||
          { tail -n 5 "$logf" >&2; die "${urls[$i]} did not answer $path within READY_TIMEOUT=${READY_TIMEOUT}s (its log: $logf)"; }
        sleep 0.5
      done
    done
  done
  log "$label: ready after $((SECONDS + READY_TIMEOUT - deadline)) s"
}

server_ticks() { # CPU clock ticks (user + system) of every server started, so far
  local pid sum=0 t
  for pid in "${pids[@]}"; do
    t=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
    sum=$((sum + t))
  done
  echo "$sum"
}

machine_ticks() { # busy CPU clock ticks of the whole machine (every core), since boot
  local _ user nice sys idle iowait irq softirq steal
  read -r _ user nice sys idle iowait irq softirq steal _ </proc/stat
  echo $((user + nice + sys + irq + softirq + steal))
}

# Another job on the same cores skews every figure: before each measured run, wait up to
# QUIET_WAIT seconds for what is not ours (the machine's busy time less our servers') to fall
# under a quarter of a core over 3 s; past that, measure anyway and say so (the report's "others").
await_quiet() {
  local waited=0 m0 m1 t0 t1 others hz
  hz=$(getconf CLK_TCK)
  while :; do
    m0=$(machine_ticks) t0=$(server_ticks)
    sleep 3
    m1=$(machine_ticks) t1=$(server_ticks)
    others=$(((m1 - m0) - (t1 - t0)))
    [ $((others * 4)) -ge $((3 * hz)) ] || return 0
    waited=$((waited + 3))
    if [ "$waited" -ge "$QUIET_WAIT" ]; then
      log "WARNING: other processes still use $(awk -v o="$others" -v hz="$hz" 'BEGIN { printf "%.2f", o / hz / 3 }') cores after ${QUIET_WAIT}s of waiting: measuring anyway"
      return 0
    fi
    [ $((waited % 30)) -ne 3 ] || log "waiting for the machine to be quiet (others: $(awk -v o="$others" -v hz="$hz" 'BEGIN { printf "%.2f", o / hz / 3 }') cores)"
  done
}

scrape() { # label store: every ringkv node's Prometheus text, kept
  [ "$2" = ringkv ] || return 0
  local url
  IFS=, read -ra urls <<<"$nodes"
  for url in "${urls[@]}"; do
    curl -fs --max-time 5 "$url/actuator/prometheus" >"$run_dir/metrics/$1-${url##*:}.prom" 2>/dev/null ||
      log "WARNING: no metrics from $url"
  done
}

fill() { # label store
  local rc=0
  step "$1: filling $KEYSPACE keys of $VALUE_SIZE B"
  "$k6" run -e STORE="$2" -e NODES="$nodes" -e REPLICAS= -e FILL_VUS=32 -e SUMMARY_JSON="$run_dir/k6/$1_fill.json" \
    loadtest/fill.js >"$run_dir/k6/$1_fill.log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { tail -n 30 "$run_dir/k6/$1_fill.log" >&2; die "fill of $1 failed (k6 exit $rc): see ${run_dir#"$repo"/}/k6/$1_fill.log"; }
}

warmup() { # label store loop
  [ "$WARMUP" != 0s ] || return 0
  step "$1: warm-up, $3 loop, 16 VUs for $WARMUP"
  "$k6" run -e STORE="$2" -e NODES="$nodes" -e LOOP="$3" -e VUS=16 -e DURATION="$WARMUP" \
    -e SUMMARY_JSON="$run_dir/k6/$1_warmup-$3.json" loadtest/cas.js >"$run_dir/k6/$1_warmup-$3.log" 2>&1 || true
  scrape "$1_warmup-$3" "$2"
}

measure() { # round label store loop vus
  local round=$1 label=$2 store=$3 loop=$4 vus=$5 rc=0 t0 t1 m0 m1 start end name hz
  hz=$(getconf CLK_TCK)
  name=r${round}_${label}_${loop}_${vus}vus
  await_quiet
  step "$label: $loop loop, $vus VUs for $DURATION"
  t0=$(server_ticks) m0=$(machine_ticks) start=$(date +%s)
  /usr/bin/time -f '%U %S' -o "$run_dir/k6/$name.time" "$k6" run -e STORE="$store" -e NODES="$nodes" -e LOOP="$loop" \
    -e VUS="$vus" -e DURATION="$DURATION" -e SUMMARY_JSON="$run_dir/k6/$name.json" loadtest/cas.js \
    >"$run_dir/k6/$name.log" 2>&1 || rc=$?
  t1=$(server_ticks) m1=$(machine_ticks) end=$(date +%s)
  [ "$rc" -eq 0 ] && [ -s "$run_dir/k6/$name.json" ] ||
    { tail -n 30 "$run_dir/k6/$name.log" >&2; die "k6 failed on $label (exit $rc): see ${run_dir#"$repo"/}/k6/$name.log"; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$label" "$loop" "$vus" "k6/$name.json" \
    "$(awk '{ print $1 + $2 }' "$run_dir/k6/$name.time" | tail -n 1)" \
    "$(awk -v t="$((t1 - t0))" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }')" \
    "$(awk -v t="$((m1 - m0))" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }')" "$start" "$end" >>"$run_dir/results.tsv"
  scrape "$name" "$store"
  # One line now; zero successes fails the whole benchmark here and now.
  python3 loadtest/cas_report.py --line "$run_dir/k6/$name.json" || die "$label, $loop loop, $vus VUs: no successful write"
}

node_log_errors() { # label: what the nodes logged at ERROR or WARN, in the run's log
  local f
  for f in "$run_dir"/logs/"$1"-*.log; do
    [ -f "$f" ] || continue
    printf '    %s: %s ERROR, %s WARN lines\n' "${f##*/}" "$(grep -c ' ERROR ' "$f" || true)" "$(grep -c ' WARN ' "$f" || true)"
  done
}

ringkv_target() { # round label jar loops
  local round=$1 label=$2 jar_path=$3 loops=$4 loop vus
  start_cluster "$label" "$jar_path"
  fill "$label" ringkv
  for loop in $loops; do
    warmup "$label" ringkv "$loop"
    for vus in $VUS_LIST; do measure "$round" "$label" ringkv "$loop" "$vus"; done
  done
  step "$label: stopping"
  stop_all
  node_log_errors "$label"
}

for round in $(seq 1 "$ROUNDS"); do
  [ "$ROUNDS" = 1 ] || step "round $round of $ROUNDS"
  ! contains "$TARGETS" before || ringkv_target "$round" before "$data_dir/before.jar" plain
  if contains "$TARGETS" cluster; then
    loops=plain
    if [ "$round" = 1 ] && contains "$LOOPS" cas; then loops="$LOOPS"; fi
    contains "$LOOPS" plain || loops=${loops//plain/}
    [ -z "${loops// /}" ] || ringkv_target "$round" cluster "$node_jar" "$loops"
  fi
  # Between rounds the stores start fresh: a new data directory per round.
  [ "$round" = "$ROUNDS" ] || { rm -rf "${data_dir:?}/before" "${data_dir:?}/cluster"; }
done

if contains "$TARGETS" etcd; then
  step "etcd: three members (Raft, an fsync per write on every member)"
  etcd_ports "$PORT_BASE"
  for port in "${etcd_client_ports[@]}" "${etcd_peer_ports[@]}"; do
    port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
  done
  start_etcd # sets etcd_urls; dies when a member does not come up
  nodes=$etcd_urls
  fill etcd etcd
  warmup etcd etcd cas
  for vus in $VUS_LIST; do measure 1 etcd etcd cas "$vus"; done
  step "etcd: stopping"
  stop_all
fi

python3 loadtest/cas_report.py "$run_dir" "$after_commit" "${before:+$(basename "$before" .jar)}" | tee "$run_dir/report.md"
log "report: ${run_dir#"$repo"/}/report.md"
