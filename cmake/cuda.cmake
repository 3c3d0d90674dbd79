# CUDA is optional: on when nvcc is found (CMAKE_CUDA_COMPILER, /usr/local/cuda/bin/nvcc),
# off with -DTICKSENTRY_CUDA=OFF. Only src/engine/backends/cuda may include CUDA headers.
set(TICKSENTRY_HAVE_CUDA OFF)
if(TICKSENTRY_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(TICKSENTRY_HAVE_CUDA ON)
    message(STATUS "ticksentry: CUDA compiler ${CMAKE_CUDA_COMPILER}")
  else()
    message(STATUS "ticksentry: no nvcc found, CUDA backend off")
  endif()
endif()

# The CUDA backend's code: SASS for Hopper (sm_90a, wgmma/setmaxnreg allowed) and Ampere
# (sm_80), plus compute_90 PTX that newer GPUs JIT-compile. Set before enable_language so that
# CMake does not probe a default architecture; the target passes -gencode itself.
if(TICKSENTRY_HAVE_CUDA)
  set(CMAKE_CUDA_ARCHITECTURES OFF)
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  # CMake 3.25 does not know nvcc 13's C++20 flag; the engine headers the backend includes are
  # C++20 (defaulted comparisons).
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  set(TICKSENTRY_CUDA_GENCODE
    -gencode=arch=compute_90a,code=sm_90a
    -gencode=arch=compute_80,code=sm_80
    -gencode=arch=compute_90,code=compute_90)
endif()
