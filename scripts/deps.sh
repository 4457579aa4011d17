# SPDX-License-Identifier: GPL-3.0-or-later
# Debian packages erg needs to build, test and run its demo (sourced).
ERG_BUILD_PKGS=(
  cmake make gcc pkg-config clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev
  libzmq3-dev libprotobuf-c-dev protobuf-c-compiler libsnmp-dev libmodbus-dev
  librrd-dev libgsl-dev libinih-dev libjansson-dev libmicrohttpd-dev libcmocka-dev
  libfreeipmi-dev
  libcurl4-openssl-dev
)
ERG_TEST_PKGS=(
  rrdtool rrdcached snmp snmpsim mbpoll socat stress-ng python3 curl iproute2 procps
  prometheus sysstat chromium python3-pymodbus python3-serial-asyncio passwd util-linux mount
  slurm-wlm slurmdbd mariadb-server libclang-rt-14-dev clang-format python3-pyghmi freeipmi-tools
  strace
)
# The peers the benchmarks (tests/bench, not ctest) compare erg with.
ERG_BENCH_PKGS=(
  prometheus-snmp-exporter prometheus-process-exporter sysstat rrdcached prometheus-ipmi-exporter
)

# Installs whatever of the given packages is missing (needs root).
erg_apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then
    echo "error: missing packages and not root; run: apt-get install ${missing[*]}" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}
