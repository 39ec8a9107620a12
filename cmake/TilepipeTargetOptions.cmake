# Compiler options for tilepipe's OWN targets (tests, examples, benchmarks).
# Nothing here goes onto the tilepipe INTERFACE target: consumers choose their flags.

set(TILEPIPE_NVCC_THREADS "0" CACHE STRING
  "nvcc --threads value for tilepipe's targets (0 = one thread per CPU; helps multi-architecture builds)")
option(TILEPIPE_PTXAS_VERBOSE "Pass -Xptxas -v (register / spill / stack report) for tilepipe's targets" OFF)
option(TILEPIPE_WARNINGS_AS_ERRORS "Turn compiler warnings into errors for tilepipe's targets" OFF)
option(TILEPIPE_EXPT_RELAXED_CONSTEXPR "Pass --expt-relaxed-constexpr to nvcc for tilepipe's targets" OFF)

# The nvcc flags that decide what device code is generated; the codegen check uses
# them too, so that it inspects what the tests compile.
set(TILEPIPE_CODEGEN_NVCC_FLAGS "")
if(TILEPIPE_EXPT_RELAXED_CONSTEXPR)
  list(APPEND TILEPIPE_CODEGEN_NVCC_FLAGS "--expt-relaxed-constexpr")
endif()

function(tilepipe_target_options target)
  set(cuda "$<COMPILE_LANGUAGE:CUDA>")
  set(cxx "$<COMPILE_LANGUAGE:CXX>")
  set(gnu_like "$<OR:$<CXX_COMPILER_ID:GNU>,$<CXX_COMPILER_ID:Clang>,$<CXX_COMPILER_ID:AppleClang>>")
  target_compile_options(${target} PRIVATE
    "$<${cuda}:--threads=${TILEPIPE_NVCC_THREADS}>"
    "$<${cuda}:-Xcompiler=-Wall>"
    "$<$<AND:${cxx},${gnu_like}>:-Wall;-Wextra>")
  foreach(flag IN LISTS TILEPIPE_CODEGEN_NVCC_FLAGS)
    target_compile_options(${target} PRIVATE "$<${cuda}:${flag}>")
  endforeach()
  if(TILEPIPE_PTXAS_VERBOSE)
    target_compile_options(${target} PRIVATE "$<${cuda}:--ptxas-options=-v>")
  endif()
  if(TILEPIPE_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE
      "$<${cuda}:--Werror=all-warnings;-Xcompiler=-Werror>"
      "$<$<AND:${cxx},${gnu_like}>:-Werror>")
  endif()
endfunction()
