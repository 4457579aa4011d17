# SPDX-License-Identifier: GPL-3.0-or-later
# Packages (issue 24): one per install component (cmake/ErgInstall.cmake),
# built by `cpack` in the build directory, or by scripts/package:
#
#   erg-agent   the node agent: erg-agent, its unit, sysusers, agent.conf
#   ergd        the collector and the operator's CLI: ergd, erg, unit,
#               sysusers, tmpfiles, ergd.conf, Prometheus rules, Slurm hook
#   erg-pdusim  the PDU/meter simulator (demos, tests)
#
# DEB always (dpkg-deb; dpkg-shlibdeps from dpkg-dev for the library
# dependencies), RPM too when rpmbuild is installed (Debian package `rpm`).
# Prefix /usr, configuration under /etc/erg (conffiles / %config(noreplace)).
# The maintainer scripts (packaging/deb, packaging/rpm) create the users and
# /var/lib/erg and never enable a service: the operator does.
#
#   cpack -G DEB            (in the build directory; -B DIR for the output)
#   scripts/package [BUILD_DIR]
set(_erg_pkg ${PROJECT_SOURCE_DIR}/packaging)

# The prerm (DEB) and %preun (RPM) scripts of erg-agent and ergd share
# erg_stop_exe (packaging/erg_stop_exe.sh): pasted in at @ERG_STOP_EXE@ of
# their .in templates, from its "# Stops" line on (its file header stays out).
set(_erg_pkgout ${CMAKE_BINARY_DIR}/packaging)
file(READ ${_erg_pkg}/erg_stop_exe.sh _erg_stop)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_erg_pkg}/erg_stop_exe.sh)
string(FIND "${_erg_stop}" "# Stops what runs" _erg_at)
string(SUBSTRING "${_erg_stop}" ${_erg_at} -1 _erg_stop)
string(STRIP "${_erg_stop}" ERG_STOP_EXE)
foreach(_s deb/erg-agent/prerm deb/ergd/prerm rpm/erg-agent-preun.sh rpm/ergd-preun.sh)
  configure_file(${_erg_pkg}/${_s}.in ${_erg_pkgout}/${_s} @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                                  GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()

set(CPACK_PACKAGE_NAME erg)
set(CPACK_PACKAGE_VENDOR "erg")
set(ERG_PACKAGE_CONTACT "erg maintainers <root@localhost>" CACHE STRING
    "Maintainer of the packages (DEB Maintainer:, RPM Packager:)")
set(CPACK_PACKAGE_CONTACT "${ERG_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: the DEB summary is then the first line of
# each component's description (CPackDeb prepends a set one to every package).
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
# cpack packages what is built (scripts/package builds first): its
# "preinstall" step then does not rebuild the tree, which took 4 s per
# generator to find nothing to do, and could relink binaries that running
# tests use (ctest package.deb). Likewise `make install` no longer builds.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

find_program(ERG_RPMBUILD rpmbuild)
set(CPACK_GENERATOR DEB)
if(ERG_RPMBUILD)
  list(APPEND CPACK_GENERATOR RPM)
endif()

set(CPACK_COMPONENTS_ALL agent collector pdusim)
set(CPACK_COMPONENTS_GROUPING IGNORE)   # one package per component
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_RPM_COMPONENT_INSTALL ON)

set(CPACK_COMPONENT_AGENT_DISPLAY_NAME "erg node agent")
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "erg node agent: per-process CPU, memory and I/O for erg\n\
erg-agent runs on every node and samples, once a second, what each process\n\
does (exact CPU time from eBPF, or /proc as a fallback), with its command,\n\
user, Slurm job, systemd unit and container, and streams it to ergd over\n\
ZeroMQ. The eBPF programs are built into the binary; the systemd unit runs it\n\
as the user erg-agent with CAP_BPF and CAP_PERFMON only.")
set(CPACK_COMPONENT_COLLECTOR_DISPLAY_NAME "erg collector")
set(CPACK_COMPONENT_COLLECTOR_DESCRIPTION
    "erg collector: PDU and meter power to per-process and per-job energy\n\
ergd polls metered PDUs (SNMP) and energy meters (Modbus), lines their readings\n\
up with the samples of erg-agent, attributes each node's energy to its\n\
processes, jobs, units, containers and users, and keeps the profiles in RRD\n\
archives served as static pages and Prometheus /metrics. erg, the operator's\n\
command line, probes PDUs, checks configurations, fits node power models and\n\
reports energy per node, job or user (with sacct's fields on Slurm).")
set(CPACK_COMPONENT_PDUSIM_DISPLAY_NAME "erg PDU simulator")
set(CPACK_COMPONENT_PDUSIM_DESCRIPTION
    "erg PDU and meter simulator for demos and tests\n\
erg-pdusim answers SNMP and Modbus like a metered PDU or an energy meter whose\n\
power follows the CPU load of simulated or real nodes.")

# Cross builds (cmake/toolchain-aarch64.cmake) package for the target.
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  set(CPACK_RPM_PACKAGE_ARCHITECTURE aarch64)
endif()

# DEB
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # NAME_VERSION-RELEASE_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Library dependencies from the binaries (dpkg-shlibdeps). It reads the
# host's dpkg database, which knows no arm64 libraries: a cross build leaves
# them to `cpack -D CPACK_DEBIAN_<COMPONENT>_PACKAGE_DEPENDS=...`
# (scripts/package --arch aarch64 passes the amd64 packages' lists: same
# Debian release, same library package names).
if(CPACK_DEBIAN_PACKAGE_ARCHITECTURE)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME erg-agent)
set(CPACK_DEBIAN_COLLECTOR_PACKAGE_NAME ergd)
set(CPACK_DEBIAN_PDUSIM_PACKAGE_NAME erg-pdusim)
# postinst: sysusers (tmpfiles), never enables; conffiles: /etc/erg/*.conf.
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    ${_erg_pkg}/deb/erg-agent/postinst ${_erg_pkgout}/deb/erg-agent/prerm
    ${_erg_pkg}/deb/erg-agent/postrm ${_erg_pkg}/deb/erg-agent/conffiles)
set(CPACK_DEBIAN_COLLECTOR_PACKAGE_CONTROL_EXTRA
    ${_erg_pkg}/deb/ergd/postinst ${_erg_pkgout}/deb/ergd/prerm
    ${_erg_pkg}/deb/ergd/postrm ${_erg_pkg}/deb/ergd/conffiles)
# systemd-sysusers/-tmpfiles in postinst (useradd from passwd otherwise).
set(CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_COLLECTOR_PACKAGE_RECOMMENDS "systemd")
# NVIDIA GPUs: the agent dlopens libnvidia-ml.so.1 (docs/gpu.md; non-free).
set(CPACK_DEBIAN_AGENT_PACKAGE_SUGGESTS "libnvidia-ml1")
# rrdcached for large clusters, sacct/sacctmgr for `erg jobs`, Prometheus.
set(CPACK_DEBIAN_COLLECTOR_PACKAGE_SUGGESTS "rrdcached, slurm-client, prometheus, erg-agent")
set(CPACK_DEBIAN_PDUSIM_PACKAGE_SECTION misc)

# RPM (rpmbuild finds the library dependencies itself)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_PACKAGE_RELOCATABLE OFF)   # /etc/erg, units: not relocatable
set(CPACK_RPM_PACKAGE_RELEASE 1)
set(CPACK_RPM_PACKAGE_LICENSE "GPL-3.0-or-later")   # LICENSE, packaging/doc/copyright
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_AGENT_PACKAGE_NAME erg-agent)
set(CPACK_RPM_COLLECTOR_PACKAGE_NAME ergd)
set(CPACK_RPM_PDUSIM_PACKAGE_NAME erg-pdusim)
set(CPACK_RPM_AGENT_PACKAGE_SUMMARY "erg node agent: per-process CPU, memory and I/O for erg")
set(CPACK_RPM_COLLECTOR_PACKAGE_SUMMARY "erg collector: PDU and meter power to per-process energy")
set(CPACK_RPM_PDUSIM_PACKAGE_SUMMARY "erg PDU and meter simulator for demos and tests")
set(CPACK_RPM_AGENT_USER_FILELIST "%config(noreplace) /etc/erg/agent.conf")
set(CPACK_RPM_COLLECTOR_USER_FILELIST "%config(noreplace) /etc/erg/ergd.conf")
set(CPACK_RPM_AGENT_POST_INSTALL_SCRIPT_FILE ${_erg_pkg}/rpm/erg-agent-post.sh)
set(CPACK_RPM_AGENT_PRE_UNINSTALL_SCRIPT_FILE ${_erg_pkgout}/rpm/erg-agent-preun.sh)
set(CPACK_RPM_AGENT_POST_UNINSTALL_SCRIPT_FILE ${_erg_pkg}/rpm/erg-agent-postun.sh)
set(CPACK_RPM_COLLECTOR_POST_INSTALL_SCRIPT_FILE ${_erg_pkg}/rpm/ergd-post.sh)
set(CPACK_RPM_COLLECTOR_PRE_UNINSTALL_SCRIPT_FILE ${_erg_pkgout}/rpm/ergd-preun.sh)
set(CPACK_RPM_COLLECTOR_POST_UNINSTALL_SCRIPT_FILE ${_erg_pkg}/rpm/ergd-postun.sh)
# Directories the distribution's filesystem and systemd packages own.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/sbin /usr/lib/systemd /usr/lib/systemd/system /usr/lib/sysusers.d
    /usr/lib/tmpfiles.d /usr/share/man /usr/share/man/man1 /usr/share/man/man8
    /usr/share/doc)
set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none")

include(CPack)
