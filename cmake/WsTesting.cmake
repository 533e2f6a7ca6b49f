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
