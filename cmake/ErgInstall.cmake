# SPDX-License-Identifier: GPL-3.0-or-later
# Install rules (issue 24), by component, one package each (cmake/ErgPackage.cmake):
#
#   agent      erg-agent (sbin), erg-agent(8), erg-agent.service,
#              sysusers.d/erg-agent.conf, /etc/erg/agent.conf
#   collector  ergd (sbin), erg (bin), ergd(8), erg(1), ergd.service,
#              sysusers.d/ergd.conf, tmpfiles.d/ergd.conf, /etc/erg/ergd.conf,
#              share/erg/prometheus/erg-cluster-rules.yml,
#              share/erg/slurm/erg-epilog-slurmctld (docs/hpc.md)
#   pdusim     erg-pdusim (bin), erg-pdusim(1)
#   each       share/doc/PACKAGE/copyright (packaging/doc/copyright)
#
# The daemons go to sbin (started by systemd or root), the operator's tools to
# bin. The BPF programs are compiled into erg-agent (bpftool skeleton): nothing
# else is read at run time. Packages use the prefix /usr; `cmake --install
# BUILD [--prefix P]` works too (default /usr/local).
#
# Paths outside the prefix are decided when installing, not at configure time,
# because cpack installs with the prefix /usr whatever the build was configured
# with: the configuration goes to /etc/erg for the prefix /usr and to
# PREFIX/etc/erg otherwise, and the units' ExecStart= and -c paths are those of
# the prefix (docs/systemd/*.service name /usr/sbin and /etc/erg). A config
# file changed locally is never overwritten by `cmake --install` (the new one
# goes next to it as FILE.new); packages handle theirs as conffiles.
#
# Included once from the top-level CMakeLists.txt, after the subdirectories
# (install(TARGETS) of their targets, CMake >= 3.13).
include(GNUInstallDirs)

set(ERG_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "systemd system units, relative to the install prefix")
set(ERG_SYSUSERSDIR "lib/sysusers.d" CACHE STRING "sysusers.d, relative to the install prefix")
set(ERG_TMPFILESDIR "lib/tmpfiles.d" CACHE STRING "tmpfiles.d, relative to the install prefix")

set(_erg_pkg ${PROJECT_SOURCE_DIR}/packaging)
set(_erg_gen ${CMAKE_BINARY_DIR}/erg-install)

# Programs and pages
install(TARGETS erg-agent RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT agent)
install(TARGETS ergd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT collector)
install(TARGETS erg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT collector)
install(TARGETS erg-pdusim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT pdusim)
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/erg-agent.8
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/ergd.8
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT collector)
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/erg.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT collector)
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/erg-pdusim.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT pdusim)

# Users and directories (applied by the packages' postinst)
install(FILES ${_erg_pkg}/sysusers.d/erg-agent.conf
        DESTINATION ${ERG_SYSUSERSDIR} COMPONENT agent)
install(FILES ${_erg_pkg}/sysusers.d/ergd.conf
        DESTINATION ${ERG_SYSUSERSDIR} COMPONENT collector)
install(FILES ${_erg_pkg}/tmpfiles.d/ergd.conf
        DESTINATION ${ERG_TMPFILESDIR} COMPONENT collector)

# Prometheus recording rules and the Slurm hook (docs/scale.md, docs/hpc.md)
install(FILES ${PROJECT_SOURCE_DIR}/docs/prometheus/erg-cluster-rules.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/erg/prometheus COMPONENT collector)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/contrib/slurm/erg-epilog-slurmctld
        DESTINATION ${CMAKE_INSTALL_DATADIR}/erg/slurm COMPONENT collector)

# Copyright and licence (GPL-3.0-or-later, LICENSE) in each package's doc
# directory, where Debian policy wants it: /usr/share/doc/PACKAGE/copyright.
foreach(_c agent:erg-agent collector:ergd pdusim:erg-pdusim)
  string(REPLACE ":" ";" _c "${_c}")
  list(GET _c 0 _comp)
  list(GET _c 1 _pkg)
  install(FILES ${_erg_pkg}/doc/copyright
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${_pkg} COMPONENT ${_comp})
endforeach()

# Install-time code: ERG_ETC (see above), ERG_SBIN, ERG_BIN.
set(_erg_paths_code "
if(CMAKE_INSTALL_PREFIX MATCHES \"^/usr/?$\")
  set(ERG_ETC /etc)
else()
  set(ERG_ETC \"\${CMAKE_INSTALL_PREFIX}/etc\")
endif()
")
foreach(_d SBIN BIN)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_d}DIR}")
    string(APPEND _erg_paths_code "set(ERG_${_d} \"${CMAKE_INSTALL_${_d}DIR}\")\n")
  else()
    string(APPEND _erg_paths_code
           "set(ERG_${_d} \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_${_d}DIR}\")\n")
  endif()
endforeach()
if(IS_ABSOLUTE "${ERG_SYSTEMD_UNITDIR}")
  set(_erg_unitdir "${ERG_SYSTEMD_UNITDIR}")
else()
  set(_erg_unitdir "\${CMAKE_INSTALL_PREFIX}/${ERG_SYSTEMD_UNITDIR}")
endif()

# erg_install_unit(UNIT COMPONENT): docs/systemd/UNIT with the prefix's paths.
function(erg_install_unit unit component)
  install(CODE "${_erg_paths_code}
file(READ \"${PROJECT_SOURCE_DIR}/docs/systemd/${unit}\" _u)
string(REPLACE \"/usr/sbin/\" \"\${ERG_SBIN}/\" _u \"\${_u}\")
string(REPLACE \"/usr/bin/\" \"\${ERG_BIN}/\" _u \"\${_u}\")
string(REPLACE \"/etc/erg/\" \"\${ERG_ETC}/erg/\" _u \"\${_u}\")
file(WRITE \"${_erg_gen}/${unit}\" \"\${_u}\")
file(INSTALL DESTINATION \"${_erg_unitdir}\" TYPE FILE
     FILES \"${_erg_gen}/${unit}\")
" COMPONENT ${component})
endfunction()

# erg_install_etc(FILE COMPONENT [GROUP]): packaging/etc/FILE as ERG_ETC/erg/FILE,
# or as FILE.new beside an existing, changed one outside a package build
# (DESTDIR: the staging tree of cpack). With GROUP the file is 0640 (it holds
# secrets: SNMP communities, v3 passphrases) and, outside a package build,
# given to GROUP; where GROUP does not exist yet (ergd's user is made by
# sysusers.d/ergd.conf, which `cmake --install` does not apply) it stays
# root's, said in a warning with the command that finishes it. Packages
# chgrp it in their postinst.
function(erg_install_etc file component)
  set(group "${ARGN}")
  if(group)
    set(_perm "FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ")
  else()
    set(_perm "")
  endif()
  install(CODE "${_erg_paths_code}
set(_src \"${_erg_pkg}/etc/${file}\")
set(_dst \"\${ERG_ETC}/erg/${file}\")
set(_same FALSE)
if(EXISTS \"\${_dst}\")
  file(SHA256 \"\${_src}\" _a)
  file(SHA256 \"\${_dst}\" _b)
  if(_a STREQUAL _b)
    set(_same TRUE)
  endif()
endif()
set(_name \"${file}\")
if(NOT \"\$ENV{DESTDIR}\" STREQUAL \"\" OR NOT EXISTS \"\${_dst}\" OR _same)
  file(INSTALL DESTINATION \"\${ERG_ETC}/erg\" TYPE FILE FILES \"\${_src}\" ${_perm})
else()
  message(STATUS \"Keeping \${_dst} (changed); the shipped one is ${file}.new\")
  file(INSTALL DESTINATION \"\${ERG_ETC}/erg\" TYPE FILE FILES \"\${_src}\"
       RENAME \"${file}.new\" ${_perm})
  set(_name \"${file}.new\")
endif()
if(NOT \"${group}\" STREQUAL \"\" AND \"\$ENV{DESTDIR}\" STREQUAL \"\")
  execute_process(COMMAND chgrp \"${group}\" \"\${ERG_ETC}/erg/\${_name}\"
                  RESULT_VARIABLE _rc ERROR_QUIET)
  if(NOT _rc EQUAL 0)
    message(WARNING \"\${ERG_ETC}/erg/\${_name} is 0640 root's: group ${group} does not \"
            \"exist yet (or chgrp is not allowed). Create the user (systemd-sysusers \"
            \"ergd.conf of sysusers.d), then: chgrp ${group} \${ERG_ETC}/erg/\${_name}\")
  endif()
endif()
" COMPONENT ${component})
endfunction()

erg_install_unit(erg-agent.service agent)
erg_install_unit(ergd.service collector)
erg_install_etc(agent.conf agent)
erg_install_etc(ergd.conf collector erg)
