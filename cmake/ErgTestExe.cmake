# SPDX-License-Identifier: GPL-3.0-or-later
# erg_test_exe(<var> <target>): the path a test script should exec to run
# <target>. Natively that is $<TARGET_FILE:target>. When cross-compiling with
# CMAKE_CROSSCOMPILING_EMULATOR (cmake/toolchain-aarch64.cmake: qemu-user),
# ctest wraps only COMMANDs that are targets; scripts that exec the binaries
# themselves get a small sh wrapper, <build>/emu/<target>, that runs the
# binary under the emulator.
#
#   include(${PROJECT_SOURCE_DIR}/cmake/ErgTestExe.cmake)
#   erg_test_exe(AGENT erg-agent)
#   add_test(NAME integration.x COMMAND ${BASH} x.sh ${AGENT})
function(erg_test_exe var target)
  if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
    set(emu "")
    foreach(a IN LISTS CMAKE_CROSSCOMPILING_EMULATOR)
      string(APPEND emu "'${a}' ")
    endforeach()
    set(wrapper ${CMAKE_BINARY_DIR}/emu/${target})
    # Several test folders may ask for the same wrapper: generate it once.
    get_property(done GLOBAL PROPERTY ERG_EMU_WRAPPER_${target})
    if(done)
      set(${var} ${wrapper} PARENT_SCOPE)
      return()
    endif()
    set_property(GLOBAL PROPERTY ERG_EMU_WRAPPER_${target} TRUE)
    file(GENERATE OUTPUT ${wrapper}
         CONTENT "#!/bin/sh\nexec ${emu}'$<TARGET_FILE:${target}>' \"$@\"\n"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                          GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
    set(${var} ${wrapper} PARENT_SCOPE)
  else()
    set(${var} $<TARGET_FILE:${target}> PARENT_SCOPE)
  endif()
endfunction()
