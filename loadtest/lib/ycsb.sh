# Sourced by loadtest/ycsb.sh and loadtest/rebuild.sh (after bin/lib/common.sh and loadtest/lib/bulk.sh):
# one YCSB workload (loadtest/wrk/ycsb.lua) from three wrk processes, one per URL, and what they measured.
# Uses the caller's globals: repo, run_dir (wrk/), helpers, and the settings KEYS, VALUE_BYTES,
# CONNECTIONS, TIMEOUT, DISTRIBUTION, ZIPF_THETA, SCAN_MAX.
# shellcheck shell=bash disable=SC2154,SC2034

# Starts the three wrk processes in the background, writing wrk/<label>-<i>.txt; THINK_MS in the
# environment paces them (loadtest/wrk/ycsb.lua). Sets ycsb_wrks (their pids) and ycsb_files.
ycsb_start() { # label store replicas workload seconds url url url
  local label=$1 store=$2 replicas=$3 w=$4 seconds=$5 i; shift 5
  ycsb_wrks=() ycsb_files=()
  for i in 0 1 2; do
    ycsb_files+=("$run_dir/wrk/$label-$i.txt")
    WORKLOAD=$w KEYS=$KEYS PART=$i PARTS=3 VALUE_BYTES=$VALUE_BYTES STORE=$store REPLICAS=$replicas \
      DISTRIBUTION=$DISTRIBUTION ZIPF_THETA=$ZIPF_THETA SCAN_MAX=$SCAN_MAX WRK_DIR=$repo/loadtest/wrk \
      wrk -t1 -c"$CONNECTIONS" -d"${seconds}s" --timeout "$TIMEOUT" -s loadtest/wrk/ycsb.lua "$1" >"${ycsb_files[-1]}" 2>&1 &
    ycsb_wrks+=($!) helpers+=($!); shift
  done
}

# Ends them early: on SIGINT wrk stops and prints its summary.
ycsb_interrupt() { kill -INT "${ycsb_wrks[@]}" 2>/dev/null || true; }

# Waits for the processes ycsb_start started and merges their summaries. Sets ops, not2xx (answers
# not 2xx or 3xx), sock (socket errors) and p50, p99, p999 (ms, every operation in one distribution).
ycsb_collect() {
  wait "${ycsb_wrks[@]}" || log "WARNING: a wrk process failed: see ${ycsb_files[*]#"$repo"/}"
  helpers=()
  read -r ops not2xx sock < <(awk '$1 == "YCSB_SUMMARY" { for (f = 2; f <= NF; f++) { split($f, kv, "="); s[kv[1]] += kv[2] } }
    END { print s["requests"] + 0, s["status"] + 0, s["connect"] + s["read_errors"] + s["write"] + s["timeout"] }' "${ycsb_files[@]}")
  read -r p50 p99 p999 < <(merged_percentiles YCSB requests "50 99 99.9" "${ycsb_files[@]}")
}
