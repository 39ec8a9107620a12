# CUDA architectures for tilepipe's own targets (tests, examples, benchmarks).
#
# tilepipe's collectives use cp.async, ldmatrix and mma.sync.m16n8k16, which exist
# from sm_80 on. This file gives a default when the user names no architecture and
# refuses anything older; the installed package uses it to refuse a consumer's.

# Call BEFORE project(): enable_language(CUDA) would otherwise store nvcc's own
# default (sm_75 for CUDA 13) in the cache. An explicit -DCMAKE_CUDA_ARCHITECTURES=...
# or the CUDAARCHS environment variable (which CMake reads itself) wins.
macro(tilepipe_default_cuda_architectures)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND "$ENV{CUDAARCHS}" STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES "80;90a" CACHE STRING
      "CUDA architectures to build for (tilepipe needs 80 or newer; 'native' is allowed)")
  endif()
endmacro()

# Call AFTER project(). Accepted entries: <NN>[suffix][-real|-virtual] with NN >= 80
# (e.g. 80, 86-real, 90a, 100f) and 'native' (the GPUs of the build machine).
# Refused: 'all' and 'all-major' (they include pre-sm_80 targets; with CMake 3.25 they
# even name architectures nvcc 13 no longer supports), OFF/empty (nvcc's default is
# sm_75), and anything below 80.
function(tilepipe_check_cuda_architectures severity)
  set(archs "${CMAKE_CUDA_ARCHITECTURES}")
  set(hint "Configure with, for example, -DCMAKE_CUDA_ARCHITECTURES=\"80;90a\" or -DCMAKE_CUDA_ARCHITECTURES=native.")
  if(archs STREQUAL "" OR archs MATCHES "^(OFF|FALSE|NO|0)$")
    message(${severity} "tilepipe needs CUDA architecture sm_80 or newer, but CMAKE_CUDA_ARCHITECTURES is '${archs}', which leaves the choice to nvcc (sm_75 for CUDA 13). ${hint}")
    return()
  endif()
  set(too_old "")
  set(unknown "")
  # CMake (3.24+) records what 'native' resolved to; check those too when known.
  if("native" IN_LIST archs AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
    list(APPEND archs ${CMAKE_CUDA_ARCHITECTURES_NATIVE})
  endif()
  foreach(arch IN LISTS archs)
    if(arch STREQUAL "native")
      continue()
    elseif(arch MATCHES "^all(-major)?$")
      message(${severity} "tilepipe does not accept CMAKE_CUDA_ARCHITECTURES=${arch}: it includes architectures older than sm_80, which lack cp.async, ldmatrix and mma.sync.m16n8k16. Name the architectures explicitly. ${hint}")
      return()
    elseif(arch MATCHES "^([0-9]+)[a-z]?(-real|-virtual)?$")
      if(CMAKE_MATCH_1 LESS 80)
        list(APPEND too_old "${arch}")
      endif()
    else()
      list(APPEND unknown "${arch}")
    endif()
  endforeach()
  if(unknown)
    list(JOIN unknown ", " unknown)
    message(${severity} "tilepipe cannot read CMAKE_CUDA_ARCHITECTURES entries '${unknown}' (expected e.g. 80, 86-real, 90a or native). ${hint}")
  endif()
  if(too_old)
    list(JOIN too_old ", " too_old)
    message(${severity} "tilepipe needs CUDA architecture sm_80 or newer (cp.async, ldmatrix, mma.sync.m16n8k16), but CMAKE_CUDA_ARCHITECTURES requests ${too_old}. ${hint}")
  endif()
endfunction()
