# shellcheck shell=bash
# Sourced by e2e/run.sh: port-forwards to pods and services, started in the background and
# stopped by the step that started them (or by the exit trap).

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# Forwards a free local port to a port of a pod or service in the background; sets FWD_PORT and
# FWD_PID, and adds the pid to PF_PIDS (killed by stop_forwards, stop_forward and on exit). Call it
# (and forward) directly, never in $(...): the pid would be lost with the subshell, and the kubectl
# process would outlive the test. kubectl itself, not the function k: $! of a function run in the
# background is a subshell, and killing it would leave its kubectl running.
port_forward() { # target remote-port
  FWD_PORT=$(free_port)
  kubectl -n "$NAMESPACE" port-forward "$1" "$FWD_PORT:$2" >/dev/null 2>&1 &
  FWD_PID=$!
  PF_PIDS+=("$FWD_PID")
}
# True when GET <base>/v0/status answers 200 (the node is ready) over a certificate of the release's
# CA: what every client of the run (curl, the write checker, the census) waits for before it starts.
answers_status() { # base-url
  [ "$(rcurl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1/v0/status" || true)" = 200 ]
}
# Forwards to the HTTP port of a pod or service and waits (50 tries, 0.2 s apart) until it answers
# /v0/status 200 (answers_status); sets BASE to the URL. Every client of the run reaches the nodes
# through it; the chart's Jobs and the helm test wait by themselves (their init container).
try_forward() { # target
  port_forward "$1" 8080
  for _ in $(seq 1 50); do
    answers_status "$SCHEME://127.0.0.1:$FWD_PORT" && { BASE="$SCHEME://127.0.0.1:$FWD_PORT"; return 0; }
    sleep 0.2
  done
  stop_forward "$FWD_PID"
  return 1
}
forward() { # target
  try_forward "$1" || fail "port-forward to $1 did not answer"
}
stop_forward() { # pid: stops that one port-forward
  local pid kept=()
  kill "$1" 2>/dev/null || true
  for pid in "${PF_PIDS[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
  PF_PIDS=("${kept[@]}")
}
stop_forwards() {
  for pid in "${PF_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  PF_PIDS=()
}
