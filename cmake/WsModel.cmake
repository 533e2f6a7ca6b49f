# The interleaving explorer, for tests (included by common/CMakeLists.txt when tests are on):
#   ws_model          library: <ws/model/explore.hpp> and the explorer (common/src/model_*.cpp).
#                     It defines WS_MODEL_CHECK for whoever links it, so there ws::atomic<T>
#                     (<ws/atomic.hpp>) is the instrumented ws::model::Atomic<T>.
#   ws_model_tests    the explorer's own tests (tests/model: litmus tests and the like), CTest
#                     names model.<Suite.Test>, label model
#   ws_add_model_tests(target prefix SOURCES ... [INCLUDES dir ...] LABELS ...)
#                     a test program built against ws_model; ws_add_lesson uses it for a
#                     lesson's tests/NN_topic/model/*.cpp
add_library(ws_model STATIC
  ${WS_ROOT}/common/src/model_execution.cpp
  ${WS_ROOT}/common/src/model_explore.cpp
  ${WS_ROOT}/common/src/model_hooks.cpp
  ${WS_ROOT}/common/src/model_memory.cpp
  ${WS_ROOT}/common/src/model_quarantine.cpp
  ${WS_ROOT}/common/src/model_sc_order.cpp
  ${WS_ROOT}/common/src/model_schedule.cpp
  ${WS_ROOT}/common/src/model_trace.cpp)
target_link_libraries(ws_model PUBLIC ws_common PRIVATE ws_warnings)
target_compile_definitions(ws_model PUBLIC WS_MODEL_CHECK)

function(ws_add_model_tests target prefix)
  cmake_parse_arguments(PARSE_ARGV 2 MODEL "" "" "SOURCES;INCLUDES;LABELS")
  add_executable(${target} ${MODEL_SOURCES})
  target_include_directories(${target} PRIVATE ${MODEL_INCLUDES})
  target_link_libraries(${target} PRIVATE ws_model ws_test_main ws_warnings)
  ws_compile_tests_together(${target})
  ws_share_test_pch(${target})
  ws_discover_tests(${target} "${prefix}" ${MODEL_LABELS})
endfunction()

file(GLOB ws_model_test_sources CONFIGURE_DEPENDS ${WS_ROOT}/tests/model/*.cpp)
ws_add_model_tests(ws_model_tests "model." SOURCES ${ws_model_test_sources} LABELS model)
add_dependencies(ws_reference_tests ws_model_tests)
