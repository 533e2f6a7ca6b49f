# ws_discover_tests(target prefix label...)
#
# Registers every GoogleTest test of `target` with CTest as "<prefix><Suite.Test>", each run in
# a process of its own (so the watchdog ending one hanging test does not take the others with
# it), labelled with the given labels plus tsan/asan in a sanitizer build.
#
# gtest_discover_tests() cannot take a list-valued LABELS property, so the labels are set by a
# small script CTest includes after the discovered tests.
function(ws_discover_tests target prefix)
  set(labels ${ARGN} ${WS_SANITIZER_LABEL})
  gtest_discover_tests(${target}
    TEST_PREFIX "${prefix}"
    TEST_LIST ${target}_TESTS
    DISCOVERY_MODE PRE_TEST
    PROPERTIES TIMEOUT 400)  # a last resort: the watchdog fails a hang long before this
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${script}
    "if(${target}_TESTS)\n"
    "  set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${labels}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()

# ws_fail_allocations_on_demand(target...): for test programs that include
# <ws/testing/failing_new.hpp>: ld's --wrap sends their calls of operator new and new[] to that
# header's wrappers, which fail them when a test asks, and their calls of operator delete and
# delete[] (sized or not) to wrappers that count them (replacing operator new outright clashes
# with the sanitizers' runtimes). Targets that do not exist are skipped; off Linux, nothing.
function(ws_fail_allocations_on_demand)
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    return()
  endif()
  foreach(target ${ARGN})
    if(TARGET ${target})
      target_link_options(${target} PRIVATE "LINKER:--wrap=_Znwm,--wrap=_Znam"
                          "LINKER:--wrap=_ZdlPv,--wrap=_ZdlPvm,--wrap=_ZdaPv,--wrap=_ZdaPvm")
      target_compile_definitions(${target} PRIVATE WS_WRAPPED_OPERATOR_NEW=1)
    endif()
  endforeach()
endfunction()

# ws_compile_tests_together(target...): with WS_UNITY_TESTS (on unless said otherwise), CMake
# compiles each test program's files four at a time, each four as one translation unit (a unity
# build). A test file spends about as much of its compile time on GoogleTest's and the pool's
# headers and their templates as on its own tests, and a group pays that once: building
# ws_reference_tests (every solution's tests, common's, the explorer's) took 321 s of CPU (173 s
# on 2 cores) one file at a time and 205 s (111 s) in groups (g++ 12, -O2 -g, a quiet machine,
# 2026-11-27). Names a test file declares at namespace scope (its helpers in an
# anonymous namespace) must therefore be unique among its lesson's test files, or the group
# that holds both does not compile. Grading turns it off (tools/workshop_cli/submission.py,
# classroom.py): an instructor's hidden test file or a student's own may reuse such a name.
# -DWS_UNITY_TESTS=OFF compiles one file at a time, which rebuilds a lesson's tests faster on a
# machine with more cores than the lesson has groups.
option(WS_UNITY_TESTS "Compile each test program's files in groups of four (unity build)" ON)
function(ws_compile_tests_together)
  if(WS_UNITY_TESTS)
    foreach(target ${ARGN})
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 4)
    endforeach()
  endif()
endfunction()

# ws_share_test_pch(target...): with WS_TEST_PCH (on unless said otherwise), every test program
# reuses one precompiled <gtest/gtest.h>, built once per build folder with ws_test_main
# (common/CMakeLists.txt), instead of parsing it in each of its translation units. Measured with
# g++ 12 (2026-11-27): lesson 05's six one-file test programs (-O2, as tools/break_it.py builds
# one for each patch) 19.8 s of CPU against 22.9 s; ws_reference_tests in groups of four (-O2 -g)
# 200 s against 217 s. The header is all it holds, so a test file sees nothing more than
# it would by including <gtest/gtest.h> first, as they all do. A PCH is only valid for the
# compiler and the flags it was built with; every test program of a build folder has those (the
# preset's; the macros some add, WS_MODEL_CHECK and WS_WRAPPED_OPERATOR_NEW, are not used by
# GoogleTest), and -Winvalid-pch (with -Werror in CI) makes a mismatch an error, not a re-parse.
option(WS_TEST_PCH "Precompile GoogleTest's header once for every test program" ON)
function(ws_share_test_pch)
  if(WS_TEST_PCH)
    foreach(target ${ARGN})
      target_precompile_headers(${target} REUSE_FROM ws_test_main)
    endforeach()
  endif()
endfunction()
