# The CUDA language is enabled only when a toolkit is present, so a CPU-only
# machine builds everything else. PSHARD_HAVE_CUDA tells the rest of the build.
set(PSHARD_HAVE_CUDA OFF)
if(PSHARD_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Client GPUs (RTX 30/40/50) and the H200 used for checks; override on the command line.
      set(CMAKE_CUDA_ARCHITECTURES 86 89 90 120)
    endif()
    # The CUDA runtime linked statically into the CUDA plugin (libpshard_cuda.so, the one
    # binary that links CUDA): it needs only the driver and libcublasLt on a GPU machine
    # (docs/cuda.md, "Running it from a build made elsewhere"), and nothing else needs
    # NVIDIA's libraries at all: the runtime dlopens the plugin for --backend cuda only.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(PSHARD_HAVE_CUDA ON)
    message(STATUS "pshard: CUDA toolkit ${CUDAToolkit_VERSION} found, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "pshard: no CUDA toolkit found, building without the CUDA backend")
  endif()
endif()
