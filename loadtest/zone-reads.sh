#!/usr/bin/env bash
# Local-zone reads, before and after: the share of replica reads that cross zones at 1/3 and 2/3.
# Six nodes in three zones (a, b, c, a, b, c: every key's three replicas in three zones), KEYS
# keys written at 3/3, then READS reads of random keys at 1/3 and at 2/3, each through a random
# node (loadtest/zone_reads.py, CLIENTS threads, closed loop). The share is what the coordinators
# count in ringkv_replica_reads_total{zone="same"|"other"} over each run.
#
# Run twice, back to back on the same machine:
#   before  this source with the one rule that prefers the coordinator's zone taken out of
#           ReplicaPreference (replicas ordered by expected latency alone, as before 78c522d),
#           built once per commit into ${LOADTEST_CACHE:-~/.cache/ringkv-loadtest}/zone-reads/;
#           it counts replica reads by zone exactly as the current build does;
#   after   the current build (service/target/ringkv.jar, built when stale; JAR=path runs another).
# Prints, and writes loadtest/results/<stamp>-zone-reads/report.md: per build and replicas, the reads,
# the failed ones, the client's p50 and p99, and the share of replica reads that crossed zones.
#
#   loadtest/zone-reads.sh                     20,000 keys, 30,000 reads per run (~5 min)
#
# Settings (environment): KEYS (20000), READS (30000), CLIENTS (16), NODE_HEAP (256m),
# PORT_BASE (19380: six consecutive ports), JAR.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=zone-reads
. bin/lib/common.sh
. loadtest/lib/targets.sh # start_server, stop_all, stop_started
. loadtest/lib/jar.sh     # find_jar, random_secret

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

KEYS=${KEYS:-20000} READS=${READS:-30000} CLIENTS=${CLIENTS:-16} NODE_HEAP=${NODE_HEAP:-256m}
PORT_BASE=${PORT_BASE:-19380} JAR=${JAR:-}
for v in KEYS READS CLIENTS PORT_BASE; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not \"${!v}\""
done
((KEYS >= 100 && READS >= CLIENTS && CLIENTS >= 1)) || die "KEYS must be at least 100, READS at least CLIENTS, CLIENTS at least 1"
readonly ZONES=(zone-a zone-b zone-c zone-a zone-b zone-c)

step() { log "$*"; }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run_dir=$repo/loadtest/results/$stamp-zone-reads
data_dir=$run_dir/data
mkdir -p "$run_dir/logs" "$data_dir"
: >"$run_dir/procs.tsv"
pids=() helpers=() sampler_pid=""
trap stop_started EXIT

# The jar of this commit without the zone rule of reads: the "before" of the comparison.
before_jar() {
  local commit cache tree built
  commit=$(git rev-parse --short=7 HEAD)
  cache=${LOADTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest}/zone-reads
  before=$cache/ringkv-$commit-latency-only.jar
  [ -s "$before" ] && return 0
  mkdir -p "$cache"
  tree=$(mktemp -d "${TMPDIR:-/tmp}/ringkv-zone-reads.XXXXXX")
  git worktree add --detach "$tree" HEAD >&2
  local preference=$tree/service/src/main/java/io/ringkv/replication/ReplicaPreference.java
  grep -q 'thenComparing(replica -> !inThisZone.test(replica))' "$preference" \
    || die "ReplicaPreference no longer has the zone rule this benchmark takes out: update $0"
  sed -i '/thenComparing(replica -> !inThisZone.test(replica))/d' "$preference"
  step "building the before jar (no zone rule in ReplicaPreference) of $commit, once"
  (cd "$tree" && bin/with-jdk ./mvnw -B -o -q -DskipTests package -pl service) >&2
  built=$tree/service/target/ringkv.jar
  [ -s "$built" ] || die "$built was not built"
  cp "$built" "$before"
  git worktree remove --force "$tree"
}

# Six nodes of one jar in three zones, KEYS keys, then the reads at 1/3 and 2/3: a JSON line each.
measure() { # label jar
  local label=$1 node_jar=$2 secret peers="" urls=() i port
  secret=$(random_secret)
  for i in "${!ZONES[@]}"; do
    port=$((PORT_BASE + i))
    port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
    urls+=("http://127.0.0.1:$port")
  done
  peers=$(IFS=,; echo "${urls[*]}")
  step "$label: six nodes in zones ${ZONES[*]}"
  for i in "${!ZONES[@]}"; do
    port=$((PORT_BASE + i))
    start_server "$label-$port" "$run_dir/logs/$label-$port.log" bin/node --heap "$NODE_HEAP" --jar "$node_jar" \
      --server.port="$port" --ringkv.data-dir="$data_dir/$label/node-$port" --ringkv.cluster.self="http://127.0.0.1:$port" \
      --ringkv.cluster.peers="$peers" --ringkv.cluster.secret="$secret" --ringkv.cluster.zone="${ZONES[$i]}"
  done
  for i in "${!ZONES[@]}"; do
    await_node "${urls[$i]}" "${pids[$i]}" "$run_dir/logs/$label-$((PORT_BASE + i)).log"
  done
  # Zones travel in the PINGs, once per round (5 s): every node places by all six zones.
  for url in "${urls[@]}"; do
    local deadline=$((SECONDS + 60))
    until [ "$(curl -fs "$url/v0/cluster" | python3 -c 'import json,sys; print(sum(1 for m in json.load(sys.stdin)["members"] if m.get("zone")))')" = 6 ]; do
      [ "$SECONDS" -lt "$deadline" ] || die "$url did not know every member's zone within 60 s"
      sleep 1
    done
  done
  step "$label: writing $KEYS keys at 3/3"
  python3 loadtest/zone_reads.py fill "$peers" "$KEYS" "$CLIENTS"
  for replicas in 1/3 2/3; do
    step "$label: $READS reads at $replicas"
    python3 loadtest/zone_reads.py read "$peers" "$KEYS" "$READS" "$replicas" "$CLIENTS" \
      | python3 -c 'import json,sys; r=json.load(sys.stdin); r["build"]=sys.argv[1]; print(json.dumps(r))' "$label" \
      | tee -a "$run_dir/results.jsonl"
  done
  stop_all
}

before_jar
find_jar "$data_dir"
measure before "$before"
measure after "$node_jar"

python3 - "$run_dir/results.jsonl" "$(git rev-parse --short=7 HEAD)" <<'EOF' | tee "$run_dir/report.md"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"Local-zone reads, build {sys.argv[2]}: six nodes in three zones, two each\n")
print("| build | replicas | reads | failed | p50 ms | p99 ms | replica reads | crossed zones |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    print(f"| {r['build']} | `{r['replicas']}` | {r['reads']:,} | {r['failed']} | {r['p50_ms']} | {r['p99_ms']} "
          f"| {r['same'] + r['other']:,} | {100 * r['crossed']:.1f} % |")
EOF
log "report: ${run_dir#"$repo"/}/report.md"
