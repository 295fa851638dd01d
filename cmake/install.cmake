# What `cmake --install` puts under its prefix, and the Debian package that
# `make package` builds of the same files (CPack).
#
#   bin/ibfab, bin/ibfab-passthrough
#   LIBDIR/ibfab/                 the drop-in libibverbs, librdmacm and
#                                 libibumad: a private directory, never the
#                                 system's rdma-core; `ibfab exec` finds it
#                                 relative to bin/ibfab (tools/cli/install_layout.h)
#   share/man/man1/               ibfab(1), ibfab-COMMAND(1) (tools/man.cmake)
#   share/doc/ibfab/              README.md, docs/*.md
#   share/doc/ibfab/examples/     the scenarios, and examples/ (a user's
#                                 project tested with ibfab)
#   LIBDIR/cmake/ibfab/           find_package(ibfab)
#   LIBDIR/pkgconfig/ibfab.pc     pkg-config
install(TARGETS ibfab ibfab-passthrough RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ibfab_verbs ibfab_rdmacm ibfab_umad
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ibfab NAMELINK_SKIP)
# librdmacm and libibumad find the drop-in libibverbs beside them even
# without LD_LIBRARY_PATH.
set_target_properties(ibfab_verbs ibfab_rdmacm ibfab_umad PROPERTIES INSTALL_RPATH "$ORIGIN")
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# For a user's own build: find_package(ibfab) (ibfab::ibfab,
# ibfab_add_launch_test; cmake/ibfabConfig.cmake.in) and pkg-config's
# ibfab.pc, both relocatable with the prefix.
include(CMakePackageConfigHelpers)
set(IBFAB_INSTALL_LIBRARY_DIR ${CMAKE_INSTALL_LIBDIR}/ibfab)
set(IBFAB_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ibfab)
configure_package_config_file(cmake/ibfabConfig.cmake.in ${PROJECT_BINARY_DIR}/ibfabConfig.cmake
  INSTALL_DESTINATION ${IBFAB_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR IBFAB_INSTALL_LIBRARY_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ibfabConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ibfabConfig.cmake ${PROJECT_BINARY_DIR}/ibfabConfigVersion.cmake
        DESTINATION ${IBFAB_INSTALL_CMAKE_DIR})
file(RELATIVE_PATH IBFAB_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" IBFAB_PC_TO_PREFIX "${IBFAB_PC_TO_PREFIX}")
configure_file(cmake/ibfab.pc.in ${PROJECT_BINARY_DIR}/ibfab.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ibfab.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")
install(DIRECTORY scenarios/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/scenarios)

# The Debian package: ibfab_<version>_<arch>.deb, for `apt-get install
# ./ibfab_*.deb` on Debian 12. The shared-library dependencies come from
# dpkg-shlibdeps; iproute2 is the `ip` that `ibfab exec` sets up host
# networks with.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ibfab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "InfiniBand fabric simulator with drop-in rdma-core libraries")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "ibfab models HCAs, switches, links and a Subnet Manager, and runs unmodified\n"
    "RDMA programs (libibverbs, librdmacm, libibumad) against the simulated fabric,\n"
    "with no NIC and no kernel module: `ibfab run` for scenarios, `ibfab serve` and\n"
    "`ibfab exec` for real programs, `ibfab launch` for a multi-host test.")
set(CPACK_PACKAGE_CONTACT "ibfab developers <ibfab@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "iproute2")
set(CPACK_STRIP_FILES ON)
include(CPack)
