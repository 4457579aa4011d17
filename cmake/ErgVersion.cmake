# SPDX-License-Identifier: GPL-3.0-or-later
# The build's version and git revision, for `ergd --version`, `erg version`
# and `erg-agent --version`.
#
# ERG_VERSION (the project version, "0.1.0") is a compile definition of every
# target (top-level CMakeLists.txt): it also goes into agent hellos and model
# files. The git revision is only known here, at configure time:
# `git describe --always --dirty` when the source tree is a git checkout, else
# "unknown" (a release tarball). It goes into a generated header,
# <build>/generated/erg_build_info.h, which only the programs' main files
# include, so a new revision rebuilds three files, not the tree. It is taken
# when cmake runs: rerun cmake (or `cmake --build` after a CMakeLists change)
# to refresh it after commits.
#
#   #include "erg_build_info.h"
#   printf("ergd %s (%s)\n", ERG_VERSION, ERG_GIT_REVISION);

set(ERG_GIT_REVISION "unknown")
if(EXISTS "${PROJECT_SOURCE_DIR}/.git")
  find_package(Git QUIET)
  if(GIT_FOUND)
    # safe.directory: the tree may belong to another user than the one
    # building (CI as root over a checkout, a container's bind mount).
    execute_process(
      COMMAND "${GIT_EXECUTABLE}" -c "safe.directory=${PROJECT_SOURCE_DIR}"
              describe --always --dirty
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
      OUTPUT_VARIABLE _erg_rev
      OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _erg_rc
      ERROR_QUIET)
    if(_erg_rc EQUAL 0 AND _erg_rev MATCHES "^[A-Za-z0-9._+-]+$")
      set(ERG_GIT_REVISION "${_erg_rev}")
    endif()
  endif()
endif()
message(STATUS "erg ${PROJECT_VERSION}, git revision ${ERG_GIT_REVISION}")

set(ERG_GENERATED_INCLUDE_DIR "${CMAKE_BINARY_DIR}/generated")
# configure_file rewrites the header only when its text changes.
configure_file("${CMAKE_CURRENT_LIST_DIR}/erg_build_info.h.in"
               "${ERG_GENERATED_INCLUDE_DIR}/erg_build_info.h" @ONLY)
include_directories("${ERG_GENERATED_INCLUDE_DIR}")
