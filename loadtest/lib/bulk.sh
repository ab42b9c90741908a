# Sourced by loadtest/bulk-load.sh and loadtest/ycsb.sh (after bin/lib/common.sh and
# loadtest/lib/targets.sh): the run's folder and exit trap, the bulk load with three wrk processes
# (loadtest/wrk/bulk.lua), ringkv nodes to load, its tally, the merge of wrk latency distributions,
# and what each server holds on disk and in memory.
# Uses the caller's globals: repo, run_dir (wrk/, procs.tsv, rss.tsv), pids, helpers, and the settings
# KEYS, VALUE_BYTES, REPLICAS, CONNECTIONS, TIMEOUT, LOAD_LIMIT; logical (bytes each server should
# hold) for the disk ratio.
# shellcheck shell=bash disable=SC2154,SC2034

# The run's folder, loadtest/results/<stamp>-<kind>/ (logs/, wrk/, data/, procs.tsv), and the
# exit trap: whatever the run started is stopped, its data removed unless KEEP_DATA=1. Sets stamp,
# load_before, run_dir, data_dir, and the empty pids, helpers, sampler_pid, profile_flags and
# node_args; finished=1 marks a complete run.
begin_run() { # kind
  stamp=$(date -u +%Y%m%dT%H%M%SZ) load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  run_dir=$repo/loadtest/results/$stamp-$1
  data_dir=$run_dir/data
  mkdir -p "$run_dir/logs" "$run_dir/wrk" "$data_dir"
  : >"$run_dir/procs.tsv"
  pids=() helpers=() sampler_pid="" finished=0 profile_flags=() node_args=()
  trap end_run EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

end_run() {
  local rc=$?
  trap - EXIT INT TERM
  stop_started
  [ "$KEEP_DATA" = 1 ] || rm -rf "$data_dir"
  [ "$rc" -eq 0 ] || [ "$finished" = 1 ] || log "stopped (exit $rc); what was measured is in ${run_dir#"$repo"/}"
  exit "$rc"
}

# Fresh ringkv nodes on loopback, one per port, peers of each other (one port: a single node),
# with bin/node at NODE_HEAP from node_jar, the cluster secret secret, and the optional arrays
# profile_flags (bin/node's --jvm flags) and node_args (more settings); returns once each answers.
# Sets urls, dirs (data directories, under data_dir/<target>/) and logs, in the ports' order.
start_ringkv_nodes() { # target port...
  local target=$1 port i; shift
  urls=() dirs=() logs=() ringkv_peers=""
  [ $# -eq 1 ] || { ringkv_peers=$(printf 'http://127.0.0.1:%s,' "$@"); ringkv_peers=${ringkv_peers%,}; }
  for port in "$@"; do
    urls+=("http://127.0.0.1:$port") dirs+=("$data_dir/$target/node-$port") logs+=("$run_dir/logs/$target-$port.log")
    start_ringkv_node "$target" "$port" "${logs[-1]}"
  done
  for i in "${!urls[@]}"; do await_node "${urls[$i]}" "${pids[$i]}" "${logs[$i]}"; done
}

# One node of the nodes start_ringkv_nodes started (again: loadtest/rebuild.sh restarts one), its
# peers ringkv_peers; does not wait for it.
start_ringkv_node() { # target port log
  local url=http://127.0.0.1:$2
  start_server "$1-$2" "$3" bin/node --heap "$NODE_HEAP" "${profile_flags[@]}" --jar "$node_jar" \
    --server.port="$2" --ringkv.data-dir="$data_dir/$1/node-$2" --ringkv.cluster.self="$url" \
    ${ringkv_peers:+--ringkv.cluster.peers="$ringkv_peers"} --ringkv.cluster.secret="$secret" "${node_args[@]}"
}

# Three fresh nodes on the ports (the target "cluster"), KEYS records of VALUE_BYTES loaded through
# them, then SETTLE seconds for their compactions: where loadtest/rebuild.sh and backup.sh begin.
# Uses the caller's step function.
load_fresh_cluster() { # port port port
  step "three fresh ringkv nodes on 127.0.0.1:$1..$3"
  start_ringkv_nodes cluster "$@"
  step "loading $KEYS keys of $VALUE_BYTES B"
  load cluster ringkv "${urls[@]}"
  tally cluster 201
  log "loaded in $load_seconds s; not 201: $bad_codes; socket errors: $sock"
  step "settling for $SETTLE s"
  sleep "$SETTLE"
}

mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }

# ---- the load -------------------------------------------------------------------------------------------
# Three wrk processes at once, one per URL. A wrk thread whose share is answered stops and touches
# its marker, but wrk's main thread sleeps out -d: a SIGINT ends that sleep, and wrk prints its
# summary. The load's wall time ends at the last marker.
load() { # label store url url url; sets load_seconds
  local label=$1 store=$2 i start end=0 t rc=0 wrks=(); shift 2
  start=$(date +%s%N)
  for i in 0 1 2; do
    KEYS=$KEYS PART=$i PARTS=3 VALUE_BYTES=$VALUE_BYTES STORE=$store REPLICAS=$REPLICAS WRK_THREADS=1 \
      WRK_CONNECTIONS=$CONNECTIONS WRK_DIR=$repo/loadtest/wrk DONE_FILE=$run_dir/wrk/$label-$i.done \
      wrk -t1 -c"$CONNECTIONS" -d"$LOAD_LIMIT" --timeout "$TIMEOUT" -s loadtest/wrk/bulk.lua "$1" \
      >"$run_dir/wrk/$label-$i.txt" 2>&1 &
    wrks+=($!) helpers+=($!); shift
  done
  ( # the interrupter: SIGINT to each wrk once its thread is done, again until it has ended
    while :; do
      t=0
      for i in 0 1 2; do
        kill -0 "${wrks[$i]}" 2>/dev/null || continue
        t=1
        [ ! -e "$run_dir/wrk/$label-$i.done.0" ] || kill -INT "${wrks[$i]}" 2>/dev/null || true
      done
      [ "$t" = 1 ] || exit 0
      sleep 0.2
    done
  ) &
  helpers+=($!)
  for i in 0 1 2; do wait "${wrks[$i]}" || rc=$?; done
  kill "${helpers[-1]}" 2>/dev/null || true
  wait "${helpers[-1]}" 2>/dev/null || true
  helpers=()
  for i in 0 1 2; do
    if [ -e "$run_dir/wrk/$label-$i.done.0" ]; then
      t=$(date -r "$run_dir/wrk/$label-$i.done.0" +%s%N)
      [ "$t" -le "$end" ] || end=$t
    else
      log "WARNING: wrk $i did not finish its share (exit $rc): see ${run_dir#"$repo"/}/wrk/$label-$i.txt"
      end=$(date +%s%N)
    fi
  done
  load_seconds=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.1f", ns / 1e9 }')
}

# Sums the three BULK_SUMMARY lines and merges the three latency distributions (each process's 1000
# quantiles, weighted by its answers). Sets: answered, sock, bad, bad_codes, p50, p99.
tally() { # label ok-status
  local files=("$run_dir/wrk/$1"-[012].txt) ok=$2 line
  line=$(awk -v ok="$ok" '/^BULK_SUMMARY/ {
      for (f = 2; f <= NF; f++) {
        split($f, kv, "="); if (kv[1] != "status") { s[kv[1]] += kv[2]; continue }
        n = split(kv[2], codes, ","); for (c = 1; c <= n; c++) { split(codes[c], cn, ":"); st[cn[1]] += cn[2] }
      }
      runs++ }
    END {
      bad = ""; nbad = 0
      for (c in st) if (c != ok) { bad = bad (bad == "" ? "" : ", ") c " x" st[c]; nbad += st[c] }
      missing = s["keys"] - s["responses"]; if (missing > 0) { bad = bad (bad == "" ? "" : ", ") "unanswered x" missing; nbad += missing }
      printf "%d\t%d\t%d\t%s\t%d connect, %d read, %d write, %d timeout\t%d\n", s["responses"], nbad, runs,
        (bad == "" ? "none" : bad), s["connect"], s["read"], s["write"], s["timeout"], s["connect"] + s["read"] + s["write"] + s["timeout"] }' "${files[@]}")
  IFS=$'\t' read -r answered bad runs bad_codes sock sock_n <<<"$line"
  [ "$runs" = 3 ] || { bad=$((bad + 1)); bad_codes+=" (only $runs of 3 wrk summaries)"; }
  read -r p50 p99 < <(merged_percentiles BULK responses "50 99" "${files[@]}")
}

# The latency percentiles (ms, one decimal, on one line) of several wrk processes together: each
# process wrote <PREFIX>_SUMMARY with a count field and <PREFIX>_QUANTILES (common.write_quantiles),
# its distribution at every 0.1 %, which is weighted by that count.
merged_percentiles() { # prefix count-field "percentiles" file...
  local prefix=$1 field=$2 wanted=$3; shift 3
  awk -v s="${prefix}_SUMMARY" -v q="${prefix}_QUANTILES" -v f="$field" '
      $1 == s { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) w = kv[2] / 1000 } }
      $1 == q { for (i = 2; i <= NF; i++) print $i, w }' "$@" | sort -g |
    awk -v wanted="$wanted" '{ v[NR] = $1; c[NR] = (NR > 1 ? c[NR - 1] : 0) + $2 }
      END { n = split(wanted, p, " "); line = ""
        for (j = 1; j <= n; j++) { x = "-"
          for (i = 1; i <= NR; i++) if (c[i] >= p[j] / 100 * c[NR] - 1e-9) { x = sprintf("%.1f", v[i]); break }
          line = line (j > 1 ? " " : "") x }
        print line }'
}

disks() { # kind dir...: sets disk_text, "1062 (64), ..." MiB per server, total (WAL), and max_ratio
  local kind=$1 dir total wal; shift
  disk_text="" max_ratio=0
  for dir in "$@"; do
    total=$(du -sb "$dir" | cut -f1)
    if [ "$kind" = ringkv ]; then wal=$(find "$dir" -maxdepth 1 -type f -name '*.log' -printf '%s\n')
    else wal=$(find "$dir/member/wal" -type f -printf '%s\n' 2>/dev/null || true); fi
    wal=$(awk '{ s += $1 } END { print s + 0 }' <<<"$wal")
    disk_text+="${disk_text:+, }$(mib "$total") ($(mib "$wal"))"
    max_ratio=$(awk -v t="$total" -v l="$logical" -v m="$max_ratio" 'BEGIN { r = t / l; printf "%.2f", (r > m ? r : m) }')
  done
}

peaks() { # since: sets rss_text, "412, 398, 405" MiB per server (procs.tsv order), and max_rss
  local name pid p
  rss_text="" max_rss=0
  while IFS=$'\t' read -r name pid; do
    p=$(awk -F'\t' -v since="$1" -v n="$name" '$1 >= since && $2 == n && $4 > m { m = $4 } END { printf "%.0f", m / 1024 }' "$run_dir/rss.tsv")
    rss_text+="${rss_text:+, }$p"
    [ "$p" -le "$max_rss" ] || max_rss=$p
  done <"$run_dir/procs.tsv"
}

