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
