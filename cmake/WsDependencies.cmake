# Every dependency comes from find_package. A required one that is missing stops configure and
# names the Debian package; an optional one (oneTBB, OpenMP) only drops its contender.
find_package(Threads REQUIRED)

macro(ws_require package debian_package why)
  find_package(${package} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR
      "${package} was not found; it is needed ${why}.\n"
      "Install it with:  sudo apt-get install ${debian_package}\n"
      "(or turn that part off, e.g. -DWS_BUILD_TESTS=OFF / -DWS_BUILD_BENCHMARKS=OFF)")
  endif()
endmacro()

if(WS_BUILD_TESTS)
  ws_require(GTest libgtest-dev "for the lessons' tests")
  include(GoogleTest)
endif()

if(WS_BUILD_BENCHMARKS)
  ws_require(benchmark libbenchmark-dev "for the benchmarks")
  find_package(TBB QUIET)
  if(TBB_FOUND)
    message(STATUS "oneTBB found: the benchmarks compare against tbb::task_group")
  else()
    message(STATUS "oneTBB not found: no oneTBB contender (sudo apt-get install libtbb-dev)")
  endif()
  include(WsOpenMP)
  ws_find_clang_openmp()
endif()
