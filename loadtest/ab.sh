#!/usr/bin/env bash
# Two builds back to back under the same closed-loop load, alternated, so that the machine's own
# drift (±10-15 % from run to run on a shared 2-core VM) falls on both alike.
#
#   loadtest/ab.sh [--rounds N] [--target cluster|single] JAR_A JAR_B
#
# Each round starts the target fresh on JAR_A, then on JAR_B (then B first in the next round):
# a three-node cluster (static peers on 127.0.0.1:18081-18083) or a single node (:18081), at
# -Xmx256m as in the chart. Three wrk processes (-t1 -c16, one per node; the same node three
# times for a single one) send the mixed load of loadtest/wrk/ringkv.lua for WARMUP, then for
# DURATION measured. One line per run: requests per second, the nodes' CPU time (user + system,
# every JVM of the target together) per request, the heap they allocated per request (Micrometer's
# jvm.gc.memory.allocated: steadier from run to run than either rate), each wrk's p99, and non-2xx
# answers.
#
# Settings (environment): WARMUP=60s DURATION=20s KEYSPACE=5000 VALUE_SIZE=1400 READ_RATIO=0.5
# REPLICAS=2/3 (cluster only) JVM_FLAGS="" (more JVM flags for JAR_B's nodes only, to measure
# flags: give the same jar twice; e.g. "-XX:-UseG1GC -XX:+UseZGC"). Needs wrk (apt-get install wrk) and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/lib/common.sh

rounds=3 target=cluster
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=${2:?}; shift 2 ;;
    --target) target=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || die "usage: loadtest/ab.sh [--rounds N] [--target cluster|single] JAR_A JAR_B"
jars=("$1" "$2")
for jar in "${jars[@]}"; do [ -f "$jar" ] || die "no such jar: $jar"; done
command -v wrk >/dev/null || die "wrk is missing: apt-get install -y wrk"
case $target in
  cluster) ports=(18081 18082 18083); replicas=${REPLICAS:-2/3} ;;
  single) ports=(18081); replicas="" ;;
  *) die "--target is cluster or single, got $target" ;;
esac
for port in "${ports[@]}"; do port_free "$port" || die "port $port is in use"; done
warmup=${WARMUP:-60s} duration=${DURATION:-20s}
seconds=${duration%s}
[[ $seconds =~ ^[0-9]+$ ]] || die "DURATION must be whole seconds, such as 20s; got $duration"
work=$(mktemp -d /tmp/ringkv-ab.XXXXXX)
pids=()
stop_nodes() {
  if [ ${#pids[@]} -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  pids=()
}
trap 'stop_nodes; rm -rf "$work"' EXIT

peers=$(printf 'http://127.0.0.1:%s,' "${ports[@]}"); peers=${peers%,}
[ "$target" = cluster ] || peers=""
# Three wrk processes at once, one per node (the same URL three times for one node).
load() { # seconds-label output-prefix
  local wrks=() i=0
  for i in 0 1 2; do
    local port=${ports[$((i % ${#ports[@]}))]}
    KEYSPACE=${KEYSPACE:-5000} VALUE_SIZE=${VALUE_SIZE:-1400} READ_RATIO=${READ_RATIO:-0.5} REPLICAS=$replicas \
      WRK_DIR=loadtest/wrk wrk -t1 -c16 -d"$1" --timeout 10s -s loadtest/wrk/ringkv.lua "http://127.0.0.1:$port" >"$2-$i.txt" 2>&1 &
    wrks+=($!)
  done
  wait "${wrks[@]}"
}
cpu_ticks() { local sum=0 pid; for pid in "$@"; do sum=$((sum + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$sum"; }
# Bytes the nodes' JVMs have allocated on the heap so far (Micrometer's jvm.gc.memory.allocated, summed).
allocated() {
  local sum=0 port bytes
  for port in "${ports[@]}"; do
    bytes=$(curl -fs "http://127.0.0.1:$port/actuator/metrics/jvm.gc.memory.allocated" |
      python3 -c 'import json, sys; print(int(json.load(sys.stdin)["measurements"][0]["value"]))')
    sum=$((sum + bytes))
  done
  echo "$sum"
}

run() { # label jar [jvm flags]
  local label=$1 jar=$2 flag flags jvm=()
  read -ra flags <<<"${3:-}" # split on blanks only, unglobbed (-Xlog:gc*:file=...)
  for flag in "${flags[@]}"; do jvm+=(--jvm "$flag"); done
  for port in "${ports[@]}"; do
    bin/node --jar "$jar" --heap 256m "${jvm[@]}" -- --server.port="$port" --ringkv.data-dir="$work/$label-$port" \
      --ringkv.cluster.self="http://127.0.0.1:$port" ${peers:+--ringkv.cluster.peers="$peers"} \
      --ringkv.cluster.secret=ab-secret-0123456789abcdef >"$work/$label-$port.log" 2>&1 &
    pids+=($!)
  done
  local i
  for i in "${!ports[@]}"; do await_node "http://127.0.0.1:${ports[$i]}" "${pids[$i]}" "$work/$label-${ports[$i]}.log"; done
  load "$warmup" "$work/$label-warm"
  local before; before=$(cpu_ticks "${pids[@]}")
  local allocated_before; allocated_before=$(allocated)
  load "$duration" "$work/$label"
  local after; after=$(cpu_ticks "${pids[@]}")
  local allocated_after; allocated_after=$(allocated)
  stop_nodes
  python3 - "$work/$label" "$label" "$((after - before))" "$(getconf CLK_TCK)" "$seconds" "$((allocated_after - allocated_before))" <<'PY'
import re, sys
prefix, label, ticks, hz, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
allocated = int(sys.argv[6])
rate, p99s, non2xx = 0.0, [], 0
for i in range(3):
    text = open(f"{prefix}-{i}.txt").read()
    rate += float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r'"p99": ([\d.]+)', text)
    p99s.append(p99.group(1) if p99 else "?")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    non2xx += int(bad.group(1)) if bad else 0
cpu_us = ticks / hz * 1e6 / (rate * seconds)
heap_kb = allocated / 1024 / (rate * seconds)
print(f"{label:<12} {rate:9.0f} req/s  {cpu_us:6.1f} us CPU/req  {heap_kb:5.1f} KiB heap/req  p99 ms {' / '.join(p99s)}  "
      f"non-2xx {non2xx}", flush=True)
PY
}

log "$target: A=${jars[0]} B=${jars[1]}${JVM_FLAGS:+ (B with $JVM_FLAGS)}, $rounds rounds, $warmup warm-up, $duration measured"
for round in $(seq "$rounds"); do
  order=(0 1); [ $((round % 2)) -eq 1 ] || order=(1 0)
  for which in "${order[@]}"; do
    if [ "$which" -eq 0 ]; then run "A-$round" "${jars[0]}"; else run "B-$round" "${jars[1]}" "${JVM_FLAGS:-}"; fi
  done
done
