# ws_add_lesson(NN topic [SOURCES file.cpp ...])
#
# Registers lesson NN, whose folders are lessons/NN_topic (starter), solutions/NN_topic and
# tests/NN_topic:
#   ws_lessonNN            library: the starter code, with its folder on the include path
#   ws_lessonNN_solution   library: the reference solution, same headers and namespace (not in
#                          the student edition, which has no solutions/)
#   ws::lessonNN, ws::lessonNN_solution
#                          the same two libraries by their namespaced (ALIAS) names, for a
#                          project that pulls the workshop in with add_subdirectory()
#   ws_lessonNN_tests, ws_lessonNN_solution_tests
#                          the lesson's tests built against each; CTest names them
#                          lessonNN.starter.<Suite.Test> / lessonNN.solution.<Suite.Test>,
#                          labelled lessonNN;starter or lessonNN;solution (plus tsan/asan in a
#                          sanitizer build)
#   ws_lessonNN_model_tests, ws_lessonNN_solution_model_tests
#                          only if tests/NN_topic/model/*.cpp exist: the interleaving
#                          explorer's scenarios (cmake/WsModel.cmake), named and labelled the same
#   ws_reference_tests     (made in the top CMakeLists.txt) depends on the solution's test
#                          programs above: the sanitizer builds of `./workshop check` build it
#   <any of the test programs above>__<file>
#                          with WS_TEST_PER_FILE=ON only: one program per test file, not run by
#                          CTest. The break-it gate (tools/break_it.py) builds the one file that
#                          holds a patch's test, instead of every test of the lesson, per patch.
#
# In a one-lesson student edition (./workshop export-student DIR --lesson N, marked by the file
# .student-edition) only lessons/NN of lesson N is there: the other lessons return quietly.
function(ws_add_lesson number topic)
  cmake_parse_arguments(PARSE_ARGV 2 LESSON "" "" "SOURCES")
  set(folder ${number}_${topic})
  if(NOT IS_DIRECTORY ${WS_ROOT}/lessons/${folder} AND EXISTS ${WS_ROOT}/.student-edition)
    return()  # not part of this edition
  endif()
  foreach(kind starter solution)
    if(kind STREQUAL "starter")
      set(src_dir ${WS_ROOT}/lessons/${folder})
      set(lib ws_lesson${number})
      set(alias ws::lesson${number})
    else()
      set(src_dir ${WS_ROOT}/solutions/${folder})
      set(lib ws_lesson${number}_solution)
      set(alias ws::lesson${number}_solution)
    endif()
    if(NOT IS_DIRECTORY ${src_dir})
      if(kind STREQUAL "solution")
        continue()  # the student edition has no solutions/
      endif()
      message(FATAL_ERROR "lesson ${number}: ${src_dir} is missing")
    endif()

    if(LESSON_SOURCES)
      list(TRANSFORM LESSON_SOURCES PREPEND ${src_dir}/ OUTPUT_VARIABLE sources)
      add_library(${lib} STATIC ${sources})
      target_include_directories(${lib} PUBLIC ${src_dir})
      target_link_libraries(${lib} PUBLIC ws_common PRIVATE ws_warnings)
    else()
      add_library(${lib} INTERFACE)
      target_include_directories(${lib} INTERFACE ${src_dir})
      target_link_libraries(${lib} INTERFACE ws_common)
    endif()
    add_library(${alias} ALIAS ${lib})

    if(WS_BUILD_TESTS)
      file(GLOB test_sources CONFIGURE_DEPENDS ${WS_ROOT}/tests/${folder}/*.cpp)
      set(test_exe ${lib}_tests)
      add_executable(${test_exe} ${test_sources})
      target_link_libraries(${test_exe} PRIVATE ${lib} ws_test_main ws_warnings)
      ws_compile_tests_together(${test_exe})
      ws_share_test_pch(${test_exe})
      ws_discover_tests(${test_exe} "lesson${number}.${kind}." lesson${number} ${kind})
      if(kind STREQUAL "solution")
        add_dependencies(ws_reference_tests ${test_exe})
      endif()
      if(WS_TEST_PER_FILE)
        foreach(source IN LISTS test_sources)
          get_filename_component(stem ${source} NAME_WE)
          add_executable(${test_exe}__${stem} EXCLUDE_FROM_ALL ${source})
          target_link_libraries(${test_exe}__${stem} PRIVATE ${lib} ws_test_main ws_warnings)
          ws_share_test_pch(${test_exe}__${stem})
        endforeach()
      endif()
      # The lesson's explorer scenarios, tests/NN_topic/model/*.cpp, if any: built with the
      # model's ws::atomic (cmake/WsModel.cmake) against the lesson's headers, not its library
      # (compiled with std::atomic), as ${lib}_model_tests; CTest names and labels as above.
      file(GLOB model_sources CONFIGURE_DEPENDS ${WS_ROOT}/tests/${folder}/model/*.cpp)
      if(model_sources)
        ws_add_model_tests(${lib}_model_tests "lesson${number}.${kind}." SOURCES ${model_sources}
                           INCLUDES ${src_dir} LABELS lesson${number} ${kind})
        if(kind STREQUAL "solution")
          add_dependencies(ws_reference_tests ${lib}_model_tests)
        endif()
        if(WS_TEST_PER_FILE)
          foreach(source IN LISTS model_sources)
            get_filename_component(stem ${source} NAME_WE)
            add_executable(${lib}_model_tests__${stem} EXCLUDE_FROM_ALL ${source})
            target_include_directories(${lib}_model_tests__${stem} PRIVATE ${src_dir})
            target_link_libraries(${lib}_model_tests__${stem} PRIVATE ws_model ws_test_main
                                                                      ws_warnings)
          ws_share_test_pch(${lib}_model_tests__${stem})
          endforeach()
        endif()
      endif()
    endif()
  endforeach()
endfunction()

# ws_reference_library(out NN): the library that stands for lesson NN in benchmarks — the
# reference solution, or in the student edition (no solutions/) the student's own code.
function(ws_reference_library out number)
  if(TARGET ws_lesson${number}_solution)
    set(${out} ws_lesson${number}_solution PARENT_SCOPE)
  else()
    set(${out} ws_lesson${number} PARENT_SCOPE)
  endif()
endfunction()
