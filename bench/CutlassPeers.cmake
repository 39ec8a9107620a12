# gemm_bench's optional CUTLASS columns (bench/peers.cuh): CUTLASS's SM80 multistage GEMM
# (peer_cutlass_sm80.cu) and, in a build for 90a, its SM90 TMA warp-specialized GEMMs
# (peer_cutlass_sm90.cu), compiled from CUTLASS's headers, which are never part of this repository:
#
#   scripts/install_cutlass_headers.sh    # the nvidia-cutlass wheel's headers, into .tools/cutlass
#   cmake ... -DTILEPIPE_BENCH_CUTLASS=ON
#
# TILEPIPE_BENCH_CUTLASS: OFF (default), ON (an error if the headers are not found) or AUTO (the
# columns where the headers are found; the presets use it). The headers are looked for in
# TILEPIPE_CUTLASS_INCLUDE_DIR if given, else in .tools/cutlass (the script's), else in the
# nvidia-cutlass wheel of the first python3 on PATH.
#
# The peers are built as CUTLASS builds itself (Release, -DNDEBUG, --expt-relaxed-constexpr), and
# their compile fails if ptxas serializes wgmma instructions (C7510, check_wgmma_serialization.sh):
# with nvcc 13.0 and without NDEBUG it does so in every CUTLASS SM90 kernel, which would make the
# comparison hollow.

set(TILEPIPE_BENCH_CUTLASS "OFF" CACHE STRING
  "gemm_bench also times CUTLASS's SM80 and SM90 GEMMs: ON, OFF, or AUTO (where its headers are found)")
set_property(CACHE TILEPIPE_BENCH_CUTLASS PROPERTY STRINGS OFF ON AUTO)
option(TILEPIPE_BENCH_CUTLASS_FULL
  "Every CUTLASS configuration for every data type and layout (OFF: one of each kind, f16 TN only, as CI builds)" ON)
set(TILEPIPE_CUTLASS_INCLUDE_DIR "" CACHE PATH
  "CUTLASS's include directory (holding cute/ and cutlass/); empty: .tools/cutlass or the python3 environment's nvidia-cutlass wheel")

string(TOUPPER "${TILEPIPE_BENCH_CUTLASS}" _cutlass_mode)
if(_cutlass_mode STREQUAL "AUTO")
  set(_cutlass_required OFF)
elseif(TILEPIPE_BENCH_CUTLASS)
  set(_cutlass_required ON)
else()
  return()
endif()

# ---- Find the headers ------------------------------------------------------------------------
set(_cutlass_dir "${TILEPIPE_CUTLASS_INCLUDE_DIR}")
if(NOT _cutlass_dir)
  set(_cutlass_candidates "${PROJECT_SOURCE_DIR}/.tools/cutlass/cutlass_library/source/include")
  # A wheel installed with pip: find_spec locates the package without importing it.
  find_program(TILEPIPE_PYTHON3 python3)
  mark_as_advanced(TILEPIPE_PYTHON3)
  if(TILEPIPE_PYTHON3)
    execute_process(
      COMMAND "${TILEPIPE_PYTHON3}" -c
        "import importlib.util as u; s = u.find_spec('cutlass_library'); print(list(s.submodule_search_locations)[0] if s else '')"
      OUTPUT_VARIABLE _cutlass_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET TIMEOUT 30)
    if(_cutlass_wheel)
      list(APPEND _cutlass_candidates "${_cutlass_wheel}/source/include")
    endif()
  endif()
  foreach(_candidate IN LISTS _cutlass_candidates)
    if(EXISTS "${_candidate}/cutlass/version.h" AND EXISTS "${_candidate}/cute/tensor.hpp")
      set(_cutlass_dir "${_candidate}")
      break()
    endif()
  endforeach()
endif()

set(_cutlass_version "")
if(_cutlass_dir AND EXISTS "${_cutlass_dir}/cutlass/version.h")
  file(STRINGS "${_cutlass_dir}/cutlass/version.h" _cutlass_version_lines
    REGEX "^#define CUTLASS_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part IN ITEMS MAJOR MINOR PATCH)
    string(REGEX MATCH "CUTLASS_${_part} +([0-9]+)" _ "${_cutlass_version_lines}")
    list(APPEND _cutlass_version "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN _cutlass_version "." _cutlass_version)
endif()

set(_cutlass_problem "")
if(NOT _cutlass_version)
  set(_cutlass_problem "CUTLASS's headers were not found (run scripts/install_cutlass_headers.sh, or set TILEPIPE_CUTLASS_INCLUDE_DIR to the directory that holds cute/ and cutlass/)")
elseif(_cutlass_version VERSION_LESS 4.2)
  # 4.2 is the first release that supports CUDA 13.0, the toolkit tilepipe requires.
  set(_cutlass_problem "CUTLASS ${_cutlass_version} in ${_cutlass_dir} is older than 4.2, the first release for CUDA 13")
endif()
if(_cutlass_problem)
  if(_cutlass_required)
    message(FATAL_ERROR "TILEPIPE_BENCH_CUTLASS is ON but ${_cutlass_problem}.")
  endif()
  message(STATUS "tilepipe bench: no CUTLASS columns: ${_cutlass_problem}")
  return()
endif()

# ---- The peers -------------------------------------------------------------------------------
# Each peer's source is compiled once per data type and layout (TILEPIPE_BENCH_CUTLASS_PART, see
# peers.cuh), so that the kernels of a full build compile in parallel; with
# TILEPIPE_BENCH_CUTLASS_FULL=OFF only part 0 (f16 TN). One OBJECT library per part, with its own
# flags (not tilepipe's warnings: these are CUTLASS's sources); each part registers its kernels at
# start-up.
if(TILEPIPE_BENCH_CUTLASS_FULL)
  set(_cutlass_parts 0 1 2 3)
else()
  set(_cutlass_parts 0)
endif()
function(tilepipe_bench_cutlass_peer name source)
  foreach(part IN LISTS _cutlass_parts)
    set(target gemm_bench_${name}_part${part})
    add_library(${target} OBJECT "${source}")
    target_include_directories(${target} SYSTEM PRIVATE "${_cutlass_dir}")
    target_link_libraries(${target} PRIVATE tilepipe::tilepipe CUDA::cudart)
    target_compile_definitions(${target} PRIVATE NDEBUG TILEPIPE_BENCH_CUTLASS_PART=${part}
      "TILEPIPE_BENCH_CUTLASS_FULL=$<BOOL:${TILEPIPE_BENCH_CUTLASS_FULL}>")
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr;--threads=${TILEPIPE_NVCC_THREADS}>")
    if(TILEPIPE_PTXAS_VERBOSE)
      target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:--ptxas-options=-v>")
    endif()
    # nvcc 13.0 reports C7510 (wgmma serialized) as "ptxas info", which no -Werror turns into an
    # error: the launcher reads the compiler's output and fails the compile on it.
    set_target_properties(${target} PROPERTIES
      CUDA_COMPILER_LAUNCHER "${CMAKE_CURRENT_SOURCE_DIR}/check_wgmma_serialization.sh")
    if(ARGN)
      set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${ARGN}")
    endif()
    target_link_libraries(gemm_bench PRIVATE ${target})
  endforeach()
endfunction()

# CUTLASS's SM80 kernels: for every target of the build.
set(_cutlass_peers "cutlass-sm80")
tilepipe_bench_cutlass_peer(cutlass_sm80 peer_cutlass_sm80.cu)
set_property(SOURCE catalog.cu APPEND PROPERTY COMPILE_DEFINITIONS TILEPIPE_BENCH_CUTLASS_SM80=1)

# Its SM90 kernels exist only in the arch-specific sm_90a target: that source is compiled for
# 90a alone, where the build has it.
set(_cutlass_archs "${CMAKE_CUDA_ARCHITECTURES}")
if("native" IN_LIST CMAKE_CUDA_ARCHITECTURES AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
  set(_cutlass_archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
endif()
set(_cutlass_sm90a "")
foreach(_arch IN LISTS _cutlass_archs)
  if(_arch MATCHES "^90a(-real|-virtual)?$")
    set(_cutlass_sm90a "${_arch}")
  endif()
endforeach()
if(_cutlass_sm90a)
  list(APPEND _cutlass_peers "cutlass-sm90")
  tilepipe_bench_cutlass_peer(cutlass_sm90 peer_cutlass_sm90.cu "${_cutlass_sm90a}")
  set_property(SOURCE catalog.cu APPEND PROPERTY COMPILE_DEFINITIONS TILEPIPE_BENCH_CUTLASS_SM90=1)
  set(_cutlass_sm90_note "")
else()
  set(_cutlass_sm90_note "; no cutlass-sm90: the build has no 90a target (${_cutlass_archs})")
endif()

if(TILEPIPE_BENCH_CUTLASS_FULL)
  set(_cutlass_scope "every configuration")
else()
  set(_cutlass_scope "one configuration of each kind, f16 TN (TILEPIPE_BENCH_CUTLASS_FULL=OFF)")
endif()
list(JOIN _cutlass_peers ", " _cutlass_peer_list)
message(STATUS "tilepipe bench: CUTLASS ${_cutlass_version} (${_cutlass_dir}): ${_cutlass_peer_list}, ${_cutlass_scope}${_cutlass_sm90_note}")

# `gemm_bench --list` names the CUTLASS kernels and counts them per peer: each peer compiled,
# linked and registered at least one ("... peer kernels: tilepipe-streamk 7, cutlass-sm80 1,
# cutlass-sm90 2"; peers of other names may come first).
if(TILEPIPE_BUILD_TESTS)
  set(_cutlass_counts "")
  foreach(_peer IN LISTS _cutlass_peers)
    list(APPEND _cutlass_counts "${_peer} [1-9][0-9]*")
  endforeach()
  list(JOIN _cutlass_counts ", " _cutlass_counts)
  add_test(NAME bench.list_cutlass COMMAND gemm_bench --list)
  set_tests_properties(bench.list_cutlass PROPERTIES LABELS host TIMEOUT 60
    PASS_REGULAR_EXPRESSION "[0-9]+ peer kernels: ([a-z0-9-]+ [0-9]+, )*${_cutlass_counts}")
endif()
