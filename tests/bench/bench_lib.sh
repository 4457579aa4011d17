# SPDX-License-Identifier: GPL-3.0-or-later
# Ports of the benchmarks (sourced): the caller gives them, so benchmarks
# run next to each other's and the tests' daemons without colliding. Each
# script uses the ports BASE, BASE+1, ... up to the count its header states,
# TCP and UDP, BASE from `--port-base N` (the script's first arguments) or
# the environment variable ERG_BENCH_PORT_BASE. Without either it stops
# with a usage error: a benchmark never picks ports on its own.
#   bench_port_args "$@"; set -- "${BENCH_ARGS[@]}"   # strips --port-base N
#   P=$(bench_port K)                                  # BASE + K, checked free

bench_port_args() {
  BENCH_ARGS=()
  if [ "${1:-}" = --port-base ]; then
    ERG_BENCH_PORT_BASE=${2:-}
    shift 2 || true
  fi
  BENCH_ARGS=("$@")
  case "${ERG_BENCH_PORT_BASE:-}" in
    '' | *[!0-9]*)
      echo "$(basename "$0"): give the ports: --port-base N or ERG_BENCH_PORT_BASE=N" \
           "(1024..65000; the script uses N and the next ports, see its header)" >&2
      exit 2 ;;
  esac
  if [ "$ERG_BENCH_PORT_BASE" -lt 1024 ] || [ "$ERG_BENCH_PORT_BASE" -gt 65000 ]; then
    echo "$(basename "$0"): port base $ERG_BENCH_PORT_BASE not in 1024..65000" >&2
    exit 2
  fi
}

# BASE + $1, when nothing listens on it (TCP or UDP); else a clear error.
bench_port() {
  local p=$((ERG_BENCH_PORT_BASE + $1))
  if ss -Htuln "sport = :$p" | grep -q .; then
    echo "$(basename "$0"): port $p (base $ERG_BENCH_PORT_BASE + $1) is in use;" \
         "choose another --port-base" >&2
    return 1
  fi
  echo "$p"
}
