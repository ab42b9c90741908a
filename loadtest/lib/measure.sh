# Sourced by loadtest/run.sh: how one target, already started, is measured: warm-up, fill, k6 at
# every scenario, replicas and rate, one closed-loop wrk run, vegeta's open-loop runs at fractions
# of wrk's peak, the nodes' metrics after each step.
# Uses run.sh's globals: k6, py, repo, run_dir, store (what the target speaks: ringkv or etcd),
# current_target, helpers, and its settings (SCENARIOS, RATES, DURATION, WARMUP, WARMUP_RATE,
# COLD_DURATION, TIMELINE, KEEP_RAW, WRK, WRK_CONNECTIONS, WRK_DURATION, PEAK_FRACTIONS, KEYSPACE,
# VALUE_SIZE);
# counts threshold_misses.
# shellcheck shell=bash disable=SC2154,SC2153

runs_row() { # target scenario replicas rate duration start end rc summary csv: one line of runs.tsv
  local IFS=$'\t'
  echo "$*" >>"$run_dir/runs.tsv"
}

sent_replicas() { # replicas: what k6 or wrk sends ("default" and "-" send none)
  case $1 in default | -) echo "" ;; *) echo "$1" ;; esac
}

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
  log "k6: $row_scenario on $target, replicas $replicas, $rate/s for $duration"
  profile_start "$label"
  start=$(date +%s)
  "$k6" run "${out[@]}" "${extra[@]}" -e STORE="$store" \
    -e SCENARIO="$scenario" -e RATE="$rate" -e REPLICAS="$(sent_replicas "$replicas")" -e NODES="$nodes" \
    -e SUMMARY_JSON="$summary" loadtest/kv.js 2>&1 | tee "$run_dir/k6/$label.log" || rc=$?
  end=$(date +%s)
  profile_stop "$label"
  runs_row "$target" "$row_scenario" "$replicas" "$rate" "$duration" "$start" "$end" "$rc" "k6/$label.json" "k6/$label.csv.gz"
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

# Three wrk processes at once, one per node (the same URL three times for one server), each one
# thread with WRK_CONNECTIONS connections; every connection sends its next request as soon as the
# last one answered. Each prints one WRK_SUMMARY line (loadtest/wrk/common.lua).
run_wrk() { # target nodes replicas
  local target=$1 nodes=$2 replicas=$3 urls i rc=0 r start end files=() waits=()
  [ "$WRK" = 1 ] || return 0
  local label=${target}_wrk-mixed send_replicas
  [ "$replicas" = - ] || label+=_${replicas//\//of}
  send_replicas=$(sent_replicas "$replicas")
  IFS=, read -ra urls <<<"$nodes"
  [ ${#urls[@]} -ge 3 ] || urls=("${urls[0]}" "${urls[0]}" "${urls[0]}")
  mkdir -p "$run_dir/wrk"
  step "wrk on $target: mixed, closed loop, 3 × -t1 -c$WRK_CONNECTIONS for $WRK_DURATION${send_replicas:+, replicas $send_replicas}"
  profile_start "$label"
  start=$(date +%s)
  for i in 0 1 2; do
    files+=("wrk/$label-$((i + 1)).txt")
    printf '# url: %s\n' "${urls[$i]}" >"$run_dir/${files[$i]}"
    STORE=$store KEYSPACE=$KEYSPACE VALUE_SIZE=$VALUE_SIZE READ_RATIO=${READ_RATIO:-0.5} REPLICAS=$send_replicas \
      WRK_DIR=$repo/loadtest/wrk wrk -t1 -c"$WRK_CONNECTIONS" -d"$WRK_DURATION" --timeout "${TIMEOUT:-10s}" \
      -s loadtest/wrk/mixed.lua "${urls[$i]}" >>"$run_dir/${files[$i]}" 2>&1 &
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
  runs_row "$target" wrk-mixed "$replicas" closed "$WRK_DURATION" "$start" "$end" "$rc" "$(IFS=,; echo "${files[*]}")" -
  [ "$rc" -eq 0 ] || log "WARNING: a wrk process exited with $rc: see ${run_dir#"$repo"/}/wrk/$label-*.txt"
  printf '    %s\n' "$(cd "$run_dir" && "$py" "$repo/loadtest/report.py" --wrk-line "${files[@]}")"
  wrk_peak=$(cd "$run_dir" && "$py" "$repo/loadtest/report.py" --wrk-rate "${files[@]}")
  scrape_metrics "$label" "$nodes"
}

# The tail below saturation, where users run: the mixed load, open loop, at each of PEAK_FRACTIONS
# of the rate the target's own wrk run just reached (wrk_peak), so that every target is compared
# with the others at the same share of its own capacity. vegeta, not k6, sends it: at these rates
# k6's JavaScript took so much of the two cores that it fell behind its own schedule (at half of
# ringkv's peak it sent 93 % of the rate, at 3/4 70 %) and the servers measured its starvation.
run_peak_fractions() { # target nodes replicas
  local target=$1 nodes=$2 replicas=$3 fraction rate
  [ -n "$PEAK_FRACTIONS" ] || return 0
  [ "${wrk_peak%.*}" -gt 0 ] || { log "WARNING: no wrk peak for $target: PEAK_FRACTIONS not run"; return 0; }
  for fraction in $PEAK_FRACTIONS; do
    rate=$(awk -v p="$wrk_peak" -v f="$fraction" 'BEGIN { printf "%d", p * f + 0.5 }')
    step "$target at $fraction of its peak ($wrk_peak/s): vegeta, mixed, open loop, $rate/s for $DURATION"
    run_vegeta "$target" "$nodes" "$replicas" "$rate" "$(awk -v f="$fraction" 'BEGIN { printf "%g", f * 100 }')"
  done
}

seconds_of() { # a duration as k6 and Go write them (30s, 1m30s, 500ms, 2h): seconds
  awk -v t="$1" 'BEGIN {
    if (t ~ /^[0-9.]+$/) { total = t; t = "" } # bare seconds
    while (match(t, /^[0-9.]+(ms|s|m|h)/)) {
      n = substr(t, 1, RLENGTH); u = n; sub(/^[0-9.]+/, "", u); n += 0
      total += u == "ms" ? n / 1000 : u == "s" ? n : u == "m" ? n * 60 : n * 3600
      t = substr(t, RLENGTH + 1)
    }
    if (t != "") exit 1
    printf "%g", total
  }'
}

# vegeta at a constant rate: each request is started on schedule whatever the earlier ones do,
# on as many workers at first as wrk's three processes have connections, over at most
# WRK_CONNECTIONS connections to each node (HTTP/1.1, as wrk's): a request that
# finds them all busy waits for one, and that wait is in its latency, as in wrk2. Unbounded, the
# pool grew to 7,567 connections within 7 s of a run whose first answers were slow, and measured
# the servers' TLS handshakes instead of their requests. Its results become a summary the report
# reads as k6's.
# The first OPEN_LOOP_SETTLE of each run are sent but not counted, as wrk2 leaves out its
# calibration: the step from idle to the full rate on fresh connections, right after wrk's burst
# (whose writes the stores may still be flushing). At 3/4 of the peak, ringkv's first 1.5 s had
# p99s of 130-170 ms against 10-60 after, and in a 30 s run made up most of the slowest 1 %;
# etcd's were as its rest. At 3/4 of a secure peak on a slower day, the JVMs' compiled code met
# connections and headers wrk had not sent (Go's client, new TLS connections, wrk's closing): 30
# compiled methods thrown away within 3 s, the event loop's read path among them, and C2 took half
# a core for 3 s to compile them again; the queue that built up drained at the quarter of the
# machine left over, until 7-12 s in (-Xlog:jit+compilation,deoptimization). Hence 15 s by
# default, as wrk2's calibration takes 10 s. The summary's config says how many requests were left
# out (settling).
run_vegeta() { # target nodes replicas rate percent
  local target=$1 nodes=$2 replicas=$3 rate=$4 row_scenario=peak-$5 start end rc=0 length settle
  settle=$(seconds_of "$OPEN_LOOP_SETTLE")
  local label="${target}_${row_scenario}_${replicas//\//of}_${rate}" dir=$run_dir/vegeta
  # The targets carry the target's token: with the data, which the run removes (unless KEEP_DATA).
  local targets=$data_dir/vegeta/$target.targets.jsonl results=$dir/$label.csv.gz summary=$dir/$label.json
  mkdir -p "$dir" "$data_dir/vegeta"
  [ -f "$targets" ] || REPLICAS=$(sent_replicas "$replicas") "$py" loadtest/report.py --vegeta-targets "$targets" "$store" "$nodes"
  profile_start "$label"
  start=$(date +%s)
  length=$(awk -v d="$(seconds_of "$DURATION")" -v s="$settle" 'BEGIN { printf "%.3fs", d + s }')
  vegeta_attack "$targets" "$rate" "$length" "$WRK_CONNECTIONS" "${SSL_CERT_FILE:-}" "$dir/$label" || rc=$?
  end=$(date +%s)
  profile_stop "$label"
  "$py" loadtest/report.py --vegeta-summary "$results" "$summary" mixed "$rate" "$DURATION" "$OPEN_LOOP_SETTLE"
  [ "${KEEP_RAW:-0}" = 1 ] || rm -f "$results"
  # The row's window is the counted part: the CPU and memory beside it are the counted requests'.
  start=$(awk -v t="$start" -v s="$settle" 'BEGIN { printf "%d", t + s + 0.5 }')
  runs_row "$target" "$row_scenario" "$replicas" "$rate" "$DURATION" "$start" "$end" "$rc" "vegeta/$label.json" -
  [ "$rc" -eq 0 ] || log "WARNING: vegeta exited with $rc: see ${dir#"$repo"/}/$label.log"
  printf '    %s\n' "$("$py" loadtest/report.py --line "$summary")"
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

print_peaks() { # since-epoch process-name-prefix
  [ -s "$run_dir/rss.tsv" ] || return 0
  awk -F'\t' -v since="$1" -v prefix="$2" '$1 >= since && index($2, prefix) == 1 && $4 > peak[$2] { peak[$2] = $4 }
    END { for (n in peak) printf "    peak RSS %-12s %6.0f MiB\n", n, peak[n] / 1024 }' "$run_dir/rss.tsv" | sort
}

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
  wrk_peak=0
  run_wrk "$target" "$nodes" "$replicas"
  run_peak_fractions "$target" "$nodes" "$replicas"
  print_peaks "$since" "$prefix"
  step "stopping $target"
  stop_all
}
