# Makes the target CCCL::CCCL available: the CCCL (libcudacxx, CUB) that ships with
# the CUDA toolkit, so that <cuda/pipeline> is found by nvcc AND by the host compiler.
#
# Used by tilepipe's CMakeLists.txt and, installed next to tilepipeConfig.cmake, by
# find_package(tilepipe). Expects find_package(CUDAToolkit) to have run already.
#
# Order: an already existing CCCL::CCCL (e.g. the consumer brought its own CCCL) ->
# find_package(CCCL CONFIG) (CCCL_DIR / CMAKE_PREFIX_PATH first, then the toolkit's
# lib*/cmake/cccl) -> an imported target on the toolkit's include/cccl directory.

if(NOT TARGET CCCL::CCCL)
  set(_tilepipe_cccl_hints "")
  foreach(_tilepipe_dir IN ITEMS
      "${CUDAToolkit_LIBRARY_DIR}"
      "${CUDAToolkit_TARGET_DIR}/lib64" "${CUDAToolkit_TARGET_DIR}/lib"
      "${CUDAToolkit_LIBRARY_ROOT}/lib64" "${CUDAToolkit_LIBRARY_ROOT}/lib"
      "${CUDAToolkit_BIN_DIR}/../lib64" "${CUDAToolkit_BIN_DIR}/../lib")
    if(IS_DIRECTORY "${_tilepipe_dir}/cmake")
      list(APPEND _tilepipe_cccl_hints "${_tilepipe_dir}/cmake")
    endif()
  endforeach()
  # Only the components tilepipe uses; Thrust would add THRUST_*_SYSTEM definitions
  # to every consumer.
  find_package(CCCL CONFIG QUIET COMPONENTS libcudacxx CUB HINTS ${_tilepipe_cccl_hints})
  unset(_tilepipe_cccl_hints)
  unset(_tilepipe_dir)
endif()

if(NOT TARGET CCCL::CCCL)
  # No CCCL package files: fall back to the headers of the toolkit itself.
  set(_tilepipe_cccl_paths "")
  foreach(_tilepipe_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND _tilepipe_cccl_paths "${_tilepipe_dir}/cccl" "${_tilepipe_dir}")
  endforeach()
  find_path(TILEPIPE_CCCL_INCLUDE_DIR cuda/std/detail/__config
    PATHS ${_tilepipe_cccl_paths} NO_DEFAULT_PATH)
  mark_as_advanced(TILEPIPE_CCCL_INCLUDE_DIR)
  if(TILEPIPE_CCCL_INCLUDE_DIR)
    add_library(CCCL::CCCL INTERFACE IMPORTED GLOBAL)
    set_target_properties(CCCL::CCCL PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${TILEPIPE_CCCL_INCLUDE_DIR}")
  endif()
  unset(_tilepipe_cccl_paths)
  unset(_tilepipe_dir)
endif()
