# Sourced by loadtest/run.sh and loadtest/bulk-load.sh (after bin/lib/common.sh): how they start,
# watch and stop what they measure, so that both start nodes and etcd members the same way.
# Only functions; they use the caller's globals:
#   repo          the repository's root            run_dir   the run's folder (procs.tsv, logs/, rss.tsv)
#   pids          array: the servers started       data_dir  where etcd keeps its data (etcd/etcd-<i>)
#   helpers       array: short-lived helpers in the background (wrk processes, pollers)
#   sampler_pid   the rss_sampler running in the background, or empty
#   stamp         the run's timestamp (etcd's cluster token)
#   etcd_client_ports, etcd_peer_ports   arrays of three ports each
#   pki_dir       where make_pki (loadtest/lib/pki.sh) wrote the run's certificates (secure etcd)
#   step          a function: logs the start of a step (apt_install calls it)
# start_etcd assumes no other server was started before it (its members are pids[0..2]).
# shellcheck shell=bash disable=SC2154

start_server() { # name log command... ; its pid is recorded for stopping and RSS sampling
  local name=$1 logf=$2; shift 2
  "$@" >"$logf" 2>&1 &
  local pid=$! # bin/node and bin/with-jdk exec java, so this is the JVM itself (or etcd)
  pids+=("$pid")
  printf '%s\t%s\n' "$name" "$pid" >>"$run_dir/procs.tsv"
  log "$name: pid $pid, log ${logf#"$repo"/}"
}

stop_all() { # SIGTERM (a node finishes what is in flight and closes RocksDB), SIGKILL after 30 s
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local _
  for _ in $(seq 1 60); do
    local alive=0 pid
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    sleep 0.5
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  : >"$run_dir/procs.tsv"
}

stop_started() { # at exit: the helpers, the servers (stop_all) and the sampler
  [ ${#helpers[@]} -eq 0 ] || kill "${helpers[@]}" 2>/dev/null || true
  stop_all
  if [ -n "$sampler_pid" ]; then kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; fi
}

# Every second: the resident memory (VmRSS, KiB) and CPU time (utime+stime, clock ticks) of every
# process we started, in rss.tsv; the machine's CPU counters and load, in machine.tsv.
rss_sampler() {
  local now name pid rss ticks user nice sys idle iowait irq softirq steal load _
  while :; do
    now=$(date +%s)
    while IFS=$'\t' read -r name pid; do
      [ -n "$pid" ] || continue
      rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
      ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || true)
      [ -z "$rss" ] || printf '%s\t%s\t%s\t%s\t%s\n' "$now" "$name" "$pid" "$rss" "${ticks:-0}" >>"$run_dir/rss.tsv"
    done <"$run_dir/procs.tsv"
    read -r _ user nice sys idle iowait irq softirq steal _ </proc/stat
    read -r load _ </proc/loadavg
    printf '%s\t%s\t%s\t%s\n' "$now" "$((user + nice + sys + irq + softirq + steal))" \
      "$((user + nice + sys + irq + softirq + steal + idle + iowait))" "$load" >>"$run_dir/machine.tsv"
    sleep 1
  done
}

etcd_ports() { # port-base: sets etcd_client_ports (base+20..+22) and etcd_peer_ports (base+30..+32)
  etcd_client_ports=("$(($1 + 20))" "$(($1 + 21))" "$(($1 + 22))")
  etcd_peer_ports=("$(($1 + 30))" "$(($1 + 31))" "$(($1 + 32))")
}

# Three members, fresh data, default durability (fsync of the WAL per write). With "secure", as one
# would secure them: HTTPS on the client port, mutual TLS between members (the certificates of
# make_pki in pki_dir), and auth on with a user whose role may read and write the benchmark's keys
# (prefix "k"), not root; exports ETCD_TOKEN, that user's token, which the load sends
# (loadtest/lib.js, loadtest/wrk/common.lua). The token is etcd's default kind, "simple": a map
# lookup per request, the cheapest check etcd offers (a JWT's would verify a signature), and kept
# alive by every request that uses it.
start_etcd() { # [secure]
  local secure=${1:-} scheme=http prefix=${1:+secure-}etcd i name cport pport initial="" url tls=() _
  if [ -n "$secure" ]; then
    scheme=https
    tls=(--cert-file "$pki_dir/node.crt" --key-file "$pki_dir/node.key"
      --peer-cert-file "$pki_dir/node.crt" --peer-key-file "$pki_dir/node.key"
      --peer-trusted-ca-file "$pki_dir/ca.crt" --peer-client-cert-auth)
  fi
  for i in 0 1 2; do initial+="etcd-$i=$scheme://127.0.0.1:${etcd_peer_ports[$i]},"; done
  initial=${initial%,}
  etcd_urls=""
  for i in 0 1 2; do
    cport=${etcd_client_ports[$i]} pport=${etcd_peer_ports[$i]} name=$prefix-${etcd_client_ports[$i]}
    # Data of their own: members that found the plain ones' data would keep its http:// peer URLs.
    start_server "$name" "$run_dir/logs/$name.log" etcd --name "etcd-$i" --data-dir "$data_dir/$prefix/etcd-$i" \
      --listen-client-urls "$scheme://127.0.0.1:$cport" --advertise-client-urls "$scheme://127.0.0.1:$cport" \
      --listen-peer-urls "$scheme://127.0.0.1:$pport" --initial-advertise-peer-urls "$scheme://127.0.0.1:$pport" \
      --initial-cluster "$initial" --initial-cluster-token "ringkv-loadtest-$stamp" --initial-cluster-state new \
      "${tls[@]}" --logger zap --log-outputs stderr
    etcd_urls+="$scheme://127.0.0.1:$cport,"
  done
  etcd_urls=${etcd_urls%,}
  for i in 0 1 2; do
    url=$scheme://127.0.0.1:${etcd_client_ports[$i]}
    for _ in $(seq 1 300); do
      kill -0 "${pids[$i]}" 2>/dev/null || { tail -n 20 "$run_dir/logs/$prefix-${etcd_client_ports[$i]}.log" >&2; die "etcd member $url exited"; }
      curl -s --max-time 2 "$url/health" 2>/dev/null | grep -q '"health":"true"' && continue 2
      sleep 0.2
    done
    die "etcd member $url did not answer {\"health\":\"true\"} within 60 s"
  done
  [ -z "$secure" ] || etcd_enable_auth "${etcd_urls%%,*}"
}

etcd_enable_auth() { # url: root (etcd wants one before auth goes on), the load's user and role; ETCD_TOKEN
  local url=$1 root_password user_password
  root_password=$(openssl rand -hex 16) user_password=$(openssl rand -hex 16)
  etcd_call() { curl -fsS --max-time 10 -X POST "$url/v3/auth/$1" -d "$2"; }
  # Keys are k0000000000 ...: the range [k, l), base64 in the gateway's JSON.
  etcd_call user/add "{\"name\":\"root\",\"password\":\"$root_password\"}" >/dev/null
  etcd_call user/grant "{\"user\":\"root\",\"role\":\"root\"}" >/dev/null
  etcd_call role/add '{"name":"loadtest"}' >/dev/null
  etcd_call role/grant '{"name":"loadtest","perm":{"permType":"READWRITE","key":"aw==","range_end":"bA=="}}' >/dev/null
  etcd_call user/add "{\"name\":\"loadtest\",\"password\":\"$user_password\"}" >/dev/null
  etcd_call user/grant '{"user":"loadtest","role":"loadtest"}' >/dev/null
  etcd_call enable '{}' >/dev/null
  ETCD_TOKEN=$(etcd_call authenticate "{\"name\":\"loadtest\",\"password\":\"$user_password\"}" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])') || die "etcd: no token for the load's user"
  export ETCD_TOKEN
  # Proof that auth is on: the same put without the token is refused.
  if curl -fs --max-time 5 -X POST "$url/v3/kv/put" -d '{"key":"aw==","value":"eA=="}' >/dev/null; then
    die "etcd took a put without a token: auth is not on"
  fi
  log "etcd: auth on, user loadtest with role loadtest (readwrite on keys k...), its token in ETCD_TOKEN"
}

# wrk and etcd: Debian's packages, installed when missing (CI machines start fresh).
apt_install() { # command package why
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    die "$1 is missing and this is not root with apt-get: install the $2 package ($3)"
  fi
  step "installing $2 (apt-get; $3)"
  # A package's service must not start: an etcd of its own on 2379 would share the CPU.
  local policy=/usr/sbin/policy-rc.d own_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1; fi
  local rc=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2"; } >"$run_dir/logs/apt-$2.log" 2>&1 || rc=$?
  [ "$own_policy" = 0 ] || rm -f "$policy"
  [ "$rc" -eq 0 ] || { tail -n 20 "$run_dir/logs/apt-$2.log" >&2; die "apt-get install $2 failed (exit $rc): see ${run_dir#"$repo"/}/logs/apt-$2.log"; }
  command -v "$1" >/dev/null 2>&1 || die "$2 is installed but there is no $1 on PATH"
}
