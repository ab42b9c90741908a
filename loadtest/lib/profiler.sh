# Sourced by loadtest/run.sh and loadtest/repair-impact.sh (after bin/lib/common.sh): async-profiler
# and its JFR converter, fetched from Maven Central once into the cache, loaded into running JVMs
# with jcmd. The caller defines step (a function that logs the start of a step).
# shellcheck shell=bash disable=SC2154,SC2034

readonly AP_VERSION=4.5
# A profiled JVM starts with these: the agent is loaded later without a warning, and the JIT keeps
# debug info at every instruction, not only at safepoints, so that inlined frames are attributed right.
readonly PROFILE_JVM_FLAGS=(-XX:+EnableDynamicAgentLoading -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints)

fetch_async_profiler() { # cache-dir; sets ap_lib (the agent) and ap_conv (the converter's jar)
  local arch dir artifact root=$PWD
  case $(uname -m) in
    x86_64) arch=linux-x64 ;;
    aarch64) arch=linux-arm64 ;;
    *) die "PROFILE=1: async-profiler's jar has no library for $(uname -m)" ;;
  esac
  dir=$1/async-profiler-$AP_VERSION
  ap_lib=$dir/$arch/libasyncProfiler.so
  ap_conv=$dir/jfr-converter-$AP_VERSION.jar
  if [ ! -f "$ap_lib" ] || [ ! -f "$ap_conv" ]; then
    step "fetching async-profiler $AP_VERSION and jfr-converter $AP_VERSION (Maven Central)"
    mkdir -p "$dir"
    for artifact in async-profiler jfr-converter; do
      bin/with-jdk ./mvnw -B -q -N dependency:copy -Dartifact="tools.profiler:$artifact:$AP_VERSION" \
        -DoutputDirectory="$dir" || die "could not fetch tools.profiler:$artifact:$AP_VERSION"
    done
    (cd "$dir" && "$root/bin/with-jdk" jar xf "async-profiler-$AP_VERSION.jar" "$arch/libasyncProfiler.so")
    if [ ! -f "$ap_lib" ] || [ ! -f "$ap_conv" ]; then die "no $ap_lib or $ap_conv after fetching async-profiler"; fi
  fi
  log "async-profiler: $ap_lib"
}

# Options are one quoted argument, or jcmd would split them at '='.
ap_agent() { # pid options log
  bin/with-jdk jcmd "$1" JVMTI.agent_load "$ap_lib" "\"$2\"" >>"$3" 2>&1
}

flame_graph() { # kind jfr html log [converter options...]: kind is cpu, alloc or lock
  local kind=$1 jfr=$2 html=$3 logf=$4
  shift 4
  bin/with-jdk java -jar "$ap_conv" --"$kind" "$@" "$jfr" "$html" >>"$logf" 2>&1
}

# ---- loadtest/run.sh: every JVM of the target profiled around each measured run ------------------
# async-profiler is loaded into every JVM of the target (not etcd, not k6 or wrk) before a measured
# run and stopped after it: one JFR per JVM with cpu, alloc and lock samples, then three flame
# graphs each, profiles/<run>/<process>-{cpu,alloc,lock}.html. Uses run.sh's globals PROFILE,
# PROFILE_ALLOC, PROFILE_LOCK, KEEP_RAW, run_dir (procs.tsv, env.txt) and repo.
profiled=() # "name pid jfr" of the recordings under way
profile_start() { # run-label
  [ "$PROFILE" = 1 ] || return 0
  local name pid dir=$run_dir/profiles/$1 entry jfr waits=()
  profiled=()
  while IFS=$'\t' read -r name pid; do
    case $name in etcd-*) continue ;; esac # JVMs only
    [ -z "$pid" ] || profiled+=("$name $pid $dir/$name.jfr")
  done <"$run_dir/procs.tsv"
  [ ${#profiled[@]} -gt 0 ] || return 0
  mkdir -p "$dir"
  for entry in "${profiled[@]}"; do
    read -r name pid jfr <<<"$entry"
    ap_agent "$pid" "start,event=cpu,alloc=$PROFILE_ALLOC,lock=$PROFILE_LOCK,jfr,file=$jfr" "$run_dir/profiles/jcmd.log" &
    waits+=($!)
  done
  [ ${#waits[@]} -eq 0 ] || wait "${waits[@]}" || log "WARNING: starting the profiler failed somewhere: see profiles/jcmd.log and the node logs"
}

profile_stop() { # run-label
  [ "$PROFILE" = 1 ] || return 0
  local label=$1 entry name pid jfr kind waits=()
  for entry in "${profiled[@]}"; do
    read -r name pid jfr <<<"$entry"
    ap_agent "$pid" stop "$run_dir/profiles/jcmd.log" &
    waits+=($!)
  done
  [ ${#waits[@]} -eq 0 ] || wait "${waits[@]}" || log "WARNING: stopping the profiler failed somewhere: see profiles/jcmd.log"
  for entry in "${profiled[@]}"; do
    read -r name pid jfr <<<"$entry"
    if [ ! -s "$jfr" ]; then log "WARNING: no profile from $name (${jfr#"$repo"/})"; continue; fi
    grep -q '^profiler:' "$run_dir/env.txt" || note_profiler_engine "$jfr"
    for kind in cpu alloc lock; do
      flame_graph "$kind" "$jfr" "${jfr%.jfr}-$kind.html" "$run_dir/profiles/convert.log" --title "$label: $name, $kind" ||
        log "WARNING: no $kind flame graph for $name in $label"
    done
    [ "${KEEP_RAW:-0}" = 1 ] || rm -f "$jfr"
  done
  profiled=()
}

# Which engine sampled the CPU, into env.txt: perf_events, or a timer (ctimer) where perf_events
# is not allowed.
note_profiler_engine() { # jfr
  local engine
  engine=$(bin/with-jdk jfr print --events jdk.ActiveSetting "$1" 2>/dev/null |
    awk '/name = "engine"/ { getline; sub(/.*= "/, ""); sub(/".*/, ""); print; exit }')
  echo "profiler: async-profiler $AP_VERSION, loaded with jcmd JVMTI.agent_load around each measured run; cpu engine: ${engine:-unknown} (kernel.perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')); alloc sampled every $PROFILE_ALLOC, lock every $PROFILE_LOCK of contention" >>"$run_dir/env.txt"
  log "profiler: cpu engine ${engine:-unknown}"
}
