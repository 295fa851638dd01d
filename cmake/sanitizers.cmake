# IBFAB_SANITIZE: every target built with clang's sanitizers
# (docs/ARCHITECTURE.md, "Sanitizers"): "address,undefined" (make check-asan)
# or "thread" (make check-tsan). Empty: a normal build.
#
# Under ASan the runtime is the shared one (-shared-libsan): the drop-in
# libraries link against it and keep --no-undefined, and an uninstrumented
# program that loads them (saquery, opensm) gets it through LD_PRELOAD=
# IBFAB_SANITIZER_RUNTIME, which ibfab_finish_tests() sets for the tests
# that run such programs. Under TSan it is the static one, in each
# executable (clang 14's shared TSan runtime crashes at start, even in a
# program of one line): the drop-in libraries leave its symbols undefined
# (IBFAB_LINK_NO_UNDEFINED off), and no uninstrumented program can load them.
set(IBFAB_SANITIZE "" CACHE STRING
  "Build with these sanitizers (clang): address,undefined or thread; empty for none")
set(IBFAB_SANITIZER_RUNTIME "")
set(IBFAB_LINK_NO_UNDEFINED ON)
set(_scale 1)

if(IBFAB_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "IBFAB_SANITIZE needs clang and clang++ (-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang)")
  endif()
  if(IBFAB_SANITIZE MATCHES "thread")
    set(_runtime tsan)
    set(_scale 10)
  elseif(IBFAB_SANITIZE MATCHES "address")
    set(_runtime asan)
    set(_scale 4)
  else()
    message(FATAL_ERROR "IBFAB_SANITIZE=${IBFAB_SANITIZE}: expected address,undefined or thread")
  endif()
  # A report fails the test: UBSan aborts instead of going on.
  set(_flags -fsanitize=${IBFAB_SANITIZE} -fno-omit-frame-pointer)
  if(IBFAB_SANITIZE MATCHES "undefined")
    list(APPEND _flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_flags})
  add_link_options(${_flags})
  if(_runtime STREQUAL "asan")
    add_link_options(-shared-libsan)
    execute_process(
      COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so
      OUTPUT_VARIABLE IBFAB_SANITIZER_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT EXISTS "${IBFAB_SANITIZER_RUNTIME}")
      message(FATAL_ERROR "IBFAB_SANITIZE: no shared ASan runtime (${IBFAB_SANITIZER_RUNTIME})")
    endif()
    get_filename_component(_runtime_dir ${IBFAB_SANITIZER_RUNTIME} DIRECTORY)
    add_link_options(LINKER:-rpath,${_runtime_dir})
  else()
    set(IBFAB_LINK_NO_UNDEFINED OFF)
  endif()
  # RelWithDebInfo (make check-asan, check-tsan): optimised enough to run
  # the suite in time, file:line in the reports, and assert() kept.
  set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O1 -gline-tables-only")
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -gline-tables-only")
endif()
# Sanitized code runs several times slower: each test's TIMEOUT is
# multiplied by this (ibfab_finish_tests, ibfab_add_test).
set(IBFAB_TIMEOUT_SCALE ${_scale} CACHE STRING "Factor applied to every test's TIMEOUT")

# ibfab_finish_tests([RUNS_SYSTEM_PROGRAMS]): called last in each
# CMakeLists.txt that adds tests with add_test. Each test's TIMEOUT is
# multiplied by IBFAB_TIMEOUT_SCALE. RUNS_SYSTEM_PROGRAMS: the directory's
# tests run uninstrumented programs (rdma-core's, OpenSM, python3, sh) that
# may load the drop-in libraries; in a sanitized build they get the
# sanitizer's runtime preloaded, and LeakSanitizer is off in them (it would
# report those programs' own leaks; ibfab's are checked by the unit tests).
function(ibfab_finish_tests)
  cmake_parse_arguments(A "RUNS_SYSTEM_PROGRAMS" "" "" ${ARGN})
  get_property(_tests DIRECTORY PROPERTY TESTS)
  foreach(_test IN LISTS _tests)
    get_test_property(${_test} TIMEOUT _timeout)
    if(_timeout)
      math(EXPR _timeout "${_timeout} * ${IBFAB_TIMEOUT_SCALE}")
      set_tests_properties(${_test} PROPERTIES TIMEOUT ${_timeout})
    endif()
    if(A_RUNS_SYSTEM_PROGRAMS AND IBFAB_SANITIZER_RUNTIME)
      set_property(TEST ${_test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
        "LD_PRELOAD=set:${IBFAB_SANITIZER_RUNTIME}"
        "ASAN_OPTIONS=string_append::detect_leaks=0")
    endif()
  endforeach()
endfunction()
