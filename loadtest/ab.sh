#!/usr/bin/env bash
# Two builds back to back under the same closed-loop load, alternated, so that the machine's own
# drift (±10-15 % from run to run on a shared 2-core VM) falls on both alike.
#
#   loadtest/ab.sh [--rounds N] [--target cluster|single] JAR_A JAR_B
#
# Each round starts the target fresh on JAR_A, then on JAR_B (then B first in the next round):
# a three-node cluster (static peers on 127.0.0.1:18081-18083) or a single node (:18081), at
# -Xmx256m as in the chart. Three wrk processes (-t1 -c16, one per node; the same node three
# times for a single one) send the mixed load of loadtest/wrk/mixed.lua for WARMUP, then for
# DURATION measured. One line per run: requests per second, the nodes' CPU time (user + system,
# every JVM of the target together) per request, the part of it the JIT compilers spent and,
# beside it, the rest of the machine's (wrk's and the kernel's: on one shared host the load
# generator's TLS competes with the nodes), the heap they allocated per request (Micrometer's
# jvm.gc.memory.allocated: steadier from run to run than either rate), each wrk's p99, and
# non-2xx answers.
#
# Settings (environment): WARMUP=90s DURATION=20s KEYSPACE=5000 VALUE_SIZE=1400 READ_RATIO=0.5
# SETTLE=20 REPLICAS=2/3 (cluster only) JVM_FLAGS="" (more JVM flags for JAR_B's nodes only, to measure
# flags: give the same jar twice; e.g. "-XX:-UseG1GC -XX:+UseZGC"). B_SECURE=all runs JAR_B's nodes
# with TLS on every port and bearer tokens required (a fresh CA and node certificate from openssl;
# wrk sends an admin token), to measure what access control costs: give the same jar twice;
# B_SECURE=tls or B_SECURE=tokens turns on one of the two.
# Needs wrk (apt-get install wrk), curl, and openssl for B_SECURE.
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/lib/common.sh
. loadtest/lib/cpu.sh # cpu_ticks, compiler_ticks, machine_ticks
. loadtest/lib/pki.sh # make_pki, ringkv_tls_settings

rounds=3 target=cluster
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=${2:?}; shift 2 ;;
    --target) target=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
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
warmup=${WARMUP:-90s} duration=${DURATION:-20s}
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

# The scheme and settings of the run in progress: plain, or (B_SECURE) TLS and tokens.
scheme=http secure_args=() token=""
b_secure=${B_SECURE:-none}
case $b_secure in none|tls|tokens|all) ;; *) die "B_SECURE is none, tls, tokens or all; got $b_secure" ;; esac
if [ "$b_secure" != none ]; then
  make_pki "$work"
  ringkv_tls_settings "$work" # sets ringkv_tls_args
  secure_token=ab-token-$(openssl rand -hex 16)
  printf '%s admin ab\n' "$secure_token" >"$work/tokens"
fi
urls() { local port; for port in "${ports[@]}"; do printf '%s://127.0.0.1:%s,' "$scheme" "$port"; done; }
# curl (await_node, allocated) trusts the run's CA and sends its token, when it has them.
curl() { command curl ${token:+-H "Authorization: Bearer $token"} ${CURL_CA:+--cacert "$CURL_CA"} "$@"; }
# Three wrk processes at once, one per node (the same URL three times for one node).
load() { # seconds-label output-prefix
  local wrks=() i=0
  for i in 0 1 2; do
    local port=${ports[$((i % ${#ports[@]}))]}
    KEYSPACE=${KEYSPACE:-5000} VALUE_SIZE=${VALUE_SIZE:-1400} READ_RATIO=${READ_RATIO:-0.5} REPLICAS=$replicas \
      RINGKV_TOKEN=$token WRK_DIR=loadtest/wrk wrk -t1 -c16 -d"$1" --timeout 10s -s loadtest/wrk/mixed.lua \
      "$scheme://127.0.0.1:$port" >"$2-$i.txt" 2>&1 &
    wrks+=($!)
  done
  wait "${wrks[@]}"
}
# Bytes the nodes' JVMs have allocated on the heap so far (Micrometer's jvm.gc.memory.allocated, summed).
allocated() {
  local sum=0 port bytes
  for port in "${ports[@]}"; do
    bytes=$(curl -fs "$scheme://127.0.0.1:$port/actuator/metrics/jvm.gc.memory.allocated" |
      python3 -c 'import json, sys; print(int(json.load(sys.stdin)["measurements"][0]["value"]))')
    sum=$((sum + bytes))
  done
  echo "$sum"
}

# The run's stores removed and the page cache written back, then SETTLE seconds idle (default 20),
# before the next run starts. Without it the first run of each pair was ~20 % faster than the
# second, whichever build it was (the stopped run's stores written back during the next); with it,
# not (loadtest/BENCHMARKS.md, plain requests before and after expiry).
settle() { # label
  rm -rf "$work/$1"-[0-9]*/
  sync
  sleep "${SETTLE:-20}"
}

run() { # label jar secure [jvm flags]
  local label=$1 jar=$2 flag flags jvm=() peers=""
  read -ra flags <<<"${4:-}" # split on blanks only, unglobbed (-Xlog:gc*:file=...)
  for flag in "${flags[@]}"; do jvm+=(--jvm "$flag"); done
  scheme=http secure_args=() token="" CURL_CA=""
  if [ "$3" = tls ] || [ "$3" = all ]; then
    scheme=https CURL_CA=$work/ca.crt
    secure_args+=("${ringkv_tls_args[@]}")
  fi
  if [ "$3" = tokens ] || [ "$3" = all ]; then
    token=$secure_token
    secure_args+=(--ringkv.security.enabled=true --ringkv.security.tokens-file="$work/tokens")
  fi
  [ "$target" = single ] || peers=$(urls)
  for port in "${ports[@]}"; do
    bin/node --jar "$jar" --heap 256m "${jvm[@]}" -- --server.port="$port" --ringkv.data-dir="$work/$label-$port" \
      --ringkv.cluster.self="$scheme://127.0.0.1:$port" ${peers:+--ringkv.cluster.peers="${peers%,}"} \
      --ringkv.cluster.secret=ab-secret-0123456789abcdef "${secure_args[@]}" >"$work/$label-$port.log" 2>&1 &
    pids+=($!)
  done
  local i
  for i in "${!ports[@]}"; do await_node "$scheme://127.0.0.1:${ports[$i]}" "${pids[$i]}" "$work/$label-${ports[$i]}.log"; done
  load "$warmup" "$work/$label-warm"
  local before machine_before jit_before
  before=$(cpu_ticks "${pids[@]}") machine_before=$(machine_ticks) jit_before=$(compiler_ticks "${pids[@]}")
  local allocated_before; allocated_before=$(allocated)
  load "$duration" "$work/$label"
  local after machine_after jit_after
  after=$(cpu_ticks "${pids[@]}") machine_after=$(machine_ticks) jit_after=$(compiler_ticks "${pids[@]}")
  local allocated_after; allocated_after=$(allocated)
  stop_nodes
  settle "$label"
  python3 - "$work/$label" "$label" "$((after - before))" "$(getconf CLK_TCK)" "$seconds" "$((allocated_after - allocated_before))" \
    "$((machine_after - machine_before - (after - before)))" "$((jit_after - jit_before))" <<'PY'
import re, sys
prefix, label, ticks, hz, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
allocated, rest_ticks, jit_ticks = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
rate, p99s, non2xx = 0.0, [], 0
for i in range(3):
    text = open(f"{prefix}-{i}.txt").read()
    rate += float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r'"p99": ([\d.]+)', text)
    p99s.append(p99.group(1) if p99 else "?")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    non2xx += int(bad.group(1)) if bad else 0
cpu_us = ticks / hz * 1e6 / (rate * seconds)
rest_us = rest_ticks / hz * 1e6 / (rate * seconds)
jit_us = jit_ticks / hz * 1e6 / (rate * seconds)
heap_kb = allocated / 1024 / (rate * seconds)
print(f"{label:<12} {rate:9.0f} req/s  {cpu_us:6.1f} us CPU/req (of it JIT {jit_us:5.1f}; wrk+kernel {rest_us:5.1f})  "
      f"{heap_kb:5.1f} KiB heap/req  "
      f"p99 ms {' / '.join(p99s)}  non-2xx {non2xx}", flush=True)
PY
}

log "$target: A=${jars[0]} B=${jars[1]}${JVM_FLAGS:+ (B with $JVM_FLAGS)} (B secure: $b_secure), $rounds rounds, $warmup warm-up, $duration measured"
for round in $(seq "$rounds"); do
  order=(0 1); [ $((round % 2)) -eq 1 ] || order=(1 0)
  for which in "${order[@]}"; do
    if [ "$which" -eq 0 ]; then run "A-$round" "${jars[0]}" none; else run "B-$round" "${jars[1]}" "$b_secure" "${JVM_FLAGS:-}"; fi
  done
done
