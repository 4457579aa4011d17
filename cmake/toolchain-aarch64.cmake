# SPDX-License-Identifier: GPL-3.0-or-later
# Cross-compiling erg for 64-bit ARM (aarch64 / arm64) on Debian 12 amd64.
#
#   cmake -S . -B build-aarch64 \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DERG_AARCH64_SYSROOT=$PWD/build-aarch64/sysroot
#
# Compiler: Debian's gcc-aarch64-linux-gnu. Target libraries come from one of:
#
#  * a private sysroot (ERG_AARCH64_SYSROOT, cache variable or environment):
#    the arm64 .debs of every dependency extracted with dpkg-deb -x, the way
#    scripts/cross-aarch64.sh builds it. Nothing of the host changes; this is
#    the default because libsnmp-dev:arm64 and libgsl-dev:arm64 cannot be
#    co-installed with their amd64 twins on Debian 12 (see docs/arm64.md).
#  * Debian multiarch (ERG_AARCH64_SYSROOT empty): the :arm64 -dev packages
#    co-installed under /usr/lib/aarch64-linux-gnu, /usr/include.
#
# Build tools (protoc-c, bpftool, clang) stay the host's amd64 programs.
# Tests run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR), so plain `ctest`
# executes the arm64 test binaries.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(ERG_CROSS_TRIPLET aarch64-linux-gnu)
set(CMAKE_LIBRARY_ARCHITECTURE ${ERG_CROSS_TRIPLET})

find_program(ERG_CROSS_CC ${ERG_CROSS_TRIPLET}-gcc)
if(NOT ERG_CROSS_CC)
  message(FATAL_ERROR "${ERG_CROSS_TRIPLET}-gcc not found: apt-get install gcc-aarch64-linux-gnu")
endif()
set(CMAKE_C_COMPILER ${ERG_CROSS_CC})

# try_compile() projects re-read this file without the cache: pass these on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ERG_AARCH64_SYSROOT)
if(NOT DEFINED ERG_AARCH64_SYSROOT AND DEFINED ENV{ERG_AARCH64_SYSROOT})
  set(ERG_AARCH64_SYSROOT "$ENV{ERG_AARCH64_SYSROOT}")
endif()
set(ERG_AARCH64_SYSROOT "${ERG_AARCH64_SYSROOT}" CACHE PATH
    "Private arm64 sysroot (extracted Debian arm64 packages); empty: multiarch co-install")

if(ERG_AARCH64_SYSROOT)
  if(NOT EXISTS "${ERG_AARCH64_SYSROOT}/usr/include/stdio.h")
    message(FATAL_ERROR "ERG_AARCH64_SYSROOT=${ERG_AARCH64_SYSROOT} has no libc6-dev:arm64; "
                        "run scripts/cross-aarch64.sh to build it")
  endif()
  set(CMAKE_SYSROOT "${ERG_AARCH64_SYSROOT}")
  set(CMAKE_FIND_ROOT_PATH "${ERG_AARCH64_SYSROOT}")
  # The .pc files say -I/usr/include/..., -L/usr/lib/...: prefix them.
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${ERG_AARCH64_SYSROOT}")
  set(ENV{PKG_CONFIG_LIBDIR}
      "${ERG_AARCH64_SYSROOT}/usr/lib/${ERG_CROSS_TRIPLET}/pkgconfig:${ERG_AARCH64_SYSROOT}/usr/share/pkgconfig")
  # The loader and libraries the arm64 binaries need at run time under qemu.
  set(ERG_QEMU_LD_PREFIX "${ERG_AARCH64_SYSROOT}")
else()
  # Multiarch: libraries live in the host's /usr/lib/aarch64-linux-gnu.
  set(CMAKE_FIND_ROOT_PATH /usr/${ERG_CROSS_TRIPLET})
  unset(ENV{PKG_CONFIG_SYSROOT_DIR})
  set(ENV{PKG_CONFIG_LIBDIR}
      "/usr/lib/${ERG_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
  set(ERG_QEMU_LD_PREFIX /usr/${ERG_CROSS_TRIPLET})
endif()
# Never let the host's amd64 .pc files leak in.
unset(ENV{PKG_CONFIG_PATH})
set(PKG_CONFIG_EXECUTABLE pkg-config CACHE FILEPATH "pkg-config (host binary, target .pc dirs)")

# Programs (protoc-c, bpftool, clang, bash) from the host; libraries, headers
# and packages only from the target.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs the arm64 test binaries through qemu-user.
find_program(ERG_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(ERG_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ERG_QEMU_AARCH64} -L ${ERG_QEMU_LD_PREFIX})
else()
  message(WARNING "qemu-aarch64-static not found (apt-get install qemu-user-static): "
                  "tests will not run")
endif()
