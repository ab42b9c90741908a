#!/usr/bin/env bash
# Foreground latency while repair streams: the same k6 load (mixed 50/50 at 2/3, open model) on a
# healthy three-node cluster; then node 2 wiped and restarted (a warm-up run, discarded, so that
# its JIT and caches are warm); then "quiet", the same cluster with nothing but read repair
# fixing node 2, measured twice ("quiet again": how far two runs of one state differ is the
# floor under every ratio below); then while anti-entropy refills node 2 from nodes 0 and 1 (the worst case: every
# key differs); then "after", once both repairs are over and node 2 holds everything again. The
# goal's ratio compares "during" with "quiet" (node 2 empty: without repair, but also with less
# to read); "during" against "after" compares with the same data at rest. Joins and leaves move
# data through the same code and throttle (RangeSync, ringkv.repair.rate), so this bounds them
# too. Writes
# loadtest/results/repair-impact-<time>/ (k6 logs and summaries, the repair's own report) and
# prints p50/p99 of the runs and their ratios (the goal: p99 within 1.25x of quiet).
#
#   loadtest/repair-impact.sh
#   KEYS=50000 RATE=200 DURATION=10s loadtest/repair-impact.sh
#
# Settings (environment): KEYS (200000 values of VALUE_SIZE 1024 B: ~210 MB to stream, longer
# than one run at the default 8 MB/s), RATE (300 requests/s), DURATION (20s), JAR
# (service/target/ringkv.jar, built if missing), PORT_BASE (18080: ports 18080-18082), NODE_ARGS
# (more settings for every node, e.g. "--ringkv.repair.rate=2MB"), JVM_FLAGS (more JVM flags for
# every node, e.g. "-XX:+UseZGC -Xlog:gc:file=gc.log"), PROFILE (1: cpu and alloc
# flame graphs of every node during the repair run, with async-profiler from Maven Central, as
# loadtest/run.sh records them).
set -euo pipefail
cd "$(dirname "$0")/.."
LOG_NAME=repair-impact
. bin/lib/common.sh
. loadtest/lib/profiler.sh # fetch_async_profiler, ap_agent, flame_graph
step() { log "$*"; }

KEYS=${KEYS:-200000}
RATE=${RATE:-300}
DURATION=${DURATION:-20s}
VALUE_SIZE=${VALUE_SIZE:-1024}
JAR=${JAR:-service/target/ringkv.jar}
PORT_BASE=${PORT_BASE:-18080}
SECRET=repair-impact
out=loadtest/results/repair-impact-$(date +%Y%m%d-%H%M%S)
work=$(mktemp -d "${TMPDIR:-/tmp}/ringkv-repair-impact.XXXXXX")
mkdir -p "$out"

[ -f "$JAR" ] || bin/with-jdk ./mvnw -B -q -DskipTests package
k6=$(bin/k6)

ports=("$PORT_BASE" $((PORT_BASE + 1)) $((PORT_BASE + 2)))
urls=()
for port in "${ports[@]}"; do urls+=("http://127.0.0.1:$port"); done
peers=$(IFS=,; echo "${urls[*]}")
pids=(0 0 0)

start_node() { # index [more settings]
  local i=$1; shift
  # Sized and started as bin/cluster starts its nodes (bin/node), from the fat jar. Scheduled
  # repairs far apart (at most half the grace period): only the one asked for runs.
  bin/node --jar "$JAR" "${profile_flags[@]}" "${jvm_flags[@]}" --server.port="${ports[$i]}" --ringkv.data-dir="$work/data$i" \
    --ringkv.cluster.self="${urls[$i]}" --ringkv.cluster.peers="$peers" --ringkv.cluster.secret="$SECRET" \
    --ringkv.repair.interval=12h ${NODE_ARGS:-} "$@" >>"$out/node$i.log" 2>&1 &
  pids[$i]=$!
}
await_ready() { # index: the warm-up done, so that the runs measure a warm node
  await_node "${urls[$1]}" "${pids[$1]}" "$out/node$1.log" /actuator/health/readiness
}
stop_node() { # index
  kill -TERM "${pids[$1]}" 2>/dev/null || true
  wait "${pids[$1]}" 2>/dev/null || true
  pids[$1]=0
}
cleanup() {
  for i in 0 1 2; do [ "${pids[$i]}" = 0 ] || stop_node "$i"; done
  rm -rf "$work"
}
trap cleanup EXIT
for port in "${ports[@]}"; do port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"; done

run_k6() { # label; k6's exit code 99 (kv.js's p99 < 10 ms threshold crossed) is a result here, not a failure
  local rc=0
  "$k6" run -q -e NODES="$peers" -e SCENARIO=mixed -e RATE="$RATE" -e DURATION="$DURATION" -e REPLICAS=2/3 \
    -e KEYSPACE="$KEYS" -e VALUE_SIZE="$VALUE_SIZE" -e SUMMARY_JSON="$out/$1.json" loadtest/kv.js >"$out/$1.log" 2>&1 || rc=$?
  [ $rc = 0 ] || [ $rc = 99 ] || die "k6 failed ($rc); see $out/$1.log"
}
p() { # summary quantile -> milliseconds of http_req_duration
  python3 -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["metrics"]["http_req_duration"]["values"][sys.argv[2]])' "$1" "$2"
}

profile() { # start|stop: async-profiler in every node, loaded with jcmd; flame graphs into $out
  local i jfr
  for i in 0 1 2; do
    jfr=$out/node$i.jfr
    if [ "$1" = start ]; then
      ap_agent "${pids[$i]}" "start,event=cpu,alloc=512k,jfr,file=$jfr" "$out/jcmd.log"
    else
      ap_agent "${pids[$i]}" stop "$out/jcmd.log"
      flame_graph cpu "$jfr" "$out/flame-node$i-cpu.html" "$out/jcmd.log"
      flame_graph alloc "$jfr" "$out/flame-node$i-alloc.html" "$out/jcmd.log"
      flame_graph cpu "$jfr" "$out/node$i-cpu.collapsed" "$out/jcmd.log" -o collapsed
      rm -f "$jfr"
    fi
  done
}
# Split on blanks only: a flag such as -Xlog:gc*:file=... must reach the JVM unglobbed.
read -ra flags <<<"${JVM_FLAGS:-}"
jvm_flags=()
for flag in "${flags[@]}"; do jvm_flags+=(--jvm "$flag"); done
profile_flags=()
if [ "${PROFILE:-0}" = 1 ]; then
  for flag in "${PROFILE_JVM_FLAGS[@]}"; do profile_flags+=(--jvm "$flag"); done
  fetch_async_profiler "${LOADTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest}" # as run.sh: sets ap_lib, ap_conv
fi

for i in 0 1 2; do start_node "$i"; done
for i in 0 1 2; do await_ready "$i"; done
log "three nodes ready; filling $KEYS keys of $VALUE_SIZE B at 2/3"
"$k6" run -q -e NODES="$peers" -e REPLICAS=2/3 -e KEYSPACE="$KEYS" -e VALUE_SIZE="$VALUE_SIZE" \
  -e SUMMARY_JSON="$out/fill.json" loadtest/fill.js >"$out/fill.log" 2>&1
# Settle: the writes' last replicas, flushes and compactions after the fill.
sleep 10

log "healthy: mixed 2/3 at $RATE/s for $DURATION"
run_k6 healthy

log "wiping node 2's data and starting it empty; a warm-up run, then quiet: mixed 2/3 at $RATE/s for $DURATION each"
stop_node 2
rm -rf "$work/data2"
# A restarted node repairs with each peer within its first minute: not this one, so that the quiet
# run is quiet and the repairs measured are the ones asked for below (it still answers them).
start_node 2 --ringkv.repair.enabled=false
await_ready 2
run_k6 warm-up
run_k6 quiet
# The same state measured again: how far two runs without repair differ is the floor under any ratio.
run_k6 quiet-again

log "asking node 0 and node 1 to repair with node 2"
for i in 0 1; do
  curl -fs -X POST -H 'Content-Type: application/json' -d "{\"peer\":\"${urls[2]}\"}" \
    "${urls[$i]}/actuator/repair" >/dev/null
done
sleep 2
log "during repair: mixed 2/3 at $RATE/s for $DURATION"
[ "${PROFILE:-0}" != 1 ] || profile start
run_k6 repair
[ "${PROFILE:-0}" != 1 ] || profile stop
curl -fs "${urls[0]}/actuator/repair" >"$out/repair-node0.json"
curl -fs "${urls[1]}/actuator/repair" >"$out/repair-node1.json"

log "after: the repairs over, node 2 full again; settle 10 s, then mixed 2/3 at $RATE/s for $DURATION"
for i in 0 1; do
  for _ in $(seq 120); do
    curl -fs "${urls[$i]}/actuator/repair" | grep -q '"running":null' && break
    sleep 1
  done
done
sleep 10
run_k6 after

python3 - "$out" "$DURATION" <<'PY'
import json, sys
out, duration = sys.argv[1], sys.argv[2]
def figures(name):
    values = json.load(open(f"{out}/{name}.json"))["metrics"]["http_req_duration"]["values"]
    failed = json.load(open(f"{out}/{name}.json"))["metrics"].get("http_req_failed", {}).get("values", {}).get("rate", 0)
    return values["med"], values["p(99)"], failed
healthy, quiet, again, repair, after = (figures(name) for name in ("healthy", "quiet", "quiet-again", "repair", "after"))
print(f"healthy:       p50 {healthy[0]:7.1f} ms  p99 {healthy[1]:7.1f} ms  failed {100 * healthy[2]:.2f} %")
print(f"quiet:         p50 {quiet[0]:7.1f} ms  p99 {quiet[1]:7.1f} ms  failed {100 * quiet[2]:.2f} %")
print(f"quiet again:   p50 {again[0]:7.1f} ms  p99 {again[1]:7.1f} ms  failed {100 * again[2]:.2f} %")
print(f"during repair: p50 {repair[0]:7.1f} ms  p99 {repair[1]:7.1f} ms  failed {100 * repair[2]:.2f} %")
print(f"after:         p50 {after[0]:7.1f} ms  p99 {after[1]:7.1f} ms  failed {100 * after[2]:.2f} %")
print(f"p99 ratio (during repair / quiet): {repair[1] / quiet[1]:.2f} (goal <= 1.25); during repair / healthy: "
      f"{repair[1] / healthy[1]:.2f}; during repair / after: {repair[1] / after[1]:.2f}; "
      f"the floor, quiet again / quiet: {again[1] / quiet[1]:.2f}")
for node in ("node0", "node1"):
    report = json.load(open(f"{out}/repair-{node}.json"))["repair"]
    runs = ([report["running"]] if report.get("running") else []) + report.get("recent", [])
    for run in runs[:1]:
        print(f"{node}'s repair with node 2: {run['outcome']}, {run['percent']} % of tokens compared, "
              f"{run['keysPushed']} keys pushed, {run['bytes'] / 1e6:.1f} MB")
PY
log "results in $out"
