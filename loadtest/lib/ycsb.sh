# Sourced by loadtest/ycsb.sh, loadtest/rebuild.sh and loadtest/backup.sh (after bin/lib/common.sh and loadtest/lib/bulk.sh):
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

# Workload B's rate at half of its saturation through the URLs: a closed loop for PROBE seconds
# gives the saturation rate; 3 x CONNECTIONS connections, each a round trip (rtt) and a pause
# (think) per request, make 3 x CONNECTIONS / (rtt + think) requests a second, so half of it needs
# rtt + think = 2 x 3 x CONNECTIONS / saturated; the round trip at that rate is measured with a
# first guess for CALIBRATE seconds. Sets saturated (ops/s), saturated_p99 and think_ms (each
# connection's pause, for THINK_MS).
ycsb_half_saturation() { # replicas url url url
  local replicas=$1 cycle_ms guess_ms; shift
  log "workload b, closed loop, for $PROBE s: its saturation rate"
  ycsb_start saturation ringkv "$replicas" b "$PROBE" "$@"
  ycsb_collect
  saturated=$(awk -v n="$ops" -v s="$PROBE" 'BEGIN { printf "%.0f", n / s }') saturated_p99=$p99
  cycle_ms=$(awk -v r="$saturated" -v c="$CONNECTIONS" 'BEGIN { printf "%.2f", 2 * 3 * c * 1000 / (r > 0 ? r : 1) }')
  guess_ms=$(awk -v t="$cycle_ms" 'BEGIN { printf "%.1f", t * 0.8 }')
  log "workload b, paced with $guess_ms ms between requests, for $CALIBRATE s: its round trip at about half"
  THINK_MS=$guess_ms ycsb_start calibration ringkv "$replicas" b "$CALIBRATE" "$@"
  ycsb_collect
  think_ms=$(awk -v n="$ops" -v s="$CALIBRATE" -v c="$CONNECTIONS" -v g="$guess_ms" -v t="$cycle_ms" \
    'BEGIN { rtt = n > 0 ? 3 * c * 1000 * s / n - g : 0; think = t - rtt; printf "%.1f", (think > 0 ? think : 0) }')
  log "saturation: $saturated ops/s (p99 $saturated_p99 ms); pacing each connection with $think_ms ms between requests"
}
