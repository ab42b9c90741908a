#!/usr/bin/env bash
# Two builds under the same load, in windows that alternate, so that the machine's own
# drift (on this shared 2-core VM, ±15-35 % between runs minutes apart) falls on both alike.
#
#   loadtest/ab.sh [--rounds N] [--target cluster|single] [--open-loop RATE] JAR_A JAR_B
#
# Both targets run at once from the start: JAR_A's (a three-node cluster with static peers on
# 127.0.0.1:18081-18083, or a single node on :18081) and JAR_B's (:18091-18093, or :18091), at
# -Xmx256m as in the chart. Each is warmed up on its own for WARMUP (A's first), then each round
# measures A for DURATION and B for DURATION, the other idle (B first in every second round).
# The load: three wrk processes (-t1 -c16, one per node; the same node three times for a single
# one) with the mixed load of loadtest/wrk/mixed.lua. Windows a few seconds apart share the
# machine's mood, where runs minutes apart (restarted each time, as this script did before) did
# not: a build's own figure moved by up to a third between rounds.
#
# --open-loop RATE measures the tail below saturation instead, as run.sh's PEAK_FRACTIONS do:
# vegeta at RATE requests a second (the same mixed load, open loop, over at most 16 connections to
# each node), for the warm-ups too, so that the JIT has seen Go's client before the first window.
# Each window is OPEN_LOOP_SETTLE (15s) longer than DURATION, its start not counted. A single
# open-loop run's p99 is decided by the few seconds the machine or a store's background work
# stalls in it (one run's moved tenfold from another's), so the tail is compared over rounds too.
# vegeta cycles through 20,000 targets, whose PUTs leave about one key in seven unwritten: GETs of
# those answer 404, listed apart in each line, alike for both builds.
#
# One line per window: requests per second, the loaded target's CPU time (user + system, every JVM
# of it together) per request, the part of it the JIT compilers spent and, beside it, the rest of
# the machine's (wrk's, the kernel's and the idle target's: on one shared host the load
# generator's TLS competes with the nodes), the heap the loaded target allocated per request
# (Micrometer's jvm.gc.memory.allocated: steadier from run to run than either rate), each wrk's
# p99, and non-2xx answers (open loop: the achieved rate, p50, p99, p99.9 and max of all three
# nodes' requests). Then B against A: each round's change, their mean and their median (which one
# window the machine slowed on its own, as it does, moves less than the mean); open loop, each
# build's p99 in every round and their medians.
#
# Settings (environment): WARMUP=90s DURATION=20s KEYSPACE=5000 VALUE_SIZE=1400 READ_RATIO=0.5
# REPLICAS=2/3 (cluster only) JVM_FLAGS="" (more JVM flags for JAR_B's nodes only, to measure
# flags: give the same jar twice; e.g. "-XX:-UseG1GC -XX:+UseZGC"). B_SECURE=all runs JAR_B's nodes
# with TLS on every port and bearer tokens required (a fresh CA and node certificate from openssl;
# wrk sends an admin token), to measure what access control costs: give the same jar twice;
# B_SECURE=tls or B_SECURE=tokens turns on one of the two. A_SECURE does the same for JAR_A's
# nodes: both at all compares two builds as the chart installs them.
# Needs wrk (apt-get install wrk), curl, openssl for A_SECURE or B_SECURE, and Go for --open-loop's vegeta
# (built once into ~/.cache/ringkv-loadtest, as run.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/lib/common.sh
. loadtest/lib/cpu.sh # cpu_ticks, compiler_ticks, machine_ticks
. loadtest/lib/pki.sh # make_pki, ringkv_tls_settings
. loadtest/lib/environment.sh # find_vegeta, vegeta_attack

rounds=3 target=cluster open_loop=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=${2:?}; shift 2 ;;
    --target) target=${2:?}; shift 2 ;;
    --open-loop) open_loop=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || die "usage: loadtest/ab.sh [--rounds N] [--target cluster|single] [--open-loop RATE] JAR_A JAR_B"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds is a whole number of rounds, got $rounds"
[[ -z $open_loop || $open_loop =~ ^[1-9][0-9]*$ ]] || die "--open-loop is a rate in requests a second, got $open_loop"
jars=("$1" "$2")
for jar in "${jars[@]}"; do [ -f "$jar" ] || die "no such jar: $jar"; done
if [ -n "$open_loop" ]; then
  cache_dir=${LOADTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest}
  mkdir -p "$cache_dir"
  step() { log "$@"; }
  find_vegeta # sets vegeta
else
  command -v wrk >/dev/null || die "wrk is missing: apt-get install -y wrk"
fi
case $target in
  cluster) A_ports=(18081 18082 18083) B_ports=(18091 18092 18093) replicas=${REPLICAS:-2/3} ;;
  single) A_ports=(18081) B_ports=(18091) replicas="" ;;
  *) die "--target is cluster or single, got $target" ;;
esac
for port in "${A_ports[@]}" "${B_ports[@]}"; do port_free "$port" || die "port $port is in use"; done
warmup=${WARMUP:-90s} duration=${DURATION:-20s}
seconds=${duration%s}
[[ $seconds =~ ^[0-9]+$ ]] || die "DURATION must be whole seconds, such as 20s; got $duration"
settle=${OPEN_LOOP_SETTLE:-15s} settle=${settle%s}
[[ $settle =~ ^[0-9]+$ ]] || die "OPEN_LOOP_SETTLE must be whole seconds, such as 15s; got ${OPEN_LOOP_SETTLE}"
[[ -z $open_loop || ${warmup%s} =~ ^[0-9]+$ ]] || die "with --open-loop, WARMUP must be whole seconds, such as 90s; got $warmup"
A_secure=${A_SECURE:-none} B_secure=${B_SECURE:-none}
for which in A B; do
  secure=${which}_secure
  case ${!secure} in none|tls|tokens|all) ;; *) die "${which}_SECURE is none, tls, tokens or all; got ${!secure}" ;; esac
done
work=$(mktemp -d /tmp/ringkv-ab.XXXXXX)
A_pids=() B_pids=()
stop_nodes() {
  local pids=("${A_pids[@]}" "${B_pids[@]}")
  if [ ${#pids[@]} -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
}
trap 'stop_nodes; rm -rf "$work"' EXIT

if [ "$A_secure" != none ] || [ "$B_secure" != none ]; then
  make_pki "$work"
  ringkv_tls_settings "$work" # sets ringkv_tls_args
  secure_token=ab-token-$(openssl rand -hex 16)
  printf '%s admin ab\n' "$secure_token" >"$work/tokens"
fi
# What reaches the target in use (use): its ports, scheme, token and CA.
ports=() scheme=http token="" CURL_CA="" which_loaded=""
use() { # A|B
  local -n use_ports=$1_ports
  ports=("${use_ports[@]}") scheme=http token="" CURL_CA="" which_loaded=$1
  local secure=$1_secure
  case ${!secure} in tls|all) scheme=https CURL_CA=$work/ca.crt ;; esac
  case ${!secure} in tokens|all) token=$secure_token ;; esac
}
urls() { local port; for port in "${ports[@]}"; do printf '%s://127.0.0.1:%s,' "$scheme" "$port"; done; }
# curl (await_node, allocated) trusts the run's CA and sends its token, when it has them.
curl() { command curl ${token:+-H "Authorization: Bearer $token"} ${CURL_CA:+--cacert "$CURL_CA"} "$@"; }
# Three wrk processes at once, one per node (the same URL three times for one node); or with
# --open-loop, vegeta at that rate over the nodes in turn, for settle seconds more.
load() { # seconds-label output-prefix
  local wrks=() i=0
  if [ -n "$open_loop" ]; then
    local targets=$work/$which_loaded.targets.jsonl
    [ -f "$targets" ] || KEYSPACE=${KEYSPACE:-5000} VALUE_SIZE=${VALUE_SIZE:-1400} READ_RATIO=${READ_RATIO:-0.5} \
      REPLICAS=$replicas RINGKV_TOKEN=$token python3 loadtest/report.py --vegeta-targets "$targets" ringkv "$(urls | sed 's/,$//')"
    vegeta_attack "$targets" "$open_loop" "$(( ${1%s} + settle ))s" 16 "$CURL_CA" "$2"
    python3 loadtest/report.py --vegeta-summary "$2.csv.gz" "$2.json" mixed "$open_loop" "${1%s}s" "${settle}s"
    return 0
  fi
  for i in 0 1 2; do
    local port=${ports[$((i % ${#ports[@]}))]}
    KEYSPACE=${KEYSPACE:-5000} VALUE_SIZE=${VALUE_SIZE:-1400} READ_RATIO=${READ_RATIO:-0.5} REPLICAS=$replicas \
      RINGKV_TOKEN=$token WRK_DIR=loadtest/wrk wrk -t1 -c16 -d"$1" --timeout 10s -s loadtest/wrk/mixed.lua \
      "$scheme://127.0.0.1:$port" >"$2-$i.txt" 2>&1 &
    wrks+=($!)
  done
  wait "${wrks[@]}"
}
# Bytes the target's JVMs have allocated on the heap so far (Micrometer's jvm.gc.memory.allocated, summed).
allocated() {
  local sum=0 port bytes
  for port in "${ports[@]}"; do
    bytes=$(curl -fs "$scheme://127.0.0.1:$port/actuator/metrics/jvm.gc.memory.allocated" |
      python3 -c 'import json, sys; print(int(json.load(sys.stdin)["measurements"][0]["value"]))')
    sum=$((sum + bytes))
  done
  echo "$sum"
}

start() { # A|B jar [jvm flags]
  local which=$1 jar=$2 flag flags jvm=() peers="" settings=() port i
  local -n started=${which}_pids
  read -ra flags <<<"${3:-}" # split on blanks only, unglobbed (-Xlog:gc*:file=...)
  for flag in "${flags[@]}"; do jvm+=(--jvm "$flag"); done
  use "$which"
  [ "$scheme" = https ] && settings+=("${ringkv_tls_args[@]}")
  [ -n "$token" ] && settings+=(--ringkv.security.enabled=true --ringkv.security.tokens-file="$work/tokens")
  [ "$target" = single ] || peers=$(urls)
  for port in "${ports[@]}"; do
    bin/node --jar "$jar" --heap 256m "${jvm[@]}" -- --server.port="$port" --ringkv.data-dir="$work/$which-$port" \
      --ringkv.cluster.self="$scheme://127.0.0.1:$port" ${peers:+--ringkv.cluster.peers="${peers%,}"} \
      --ringkv.cluster.secret=ab-secret-0123456789abcdef "${settings[@]}" >"$work/$which-$port.log" 2>&1 &
    started+=($!)
  done
  for i in "${!ports[@]}"; do await_node "$scheme://127.0.0.1:${ports[$i]}" "${started[$i]}" "$work/$which-${ports[$i]}.log"; done
}

measure() { # A|B round
  local which=$1 label=$1-$2
  local -n measured=${which}_pids
  use "$which"
  local before machine_before jit_before allocated_before
  before=$(cpu_ticks "${measured[@]}") machine_before=$(machine_ticks) jit_before=$(compiler_ticks "${measured[@]}")
  allocated_before=$(allocated)
  load "$duration" "$work/$label"
  local after machine_after jit_after allocated_after
  after=$(cpu_ticks "${measured[@]}") machine_after=$(machine_ticks) jit_after=$(compiler_ticks "${measured[@]}")
  allocated_after=$(allocated)
  python3 - "$work/$label" "$label" "$((after - before))" "$(getconf CLK_TCK)" "$seconds" "$((allocated_after - allocated_before))" \
    "$((machine_after - machine_before - (after - before)))" "$((jit_after - jit_before))" "$work/windows.tsv" "$open_loop" <<'PY'
import json, re, sys
prefix, label, ticks, hz, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
allocated, rest_ticks, jit_ticks, table, open_loop = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8]), sys.argv[9], sys.argv[10]
if open_loop:
    summary = json.load(open(f"{prefix}.json"))
    metrics, latency = summary["metrics"], summary["metrics"]["http_req_duration"]["values"]
    counted = metrics["http_reqs"]["values"]["count"]
    rate, p99 = counted / seconds, latency["p(99)"]
    non2xx = " ".join(f"{name[len('http_reqs{status:'):-1]}:{m['values']['count']}" for name, m in metrics.items()
                      if name.startswith("http_reqs{status:") and not name.startswith("http_reqs{status:2")) or 0
    sent = counted + summary["ringkv"]["config"]["settling"]  # the CPU and heap are the settling ones' too
    tail = f"p50 {latency['med']:.1f} p99 {p99:.1f} p99.9 {latency['p(99.9)']:.1f} max {latency['max']:.1f} ms"
else:
    rate, p99s, non2xx = 0.0, [], 0
    for i in range(3):
        text = open(f"{prefix}-{i}.txt").read()
        rate += float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
        found = re.search(r'"p99": ([\d.]+)', text)
        p99s.append(found.group(1) if found else "?")
        bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
        non2xx += int(bad.group(1)) if bad else 0
    sent, p99 = rate * seconds, float("nan")
    tail = f"p99 ms {' / '.join(p99s)}"
cpu_us = ticks / hz * 1e6 / sent
rest_us = rest_ticks / hz * 1e6 / sent
jit_us = jit_ticks / hz * 1e6 / sent
heap_kb = allocated / 1024 / sent
print(f"{label:<12} {rate:9.0f} req/s  {cpu_us:6.1f} us CPU/req (of it JIT {jit_us:5.1f}; rest of the machine {rest_us:5.1f})  "
      f"{heap_kb:5.1f} KiB heap/req  {tail}  non-2xx {non2xx}", flush=True)
with open(table, "a") as out:
    out.write(f"{label}\t{rate}\t{cpu_us}\t{jit_us}\t{heap_kb}\t{p99}\n")
PY
}

# B against A: each round's change, their mean and median (a round's two windows are seconds apart).
compare() {
  python3 - "$work/windows.tsv" <<'PY'
import math
import statistics
import sys
rows = {}
for line in open(sys.argv[1]):
    label, rate, cpu, jit, heap, p99 = line.split("\t")
    which, round_ = label.split("-")
    rows[(which, int(round_))] = (float(rate), float(cpu), float(jit), float(heap), float(p99))
rounds = sorted({r for _, r in rows})
def change(field):
    return [rows[("B", r)][field] / rows[("A", r)][field] - 1 for r in rounds]
rate, cpu = change(0), change(1)
heap = [rows[("B", r)][3] - rows[("A", r)][3] for r in rounds]
fmt = lambda xs: " / ".join(f"{x * 100:+.1f}" for x in xs)
summary = lambda xs: f"mean {statistics.mean(xs) * 100:+.1f} %, median {statistics.median(xs) * 100:+.1f} %"
print(f"B against A, by round: req/s {fmt(rate)} % ({summary(rate)}); "
      f"CPU/req {fmt(cpu)} % ({summary(cpu)}); "
      f"heap/req {' / '.join(f'{h:+.1f}' for h in heap)} KiB", flush=True)
for which in "AB":
    p99s = [rows[(which, r)][4] for r in rounds]
    if not any(math.isnan(p) for p in p99s):  # open loop
        print(f"{which}'s p99 by round: {' / '.join(f'{p:.1f}' for p in p99s)} ms (median {statistics.median(p99s):.1f})", flush=True)
PY
}

log "$target: A=${jars[0]} B=${jars[1]}${JVM_FLAGS:+ (B with $JVM_FLAGS)} (secure: A $A_secure, B $B_secure), both running; $warmup warm-up each, then $rounds rounds of $duration windows"
start A "${jars[0]}"
start B "${jars[1]}" "${JVM_FLAGS:-}"
use A; load "$warmup" "$work/A-warm"
use B; load "$warmup" "$work/B-warm"
for round in $(seq "$rounds"); do
  order=(A B); [ $((round % 2)) -eq 1 ] || order=(B A)
  for which in "${order[@]}"; do measure "$which" "$round"; done
done
compare
