# Two interface targets carry the workshop's flags:
#   ws_warnings  - the warning set (private to our own targets)
#   ws_sanitizer - -fsanitize=... for compiling and linking (public: whoever links an
#                  instrumented library must link the sanitizer runtime too)
add_library(ws_warnings INTERFACE)
target_compile_options(ws_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<BOOL:${WS_WARNINGS_AS_ERRORS}>:-Werror>)

add_library(ws_sanitizer INTERFACE)
if(WS_SANITIZER STREQUAL "thread")
  target_compile_options(ws_sanitizer INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(ws_sanitizer INTERFACE -fsanitize=thread)
elseif(WS_SANITIZER STREQUAL "address")
  target_compile_options(ws_sanitizer INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(ws_sanitizer INTERFACE -fsanitize=address,undefined)
  # clang 14's -fsanitize=function (one of `undefined`'s checks: an indirect call through a
  # function pointer of the wrong type) fails to compile coroutines ("Cannot represent a
  # difference across sections"), which lesson 09 is made of; every other check stays on.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(ws_sanitizer INTERFACE -fno-sanitize=function)
  endif()
elseif(NOT WS_SANITIZER STREQUAL "")
  message(FATAL_ERROR "WS_SANITIZER must be 'thread', 'address' or empty, not '${WS_SANITIZER}'")
endif()

# The CTest label a sanitizer build adds to every test it registers (empty in a plain build).
set(WS_SANITIZER_LABEL "")
if(WS_SANITIZER STREQUAL "thread")
  set(WS_SANITIZER_LABEL tsan)
elseif(WS_SANITIZER STREQUAL "address")
  set(WS_SANITIZER_LABEL asan)
endif()
