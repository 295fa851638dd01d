# ibfab_dropin_library(NAME SOURCES src... MAP map OUTPUT_NAME out
#                      VERSION v SOVERSION s [LINK lib...])
#
# One of rdma-core's user-space libraries, replaced. NAME_objects is an
# OBJECT library of SOURCES on the client core, with hidden visibility
# (tests may link it to reach entry points the shared library hides). NAME
# is the shared library made of those objects and the in-process engine
# (ibfab_embedded, so that IBFAB_TOPOLOGY works whichever library starts
# the session), then LINK; the version script MAP exports exactly its
# names. It is written to <build>/lib as lib<OUTPUT_NAME>.so.<VERSION> with
# SONAME lib<OUTPUT_NAME>.so.<SOVERSION>, beside the other replacements, for
# LD_LIBRARY_PATH=<build>/lib.
function(ibfab_dropin_library name)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "MAP;OUTPUT_NAME;VERSION;SOVERSION" "SOURCES;LINK")
  add_library(${name}_objects OBJECT ${A_SOURCES})
  target_include_directories(${name}_objects PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name}_objects PUBLIC ibfab_client PRIVATE ibfab_warnings)
  set_target_properties(${name}_objects PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)

  add_library(${name} SHARED)
  target_link_libraries(${name} PRIVATE ${name}_objects ibfab_client ibfab_embedded ${A_LINK})
  target_link_options(${name} PRIVATE
    "LINKER:--version-script=${A_MAP}"
    "LINKER:--as-needed")
  if(IBFAB_LINK_NO_UNDEFINED)  # off under TSan (cmake/sanitizers.cmake)
    target_link_options(${name} PRIVATE "LINKER:--no-undefined")
  endif()
  set_target_properties(${name} PROPERTIES
    LINKER_LANGUAGE CXX
    OUTPUT_NAME ${A_OUTPUT_NAME}
    VERSION ${A_VERSION}
    SOVERSION ${A_SOVERSION}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
    LINK_DEPENDS ${A_MAP})
endfunction()
