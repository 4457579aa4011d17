#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Cross-builds erg for arm64 (aarch64) on Debian 12 amd64 and runs the unit
# tests under qemu-user. Installs what is missing (needs root the first time).
#   scripts/cross-aarch64.sh [--all] [--no-test] [--refresh-sysroot] [-- CTEST-ARGS...]
#   --all              run every test, not only the unit tests (unit.*,
#                      store.test_store, bpf.test_bpf_sysfs); integration tests run
#                      under qemu too once they use cmake/ErgTestExe.cmake
#   --no-test          build only
#   --refresh-sysroot  download the arm64 packages again (after a Debian point release)
# Environment: ERG_BPF=ON|OFF (default ON), BUILD_DIR (default build-aarch64),
# ERG_BUILD_TYPE (CMake build type, default RelWithDebInfo).
# Target libraries go into a private sysroot, $BUILD_DIR/sysroot, made of the
# arm64 .debs extracted with dpkg-deb: the host's amd64 packages are untouched
# (libsnmp-dev:arm64 and libgsl-dev:arm64 cannot be co-installed with them).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh

all=0 test=1 refresh=0 ctest_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --all) all=1 ;;
    --no-test) test=0 ;;
    --refresh-sysroot) refresh=1 ;;
    --) shift; ctest_args=("$@"); break ;;
    -h|--help) sed -n '3,14p' "$0"; exit 0 ;;
    *) echo "cross-aarch64.sh: unknown option $1" >&2; exit 1 ;;
  esac
  shift
done

build=${BUILD_DIR:-build-aarch64}
mkdir -p "$build"
build=$(cd "$build" && pwd)
sysroot=$build/sysroot
debs=$build/debs
jobs=$(nproc)

# The arm64 -dev packages erg links against (the library half of ERG_BUILD_PKGS).
TARGET_PKGS=(
  libc6-dev libzmq3-dev libprotobuf-c-dev libsnmp-dev libmodbus-dev librrd-dev
  libgsl-dev libinih-dev libjansson-dev libmicrohttpd-dev libcmocka-dev
  libbpf-dev libelf-dev zlib1g-dev
  # driver = ipmi; optional in CMake: a sysroot without it builds without
  # that driver (erg refuses driver = ipmi with the reason).
  libfreeipmi-dev
  # driver = redfish (required)
  libcurl4-openssl-dev
)
# Programs that turn up in the dependency closure but are never linked against.
SKIP_RE='^(dpkg|perl|perl-base|tar|procps|sysvinit-utils|cdebconf|install-info|xfonts-utils|icu-devtools|fontconfig|fontconfig-config|libc-dev-bin|debconf|init-system-helpers):'

# 1. Host tools: cross compiler, qemu-user, and the host half of the build.
erg_apt_install cmake make pkg-config file protobuf-c-compiler gcc-aarch64-linux-gnu \
  qemu-user-static
if [ "${ERG_BPF:-ON}" = ON ]; then erg_apt_install clang llvm bpftool; fi

# 2. Private arm64 sysroot, rebuilt only when the package list changes.
stamp_want=$(printf '%s\n' "${TARGET_PKGS[@]}" | sha256sum | cut -c1-16)
if [ $refresh = 1 ] || [ "$(cat "$sysroot/.erg-sysroot" 2>/dev/null)" != "$stamp_want" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    [ "$(id -u)" = 0 ] || { echo "error: run as root once: dpkg --add-architecture arm64 && apt-get update" >&2; exit 1; }
    echo "adding dpkg architecture arm64 (package lists only; nothing arm64 is installed)"
    dpkg --add-architecture arm64
  fi
  if [ $refresh = 1 ] || ! apt-cache show libc6:arm64 >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { echo "error: run as root once: apt-get update" >&2; exit 1; }
    apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null
  fi
  echo "building arm64 sysroot in $sysroot"
  mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests \
      --no-conflicts --no-breaks --no-replaces --no-enhances \
      "${TARGET_PKGS[@]/%/:arm64}" 2>/dev/null \
    | grep -E '^[^ <].*:arm64$' | grep -vE "$SKIP_RE" | sort -u)
  rm -rf "$debs" "$sysroot"
  mkdir -p "$debs" "$sysroot"
  # apt's sandbox user cannot write here; downloading as root is intended.
  (cd "$debs" && apt-get download -q "${closure[@]}" 2>&1 | grep -vE '^(Get:|W: Download is performed unsandboxed)' || true)
  n=$(ls "$debs"/*.deb | wc -l)
  [ "$n" -ge "${#closure[@]}" ] || { echo "error: downloaded $n of ${#closure[@]} arm64 packages" >&2; exit 1; }
  for d in "$debs"/*.deb; do
    dpkg-deb --fsys-tarfile "$d" | tar -x -C "$sysroot" \
      --exclude=./usr/share/doc --exclude=./usr/share/man --exclude=./usr/share/locale \
      --exclude=./usr/share/info --exclude=./usr/share/lintian
  done
  # Absolute symlinks (libz.so -> /lib/aarch64-linux-gnu/libz.so.1) would point
  # at the host: make them relative inside the sysroot.
  find "$sysroot" -type l -lname '/*' -print0 | while IFS= read -r -d '' l; do
    ln -sfnr "$sysroot$(readlink "$l")" "$l"
  done
  rm -rf "$debs"
  echo "$stamp_want" > "$sysroot/.erg-sysroot"
  echo "arm64 sysroot: ${#closure[@]} packages, $(du -sh "$sysroot" | cut -f1)"
fi

# 3. Configure (cheap when nothing changed) and build.
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64.cmake" \
  -DERG_AARCH64_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE="${ERG_BUILD_TYPE:-RelWithDebInfo}" \
  -DERG_BPF="${ERG_BPF:-ON}" >/dev/null
cmake --build "$build" -j"$jobs"
file -L "$build/tests/unit/test_wire" | grep -q 'ARM aarch64' \
  || { echo "error: $build/tests/unit/test_wire is not an aarch64 binary" >&2; exit 1; }

# 4. Tests under qemu-aarch64-static (CMAKE_CROSSCOMPILING_EMULATOR).
[ $test = 1 ] || exit 0
sel=(-R '^(unit\.|store\.test_store$|bpf\.test_bpf_sysfs$)')
[ $all = 1 ] && sel=()
cd "$build"
exec ctest --output-on-failure --timeout 600 "${sel[@]}" "${ctest_args[@]}"
