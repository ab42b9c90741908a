# Sourced by loadtest/run.sh: how it launches ringkv nodes and times each one's way to readiness.
# Uses run.sh's globals: run_dir, data_dir, cache_dir, node_jar, jar_sum, secret, pids, helpers,
# cluster_ports, profile_flags, ringkv_scheme (http, or https for a target with TLS) and its settings (NODE_HEAP, AOT, SLOW_NODE_DELAY, COLD_RATE,
# COLD_DURATION).
# shellcheck shell=bash disable=SC2154,SC2034

# How ringkv nodes are launched (bin/node, as bin/cluster and the tests launch them): from the fat
# jar, or (AOT=1, a jar that has the training mode) from its extracted form with the ahead-of-time
# cache, the way the container image starts them. Sets ringkv_node (the command) and aot_used.
ringkv_launcher() {
  local flag jar_listing aot_dir launch_jar=(--jar "$node_jar")
  ringkv_node=(bin/node --heap "$NODE_HEAP")
  for flag in "${profile_flags[@]}"; do ringkv_node+=(--jvm "$flag"); done
  # On every node's class path; only the slow node sets the delay.
  [ -z "$SLOW_NODE_DELAY" ] || ringkv_node+=(--faults "$data_dir/ringkv-faults.jar")
  aot_used="no (AOT=${AOT:-1})"
  if [ "${AOT:-1}" = 1 ]; then
    # Listed first: grep -q would stop reading early, and pipefail would take unzip's SIGPIPE for a no.
    jar_listing=$(unzip -l "$node_jar" 2>/dev/null || true)
    if [[ $jar_listing == *io/ringkv/startup/TrainingRun.class* ]]; then
      step "ahead-of-time cache for the jar (bin/aot-cache; trained once per jar, then kept)"
      mkdir -p "$cache_dir/aot"
      [ -f "$cache_dir/aot/ringkv-$jar_sum.jar" ] || cp "$node_jar" "$cache_dir/aot/ringkv-$jar_sum.jar"
      aot_dir=$(bin/aot-cache "$cache_dir/aot/ringkv-$jar_sum.jar") || die "bin/aot-cache failed"
      launch_jar=(--jar "$cache_dir/aot/ringkv-$jar_sum.jar" --aot)
      aot_used="yes: $(basename "$aot_dir")/ringkv.aot (bin/aot-cache)"
    else
      aot_used="no: this jar has no training mode (io.ringkv.startup.TrainingRun)"
    fi
  fi
  ringkv_node+=("${launch_jar[@]}")
}

# ringkv nodes are started together, then each one's time from its JVM's start to readiness
# (GET /actuator/health/readiness answering 200, polled every 100 ms) and to /v0/status is
# recorded in startup.tsv.
ringkv_names=() ringkv_urls=() ringkv_launch=() ringkv_pids=()
start_ringkv() { # target name port peers(or "") extra-args...
  local target=$1 name=$2 port=$3 peers=$4 peer_args=()
  shift 4
  local url=$ringkv_scheme://127.0.0.1:$port
  [ -z "$peers" ] || peer_args=(--ringkv.cluster.peers="$peers")
  ringkv_launch+=("$(date +%s%3N)")
  start_server "$name" "$run_dir/logs/$name.log" "${ringkv_node[@]}" \
    --server.port="$port" --ringkv.data-dir="$data_dir/$target/$name" --ringkv.cluster.self="$url" \
    "${peer_args[@]}" --ringkv.cluster.secret="$secret" "$@"
  ringkv_names+=("$name") ringkv_urls+=("$url") ringkv_pids+=("${pids[-1]}")
}

poll_ready() { # url pid launch-ms out-file: "ready_ms<TAB>status_ms", or "exited" / "timeout"
  local url=$1 pid=$2 launch=$3 out=$4 ready="" status="" now
  while :; do
    if [ -z "$ready" ] &&
      [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/actuator/health/readiness" 2>/dev/null)" = 200 ]; then
      ready=$(($(date +%s%3N) - launch))
    fi
    if [ -z "$status" ] && curl -fs -o /dev/null --max-time 2 "$url/v0/status" 2>/dev/null; then
      status=$(($(date +%s%3N) - launch))
    fi
    if [ -n "$ready" ] && [ -n "$status" ]; then printf '%s\t%s\n' "$ready" "$status" >"$out"; return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo exited >"$out"; return 1; }
    now=$(date +%s%3N)
    [ $((now - launch)) -lt 120000 ] || { echo timeout >"$out"; return 1; }
    sleep 0.1
  done
}

wait_ringkv_ready() { # target
  local target=$1 i out res waits=()
  for i in "${!ringkv_names[@]}"; do
    poll_ready "${ringkv_urls[$i]}" "${ringkv_pids[$i]}" "${ringkv_launch[$i]}" "$run_dir/logs/${ringkv_names[$i]}.ready" &
    waits+=($!)
    helpers+=($!)
  done
  for i in "${waits[@]}"; do wait "$i" || true; done
  helpers=()
  for i in "${!ringkv_names[@]}"; do
    out=$run_dir/logs/${ringkv_names[$i]}.ready
    res=$(cat "$out" 2>/dev/null || echo missing)
    rm -f "$out"
    case $res in
      exited | timeout | missing)
        tail -n 20 "$run_dir/logs/${ringkv_names[$i]}.log" >&2
        [ "$res" = exited ] && die "${ringkv_names[$i]} exited before it was ready"
        die "${ringkv_urls[$i]} was not ready (readiness and /v0/status) within 120 s"
        ;;
    esac
    printf '%s\t%s\t%s\t%s\n' "$target" "${ringkv_names[$i]}" "${ringkv_urls[$i]##*:}" "$res" >>"$run_dir/startup.tsv"
    log "${ringkv_names[$i]}: ready in $(seconds_of "${res%%$'\t'*}ms") s (readiness 200), /v0/status in $(seconds_of "${res##*$'\t'}ms") s, from its JVM's start"
  done
  ringkv_names=() ringkv_urls=() ringkv_launch=() ringkv_pids=()
}

start_cluster() { # target name-prefix extra-args...; sets cluster_urls
  local target=$1 prefix=$2 port slow peers
  shift 2
  peers=$(printf "$ringkv_scheme"'://127.0.0.1:%s,' "${cluster_ports[@]}"); peers=${peers%,}
  for port in "${cluster_ports[@]}"; do
    slow=()
    # The slow-node scenario: the last node answers every replica call late.
    [ -z "$SLOW_NODE_DELAY" ] || [ "$port" != "${cluster_ports[2]}" ] || slow=(--ringkv.testing.replica-delay="$SLOW_NODE_DELAY")
    start_ringkv "$target" "$prefix$port" "$port" "$peers" "$@" "${slow[@]}"
  done
  wait_ringkv_ready "$target"
  # The cold start: straight after readiness, before any warm-up.
  if [ "$COLD_DURATION" != 0 ] && [ "$COLD_DURATION" != 0s ]; then
    step "cold start of $target: mixed at $COLD_RATE/s, replicas 2/3, $COLD_DURATION on the empty store"
    run_k6 "$target" mixed 2/3 "$COLD_RATE" "$peers" cold
  fi
  cluster_urls=$peers
}
