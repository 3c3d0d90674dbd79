# Project-wide compile flags: warnings on and clean; optional sanitizers.
add_library(ticksentry_flags INTERFACE)
target_compile_options(ticksentry_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers)
if(CMAKE_BUILD_TYPE STREQUAL "Release")
  # AVX2/FMA are on every machine this runs on (EPYC dev box, H200 host).
  target_compile_options(ticksentry_flags INTERFACE -O3 -march=x86-64-v3)
endif()
if(TICKSENTRY_SANITIZE)
  target_compile_options(ticksentry_flags INTERFACE -fsanitize=${TICKSENTRY_SANITIZE} -fno-omit-frame-pointer)
  target_link_options(ticksentry_flags INTERFACE -fsanitize=${TICKSENTRY_SANITIZE})
endif()
