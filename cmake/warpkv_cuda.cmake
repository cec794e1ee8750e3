# CUDA detection of warpkv's builds (the C++ project and the Python extension): reads
# WARPKV_CUDA (AUTO, ON or OFF), enables the CUDA language when asked for and found (sm_90
# unless CMAKE_CUDA_ARCHITECTURES says otherwise), and sets WARPKV_WITH_CUDA. Include it from
# the top-level CMakeLists.txt (enable_language must be called there).
set(WARPKV_WITH_CUDA OFF)
if(NOT WARPKV_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)  # H100/H200; override with -DCMAKE_CUDA_ARCHITECTURES=...
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    # CMake 3.25 knows nvcc's dialect flags only up to C++17: teach it C++20.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
      set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(WARPKV_WITH_CUDA ON)
  elseif(WARPKV_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WARPKV_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

# warpkv::half (include/warpkv/core/half.hpp) is CUDA's __half wherever <cuda_fp16.h> is
# reachable, else a binary16 type of the header's own. nvcc builds reach it; a host build
# (WARPKV_CUDA=OFF, or AUTO without nvcc) looks for the toolkit's include directory and, when it
# finds one, puts it on the include path (as a system directory, for that header only: nothing
# else of the toolkit is used there), so that host and CUDA builds of one machine agree on the
# type. WARPKV_CUDA_FP16_DIR names the directory instead of the search; WARPKV_CUDA_FP16=OFF
# keeps host builds on the header's own type.
option(WARPKV_CUDA_FP16 "Host builds: warpkv::half is CUDA's __half when cuda_fp16.h is found" ON)
set(WARPKV_HALF_INCLUDE "")
if(NOT WARPKV_WITH_CUDA AND WARPKV_CUDA_FP16)
  find_path(WARPKV_CUDA_FP16_DIR cuda_fp16.h HINTS ENV CUDA_PATH ENV CUDA_HOME PATH_SUFFIXES include
            PATHS /usr/local/cuda/include DOC "host builds: the directory of cuda_fp16.h for warpkv::half")
  if(WARPKV_CUDA_FP16_DIR)
    set(WARPKV_HALF_INCLUDE "${WARPKV_CUDA_FP16_DIR}")
  endif()
endif()
