# Helpers shared by the integration tests (sourced).

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
  local p
  for _ in $(seq 1 200); do
    # Below the ephemeral range (32768+): a connect to a port nobody
    # listens on can otherwise end up connected to itself and take it.
    p=$((10000 + RANDOM % 22000))
    if ! ss -Htln "sport = :$p" | grep -q .; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# Waits until a TCP port listens (max $2 seconds).
wait_port() {
  local port=$1 max=${2:-10}
  for _ in $(seq 1 $((max * 10))); do
    ss -Htln "sport = :$port" | grep -q . && return 0
    sleep 0.1
  done
  echo "port $port never opened" >&2
  return 1
}

# Original key -> archive path, through the store's index.tsv.
key_rrd() {
  local dir=$1 key=$2
  awk -F'\t' -v k="$key" '$2 == k { print $1 }' "$dir/index.tsv" | head -n1 |
    sed "s|^|$dir/|; s|\$|.rrd|"
}
