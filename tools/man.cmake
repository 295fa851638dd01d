# The man pages: ibfab(1) and ibfab-COMMAND(1), generated from the same
# CLI11 declarations as --help (tools/cli/man_page.h) by the ibfab just
# built, into man/ of the build tree (emptied first, so that a command gone
# leaves no page), as part of `all`; installed into MANDIR/man1.
# SOURCE_DATE_EPOCH, when set, dates them; the version is the project's.
include(GNUInstallDirs)
target_compile_definitions(ibfab PRIVATE IBFAB_VERSION="${PROJECT_VERSION}")
set(IBFAB_MAN_DIR ${CMAKE_BINARY_DIR}/man)
add_custom_command(OUTPUT ${IBFAB_MAN_DIR}/ibfab.1
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${IBFAB_MAN_DIR}
  COMMAND $<TARGET_FILE:ibfab> man-pages ${IBFAB_MAN_DIR}
  DEPENDS ibfab
  COMMENT "Writing the man pages into ${IBFAB_MAN_DIR}"
  VERBATIM)
add_custom_target(ibfab_man_pages ALL DEPENDS ${IBFAB_MAN_DIR}/ibfab.1)
install(DIRECTORY ${IBFAB_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1")
