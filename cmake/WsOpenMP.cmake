# The OpenMP contender is clang with LLVM's libomp, whatever compiler builds the rest: the
# comparison is against that runtime (g++'s libgomp is a different one). So bench/openmp_peer.cpp
# is compiled by clang++ -fopenmp=libomp into an object file of its own, which the g++ build
# links with libomp. Its interface (bench/openmp_peer.hpp) is plain functions on plain types,
# so the two compilers' objects link together (same ABI, same libstdc++).
#
# ws_find_clang_openmp() sets WS_OPENMP_FOUND, WS_OPENMP_CLANG (the clang++ to compile with;
# empty when the whole build already uses clang) and WS_OPENMP_LIBRARY, after compiling and
# running a small OpenMP program to prove the pair works.
function(ws_find_clang_openmp)
  set(WS_OPENMP_FOUND OFF PARENT_SCOPE)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(clang ${CMAKE_CXX_COMPILER})
  else()
    find_program(WS_CLANGXX NAMES clang++ clang++-16 clang++-15 clang++-14)
    set(clang ${WS_CLANGXX})
  endif()
  if(NOT clang)
    message(STATUS "OpenMP contender: no clang++ (sudo apt-get install clang libomp-dev)")
    return()
  endif()
  execute_process(COMMAND ${clang} -print-resource-dir OUTPUT_VARIABLE resource_dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  get_filename_component(llvm_lib "${resource_dir}/../.." ABSOLUTE)  # .../llvm-NN/lib
  find_library(WS_LIBOMP NAMES omp libomp.so.5 HINTS ${llvm_lib} NO_CACHE)
  if(NOT WS_LIBOMP)
    message(STATUS "OpenMP contender: libomp not found (sudo apt-get install libomp-dev)")
    return()
  endif()
  set(probe_dir ${CMAKE_CURRENT_BINARY_DIR}/ws_openmp_probe)  # the workshop's build folder
  file(MAKE_DIRECTORY ${probe_dir})
  file(WRITE ${probe_dir}/probe.cpp
       "#include <omp.h>\nint main() { int n = 0;\n#pragma omp parallel reduction(+ : n)\n"
       "  n += 1;\n  return n > 0 ? 0 : 1; }\n")
  execute_process(COMMAND ${clang} -fopenmp=libomp probe.cpp -o probe ${WS_LIBOMP}
                          -Wl,-rpath,${llvm_lib}
                  WORKING_DIRECTORY ${probe_dir} RESULT_VARIABLE built OUTPUT_QUIET ERROR_QUIET)
  if(built EQUAL 0)
    execute_process(COMMAND ${probe_dir}/probe RESULT_VARIABLE ran OUTPUT_QUIET ERROR_QUIET)
  endif()
  if(NOT built EQUAL 0 OR NOT ran EQUAL 0)
    message(STATUS "OpenMP contender: ${clang} -fopenmp=libomp does not build a working "
                   "program (sudo apt-get install libomp-dev)")
    return()
  endif()
  message(STATUS "OpenMP contender: ${clang} with ${WS_LIBOMP}")
  set(WS_OPENMP_FOUND ON PARENT_SCOPE)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(WS_OPENMP_CLANG "" PARENT_SCOPE)
  else()
    set(WS_OPENMP_CLANG ${clang} PARENT_SCOPE)
  endif()
  set(WS_OPENMP_LIBRARY ${WS_LIBOMP} PARENT_SCOPE)
endfunction()
