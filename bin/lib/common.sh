# Sourced by the repository's scripts (bin/, loadtest/): how they talk, and how they wait for the
# local nodes that bin/node starts.
#   LOG_NAME=name; . bin/lib/common.sh      LOG_NAME defaults to the script's file name

# Progress on stderr, so that a script's stdout stays its result (bin/aot-cache prints a directory).
log() { printf '[%s %4ds] %s\n' "${LOG_NAME:-${0##*/}}" "$SECONDS" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Whether nothing listens on a loopback port: a connection attempt, since no tool is sure to be there.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Waits until the node at URL answers PATH (default /v0/status, which answers as soon as the node
# serves) with 200, for at most two minutes; when its process PID ends first, shows the end of LOG
# and dies.
await_node() { # url pid log [path]
  local url=$1 pid=$2 node_log=$3 path=${4:-/v0/status} deadline=$((SECONDS + 120))
  until curl -fs -o /dev/null --max-time 2 "$url$path"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$node_log" >&2
      die "the node at $url exited (its log: $node_log)"
    fi
    [ "$SECONDS" -lt "$deadline" ] || die "$url did not answer $path within 120 s (its log: $node_log)"
    sleep 0.5
  done
}
