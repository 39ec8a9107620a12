# Codegen check: compiles test/codegen/codegen_kernel.cu with nvcc for each requested
# architecture and checks what the compiler made of tilepipe's collectives. No GPU needed.
#
#   cmake -DNVCC=<nvcc> -DSOURCE=<.cu> -DOUTPUT_DIR=<dir> -DARCHS="80|90a"
#         [-DINCLUDE_DIRS="a|b"] [-DEXTRA_FLAGS="f1|f2"] [-DHOST_COMPILER=<c++>]
#         [-DCUOBJDUMP=<cuobjdump> -DNVDISASM=<nvdisasm> -DSASS_BASELINE=<file>]
#         -P check_codegen.cmake
#
# (a) the PTX must match every regex in REQUIRED_PTX below (and REQUIRED_PTX_sm_<arch>), and
#     none in FORBIDDEN_PTX;
# (b) ptxas (-Xptxas -v) must report 0 bytes stack frame and 0 bytes spill stores and
#     loads for every function, no warning (C7508: setmaxnreg ignored) and no "Potential
#     Performance Loss" (C7510-C7520: wgmma serialized);
# (c) only with CUOBJDUMP and NVDISASM (scripts/install_sass_tools.sh installs them): in the
#     SASS of the cubin, every Ampere-tier GEMM kernel (SASS_KERNELS but not
#     SASS_HOPPER_KERNELS) has each opcode of REQUIRED_SASS, every Hopper-tier kernel of an
#     sm_90a cubin each of REQUIRED_SASS_HOPPER (elsewhere the Hopper kernels are empty),
#     no function has one of FORBIDDEN_SASS, and the kernels of SASS_BASELINE_KERNELS keep
#     their counts within SASS_BASELINE_TOLERANCE percent of SASS_BASELINE.
#     After an intended change, record the new counts by running the test with
#     TILEPIPE_UPDATE_SASS_BASELINE=1 in the environment (an environment variable, not a
#     cache option, so that the update mode cannot stay switched on by accident).
# The .ptx, .cubin, ptxas reports, .sass and SASS instruction counts stay in OUTPUT_DIR.

# ---- What the PTX of every architecture must contain --------------------------------
# Three entries per requirement:
#   <what, for the message>  <regex that must match>  <regex for the lines to show on failure>
# The PTX is matched as one string: use [^\n]* to stay within a line. No ';' in entries.
# MathSimtF32's warp product: 16 fma.rn.f32 in a row (epilogues have fma.rn.f32 too, but at most a
# few in a row; CMake's regex has no {16}).
string(REPEAT "fma\\.rn\\.f32[^\n]*\n[ \t]*" 16 simt_fma_run)
set(REQUIRED_PTX
  "16-byte cp.async.cg global->shared (plain or zero-fill form)"
      "cp\\.async\\.cg\\.shared\\.global[^\n]*, 16[^0-9]"       "cp\\.async"
  "8-byte cp.async.ca global->shared (the narrow kernel of operands aligned to 8 bytes)"
      "cp\\.async\\.ca\\.shared\\.global[^\n]*, 8, "          "cp\\.async"
  "4-byte cp.async.ca global->shared (the narrow kernel of operands aligned to 4 bytes)"
      "cp\\.async\\.ca\\.shared\\.global[^\n]*, 4, "          "cp\\.async"
  "ldmatrix (shared -> registers)"
      "ldmatrix\\.sync\\.aligned"                               "ldmatrix"
  "mma.sync m16n8k16 (tensor cores)"
      "mma\\.sync\\.aligned\\.m16n8k16"                        "mma"
  "mma.sync m16n8k16 with f16 accumulators (MathF16Accumulate)"
      "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f16\\.f16\\.f16\\.f16"  "mma"
  "mma.sync m16n8k8 on tf32 with f32 accumulators (MathTF32)"
      "mma\\.sync\\.aligned\\.m16n8k8\\.row\\.col\\.f32\\.tf32\\.tf32\\.f32"  "mma"
  "f32 rounded to tf32 to nearest (MathTF32's fragment loads)"
      "cvt\\.rna\\.tf32\\.f32"                             "cvt\\.[a-z]*\\.?tf32"
  "16 fma.rn.f32 in a row (MathSimtF32's product on the CUDA cores)"
      "${simt_fma_run}"                                      "fma\\.rn\\.f32|mul\\.rn\\.f32"
  "int8 to f16 in registers (W8A16: prmt under the exponent 0x64, then sub.f16x2 of 1152)"
      "sub\\.f16x2"                                            "f16x2"
  "int8 to bf16 in registers (W8A16: prmt into 2^23 + q + 128 in f32, one fma with -(2^23 + 128) x scale)"
      "mul\\.f32[^\n]*0fCB000080"                              "0fCB000080"
)
# The Hopper tier, in the sm_90a PTX only (and fp8 B's conversion instruction, from sm_89 on).
set(REQUIRED_PTX_sm_90a
  "fp8 e4m3 to f16 in registers (W8A16 with e4m3 weights)"
      "cvt\\.rn\\.f16x2\\.e4m3x2"                                "e4m3"
  "TMA tile copies completing on an mbarrier"
      "cp\\.async\\.bulk\\.tensor\\.3d[^\n]*mbarrier::complete_tx::bytes"  "cp\\.async\\.bulk"
  "TMA copies multicast within a cluster (the shared B tile)"
      "cp\\.async\\.bulk\\.tensor\\.3d[^\n]*multicast::cluster"  "cp\\.async\\.bulk"
  "TMA tile stores from shared memory (the epilogue)"
      "cp\\.async\\.bulk\\.tensor\\.3d\\.global\\.shared::cta[^\n]*bulk_group"  "cp\\.async\\.bulk"
  "parity waits on mbarriers"
      "mbarrier\\.try_wait\\.parity"                           "mbarrier"
  "wgmma.mma_async m64nNk16 (warpgroup MMA)"
      "wgmma\\.mma_async\\.sync\\.aligned\\.m64n[0-9]+k16\\.f32"   "wgmma"
  "wgmma.mma_async m64nNk8 on tf32 (the Hopper tier's float A and B)"
      "wgmma\\.mma_async\\.sync\\.aligned\\.m64n[0-9]+k8\\.f32\\.tf32\\.tf32"   "wgmma"
  "setmaxnreg (register rebalancing between producer and consumers)"
      "setmaxnreg\\.(inc|dec)"                                   "setmaxnreg"
)

# The same form; the PTX must match none of these.
set(FORBIDDEN_PTX
  "%globaltimer reads (the pipeline trace of trace/trace.cuh is compiled in: without TILEPIPE_TRACE it must cost nothing)"
      "%globaltimer"                                              "globaltimer"
)

# ---- What the SASS must contain (needs cuobjdump) --------------------------------------
# Three entries per requirement, matched against each instruction's opcode with its
# predicate and operands stripped (e.g. LDGSTS.E.BYPASS.LTC128B.128):
#   <what, for the message>  <regex the opcode must match>  <regex for the opcodes to show on failure>
# REQUIRED_SASS applies to every Ampere-tier GEMM kernel of every architecture, with the list
# SASS_MATH_KERNELS names for its math, REQUIRED_SASS_HOPPER and the list SASS_HOPPER_MATH_KERNELS
# names for its input type to every Hopper-tier kernel of an sm_90a cubin.
set(REQUIRED_SASS
  "16-byte LDGSTS (cp.async global->shared)"    "^LDGSTS(\\.[A-Z0-9_]+)*\\.128(\\.|$)"   "^LDGSTS"
)
# The fragment loads and the MMA an Ampere-tier kernel must have, by its math (numeric/math.cuh):
# pairs of <regex on the mangled kernel name> <name of a list below>; the first pair that matches
# applies.
set(SASS_MATH_KERNELS
  "MixedInput"         REQUIRED_SASS_MIXED_INPUT
  "MathF16Accumulate"  REQUIRED_SASS_F16_ACCUMULATE
  "MathTF32"           REQUIRED_SASS_TF32
  "MultistageMainloopIfLN[A-Z0-9_]*LayoutE1ELS3_1E.*MathSimtF32"  REQUIRED_SASS_SIMT_NN
  "MultistageMainloopIfLN[A-Z0-9_]*LayoutE1E.*MathSimtF32"  REQUIRED_SASS_SIMT_M_CONTIGUOUS_A
  "MathSimtF32"        REQUIRED_SASS_SIMT
  "."                  REQUIRED_SASS_DEFAULT_MATH
)
set(REQUIRED_SASS_DEFAULT_MATH
  "LDSM (ldmatrix)"                              "^LDSM\\."                                "^LDSM"
  "HMMA.16816.F32 (mma.sync m16n8k16, f32 accumulate)"  "^HMMA\\.16816\\.F32"             "^HMMA"
)
# A MixedInput (W8A16) kernel loads A and B's bytes with 128-bit LDS, not ldmatrix
# (layout/byte_fragment_map.cuh says why).
set(REQUIRED_SASS_MIXED_INPUT
  "LDS.128 (ByteFragmentLoaderA / B)"            "^LDS\\.128$"                           "^(LDS|LDSM)"
  "HMMA.16816.F32 (mma.sync m16n8k16, f32 accumulate)"  "^HMMA\\.16816\\.F32"             "^HMMA"
)
set(REQUIRED_SASS_F16_ACCUMULATE
  "LDSM (ldmatrix)"                              "^LDSM\\."                                "^LDSM"
  "HMMA.16816.F16 (mma.sync m16n8k16, f16 accumulate)"  "^HMMA\\.16816\\.F16$"            "^HMMA"
)
# (tf32 fragments are plain 32-bit LDS, which the epilogue has too: the tf32_tt baseline's LDS
# count, not a requirement here, notices them gone.)
set(REQUIRED_SASS_TF32
  "HMMA.1688.F32.TF32 (mma.sync m16n8k8 on tf32)"  "^HMMA\\.1688\\.F32\\.TF32$"        "^HMMA"
)
# (FFMA is in every epilogue too: the simt_tt baseline's FFMA count, about 4,000 against the
# epilogue's ~100, notices a product that is not fused.)
set(REQUIRED_SASS_SIMT
  "FFMA (fma.rn.f32 on the CUDA cores)"            "^FFMA$"                              "^(FFMA|FMUL|FADD|HMMA)"
)
# A column-major (M-contiguous in shared memory, the mangled mainloop's first Layout is 1): a lane
# loads two adjacent rows of A as one LDS.64 (layout/simt_fragment_map.cuh), which neither the
# epilogue nor a K-contiguous B has; the simt_nn baseline's LDS64 and SHFL counts (the restore of
# mma.sync's rows) pin how many.
set(REQUIRED_SASS_SIMT_M_CONTIGUOUS_A
  ${REQUIRED_SASS_SIMT}
  "LDS.64 (8-byte loads of two rows of an M-contiguous A)"  "^LDS\\.64$"           "^LDS"
)
# A and B column-major (NN: the mangled mainloop's Layouts 1 and 1): the SIMT mainloop copies the
# K-contiguous B transposed with 4-byte cp.async (block/transposing_tile_loader.cuh), LDGSTS.E
# (4 bytes through L1), so that B too loads as LDS.64 (warp/warp_math.cuh says why).
set(REQUIRED_SASS_SIMT_NN
  ${REQUIRED_SASS_SIMT_M_CONTIGUOUS_A}
  "4-byte LDGSTS (the transposing copy of NN's B)"  "^LDGSTS\\.E$"                "^LDGSTS"
)
set(REQUIRED_SASS_HOPPER
  "UTMALDG (TMA tile loads)"                     "^UTMALDG"                                "^UTMA"
  "UTMASTG (TMA tile stores of the epilogue)"     "^UTMASTG"                                "^UTMA"
  "SYNCS parity waits (mbarrier try_wait)"        "^SYNCS\\.PHASECHK"                       "^SYNCS"
  "USETMAXREG (setmaxnreg)"                       "^USETMAXREG"                             "^USETMAXREG"
)
# The wgmma a Hopper-tier kernel must have, by its A and B type: pairs of <regex on the mangled
# kernel name> <name of a list below>, the first match applies. Float A and B (the mainloop's
# `If` in the mangled name) run as tf32, k8; fp8 as k32 (QGMMA); f16 and bf16 as k16.
set(SASS_HOPPER_MATH_KERNELS
  "WarpSpecializedMainloopIf"                REQUIRED_SASS_HOPPER_TF32
  "WarpSpecializedMainloopI13__nv_fp8_e4m3"  REQUIRED_SASS_HOPPER_E4M3
  "WarpSpecializedMainloopI13__nv_fp8_e5m2"  REQUIRED_SASS_HOPPER_E5M2
  "."                                        REQUIRED_SASS_HOPPER_16BIT
)
set(REQUIRED_SASS_HOPPER_16BIT
  "HGMMA ...x16.F32 (wgmma on f16/bf16, f32 accumulate)"  "^HGMMA\\.64x[0-9]+x16\\.F32"  "^HGMMA"
)
set(REQUIRED_SASS_HOPPER_TF32
  "HGMMA ...x8.F32.TF32 (wgmma on tf32, f32 accumulate)"  "^HGMMA\\.64x[0-9]+x8\\.F32\\.TF32$"  "^HGMMA"
)
set(REQUIRED_SASS_HOPPER_E4M3
  "QGMMA ...x32.F32.E4M3.E4M3 (wgmma on e4m3, f32 accumulate)"  "^QGMMA\\.64x[0-9]+x32\\.F32\\.E4M3\\.E4M3$"  "^QGMMA"
)
set(REQUIRED_SASS_HOPPER_E5M2
  "QGMMA ...x32.F32.E5M2.E5M2 (wgmma on e5m2, f32 accumulate)"  "^QGMMA\\.64x[0-9]+x32\\.F32\\.E5M2\\.E5M2$"  "^QGMMA"
)
# Same form; no function at all may contain these.
set(FORBIDDEN_SASS
  "local memory (LDL/STL: spills or an array on the stack)"  "^(LDL|STL)(\\.|$)"  "^(LDL|STL)"
)
# Which functions are GEMM kernels: a regex on the mangled name. Loose on purpose, so that
# renaming a kernel in test/codegen/codegen_kernel.cu keeps it checked.
set(SASS_KERNELS "[Gg][Ee][Mm][Mm]|[Cc][Oo][Dd][Ee][Gg][Ee][Nn]")
# Which of them are the Hopper tier's (mangled names).
set(SASS_HOPPER_KERNELS "gemm_kernel_sm90|codegen_sm90")
# Opcode counts written to <stem>.sm_<arch>.sass_counts.txt for each kernel: <name> <regex>.
set(SASS_COUNTS
  LDGSTS  "^LDGSTS"
  LDSM    "^LDSM"
  LDS     "^LDS(\\.|$)"
  LDS64   "^LDS\\.64$"
  LDS128  "^LDS\\.128$"
  SHFL    "^SHFL(\\.|$)"
  HMMA    "^HMMA"
  FFMA    "^FFMA$"
  FADD    "^FADD$"
  BAR     "^BAR(\\.|$)"
  UTMALDG "^UTMALDG"
  UTMASTG "^UTMASTG"
  HGMMA   "^HGMMA"
  QGMMA   "^QGMMA"
  SYNCS   "^SYNCS"
)
# Kernels whose counts are compared with SASS_BASELINE, four entries each: <label in the file>
# <regex on the architecture (80, 90a)> <regex on the demangled name (c++filt) that picks exactly
# one kernel> <the counts compared, comma-separated names of SASS_COUNTS>. The label stays when a
# kernel is renamed; only the regex here needs to follow.
set(SASS_BASELINE_KERNELS
  "default_f16_tn"  "."  "MultistageMainloop<__half, \\([A-Za-z_:]*Layout\\)0, \\([A-Za-z_:]*Layout\\)1, [^>]*, 4, [A-Za-z_:]*MathDefault>, false>.*StagedEpilogue<__half,"  "LDGSTS,LDSM,HMMA"
  "narrow_f16_tn"   "."  "MultistageMainloop<__half, \\([A-Za-z_:]*Layout\\)0, \\([A-Za-z_:]*Layout\\)1, [^>]*, 4, [A-Za-z_:]*MathDefault>, true>.*StagedEpilogue<__half,"  "LDGSTS,LDSM,HMMA"
  "tf32_tt"         "."  "MultistageMainloop<float, \\([A-Za-z_:]*Layout\\)0, \\([A-Za-z_:]*Layout\\)0, [^>]*, 3, [A-Za-z_:]*MathTF32>, false>.*StagedEpilogue<float,"  "LDGSTS,LDS,HMMA"
  "simt_tt"         "."  "MultistageMainloop<float, \\([A-Za-z_:]*Layout\\)0, \\([A-Za-z_:]*Layout\\)0, [^>]*, 3, [A-Za-z_:]*MathSimtF32>, false>.*StagedEpilogue<float,"  "LDGSTS,LDS,FFMA"
  "simt_nn"         "."  "MultistageMainloop<float, \\([A-Za-z_:]*Layout\\)1, \\([A-Za-z_:]*Layout\\)1, [^>]*, 3, [A-Za-z_:]*MathSimtF32>, false>.*StagedEpilogue<float,"  "LDGSTS,LDS,LDS64,LDS128,FFMA,SHFL"
  "w8a16_f16_tn"    "."  "MultistageMainloop<[A-Za-z_:]*MixedInput<__half, [A-Za-z_:]*Dequantize<__half, signed char> >, .*StagedEpilogue<__half,"  "LDGSTS,LDS,HMMA"
  "hopper_f16_tn"   "^90a$"  "WarpSpecializedMainloop<__half, \\([A-Za-z_:]*Layout\\)0, \\([A-Za-z_:]*Layout\\)1, [^>]*HopperTileConfig<[0-9]+, [0-9]+, 4, [0-9]+, [^>]*HopperSchedule\\)0>.*WarpgroupEpilogue<__half,"  "UTMALDG,UTMASTG,HGMMA,SYNCS"
  "hopper_tf32_tn"  "^90a$"  "WarpSpecializedMainloop<float, \\([A-Za-z_:]*Layout\\)0, \\([A-Za-z_:]*Layout\\)1, [^>]*HopperTileConfig<[0-9]+, [0-9]+, 3, [0-9]+, [^>]*HopperSchedule\\)0>.*WarpgroupEpilogue<float,"  "UTMALDG,UTMASTG,HGMMA,SYNCS"
  "hopper_fp8_blockwise"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<128, 128, .*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)2, .*Fp8ScaleGroups\\)0>"  "UTMALDG,UTMASTG,QGMMA,FFMA,SYNCS"
  "hopper_fp8_blockwise_wide"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<128, 256, .*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)2, .*Fp8ScaleGroups\\)0>"  "UTMALDG,UTMASTG,QGMMA,FFMA,SYNCS"
  "hopper_fp8_grouped_blockwise"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<128, 256, .*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)2, .*Fp8ScaleGroups\\)1>, [A-Za-z_:]*GroupedScheduler<"  "UTMALDG,UTMASTG,QGMMA,FFMA,SYNCS"
  "hopper_fp8_decode"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<64, 128, .*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)0,"  "UTMALDG,UTMASTG,QGMMA,FADD,SYNCS"
  "hopper_fp8_192"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<128, 192, .*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)0,"  "UTMALDG,UTMASTG,QGMMA,FADD,SYNCS"
  "hopper_fp8_decode64"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<64, 64, [^>]*HopperSchedule\\)0>.*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)0,"  "UTMALDG,UTMASTG,QGMMA,FADD,SYNCS"
  "hopper_fp8_decode64_interleaved"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<64, 64, [^>]*HopperSchedule\\)2>.*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)0,"  "UTMALDG,UTMASTG,QGMMA,FADD,SYNCS"
  "hopper_fp8_decode256_split"  "^90a$"  "WarpSpecializedMainloop<__nv_fp8_e4m3, [^>]*HopperTileConfig<64, 256, [^>]*HopperSchedule\\)3>.*Fp8ScaleFold<\\([A-Za-z_:]*Fp8Scaling\\)0,"  "UTMALDG,UTMASTG,QGMMA,FADD,SYNCS"
)
set(SASS_BASELINE_TOLERANCE 5)  # percent

# ---- Arguments ------------------------------------------------------------------------
foreach(var IN ITEMS NVCC SOURCE OUTPUT_DIR ARCHS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_codegen.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" ARCHS "${ARCHS}")
string(REPLACE "|" ";" INCLUDE_DIRS "${INCLUDE_DIRS}")
list(REMOVE_DUPLICATES INCLUDE_DIRS)
string(REPLACE "|" ";" EXTRA_FLAGS "${EXTRA_FLAGS}")

set(common_flags -std=c++17 -DNDEBUG)
foreach(dir IN LISTS INCLUDE_DIRS)
  list(APPEND common_flags "-I${dir}")
endforeach()
list(APPEND common_flags ${EXTRA_FLAGS})
if(HOST_COMPILER)
  list(APPEND common_flags -ccbin "${HOST_COMPILER}")
endif()

file(MAKE_DIRECTORY "${OUTPUT_DIR}")
get_filename_component(stem "${SOURCE}" NAME_WE)
set(failures "")

# Lines of `text` that match `regex`, indented, at most `max` of them.
function(matching_lines out text regex max)
  string(REPLACE ";" "<semicolon>" text "${text}")  # ';' would split the list of lines
  string(REPLACE "\n" ";" lines "${text}")
  set(result "")
  set(count 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "${regex}")
      math(EXPR count "${count} + 1")
      if(count LESS_EQUAL max)
        string(APPEND result "      ${line}\n")
      endif()
    endif()
  endforeach()
  if(count GREATER max)
    math(EXPR more "${count} - ${max}")
    string(APPEND result "      ... ${more} more\n")
  elseif(count EQUAL 0)
    set(result "      (no such line)\n")
  endif()
  string(REPLACE "<semicolon>" ";" result "${result}")
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

function(run_nvcc arch what output report_var)
  execute_process(
    COMMAND "${NVCC}" ${common_flags} ${ARGN} -o "${output}" "${SOURCE}"
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE log
    ERROR_VARIABLE log)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " args)
    message(FATAL_ERROR "codegen sm_${arch}: nvcc failed to produce ${what} (exit ${rc}):\n"
      "  ${NVCC} ${common_flags} ${args} -o ${output} ${SOURCE}\n${log}")
  endif()
  set(${report_var} "${log}" PARENT_SCOPE)
endfunction()

# ---- (c) SASS: tool lookup and the checks (in their own file) -------------------------------
include("${CMAKE_CURRENT_LIST_DIR}/check_sass.cmake")

foreach(arch IN LISTS ARCHS)
  set(base "${OUTPUT_DIR}/${stem}.sm_${arch}")

  # One nvcc run makes the cubin, with the ptxas report for (b), and keeps its intermediate
  # files: the PTX that ptxas compiled is the one (a) checks, and cicc runs once per
  # architecture instead of twice (codegen.sm_90a in CI: 150 s before, 89 s after).
  # The -gencode form: an arch-specific target (90a) then gets exactly its own pass.
  set(target "-gencode=arch=compute_${arch},code=sm_${arch}")
  set(keep "${base}.keep")
  file(REMOVE_RECURSE "${keep}")
  file(MAKE_DIRECTORY "${keep}")
  run_nvcc(${arch} "a cubin" "${base}.cubin" report -cubin "${target}" -Xptxas -v
           -keep "-keep-dir=${keep}")
  if(NOT EXISTS "${keep}/${stem}.ptx")
    message(FATAL_ERROR "codegen sm_${arch}: nvcc -keep left no ${keep}/${stem}.ptx")
  endif()
  file(RENAME "${keep}/${stem}.ptx" "${base}.ptx")
  file(REMOVE_RECURSE "${keep}")

  # ---- (a) PTX ------------------------------------------------------------------------
  file(READ "${base}.ptx" ptx)
  set(required ${REQUIRED_PTX} ${REQUIRED_PTX_sm_${arch}})
  list(LENGTH required n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 3)
    math(EXPR j "${i} + 1")
    math(EXPR k "${i} + 2")
    list(GET required ${i} what)
    list(GET required ${j} regex)
    list(GET required ${k} family)
    if(ptx MATCHES "${regex}")
      message(STATUS "sm_${arch} PTX ok: ${what}")
    else()
      matching_lines(shown "${ptx}" "${family}" 12)
      string(REPLACE "\n" "\\n" shown_regex "${regex}")
      string(APPEND failures
        "  sm_${arch} PTX: no ${what}\n"
        "    expected a line matching: ${shown_regex}\n"
        "    lines of ${base}.ptx matching '${family}':\n${shown}")
    endif()
  endforeach()

  set(forbidden ${FORBIDDEN_PTX})
  while(forbidden)
    list(POP_FRONT forbidden what regex family)
    if(ptx MATCHES "${regex}")
      matching_lines(shown "${ptx}" "${family}" 6)
      string(APPEND failures "  sm_${arch} PTX: has ${what}:\n${shown}")
    endif()
  endwhile()

  # ---- (b) ptxas report -------------------------------------------------------------------
  file(WRITE "${base}.ptxas.txt" "${report}")
  # ptxas warns, and goes on, when it ignores setmaxnreg (C7508); when it serializes wgmma
  # (C7510-C7520: "Potential Performance Loss") it says so only as an info line. Both cost the
  # Hopper tier its overlap (FP8's fold: a wgmma group in flight across a loop's back edge
  # serializes every wgmma of the kernel), so either fails the check.
  if(report MATCHES "[Ww]arning|Potential Performance Loss")
    matching_lines(shown "${report}" "[Ww]arning|Potential Performance Loss" 12)
    string(APPEND failures "  sm_${arch} ptxas warned:\n${shown}")
  endif()
  string(REPLACE ";" "," report_text "${report}")  # ';' would split the list of lines
  string(REPLACE "\n" ";" report_lines "${report_text}")
  set(function "")
  set(functions 0)
  foreach(line IN LISTS report_lines)
    if(line MATCHES "Function properties for (.+)$")
      set(function "${CMAKE_MATCH_1}")
      math(EXPR functions "${functions} + 1")
    elseif(function)
      if(NOT line MATCHES "^ *0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads")
        string(STRIP "${line}" line)
        string(APPEND failures
          "  sm_${arch} ptxas: ${function} has a stack frame or spills:\n"
          "      ${line}\n")
      endif()
      set(function "")
    endif()
  endforeach()
  matching_lines(usage "${report}" "(Compiling entry function|Used [0-9]+ registers)" 40)
  if(functions EQUAL 0)
    string(APPEND failures
      "  sm_${arch} ptxas: the report names no function (is the kernel in ${SOURCE} instantiated?)\n"
      "    report: ${base}.ptxas.txt\n")
  else()
    message(STATUS "sm_${arch} ptxas: ${functions} function(s) checked for stack frames and spills\n${usage}")
  endif()

  # ---- (c) SASS of the same cubin -------------------------------------------------------------
  if(sass_tools)
    execute_process(COMMAND "${CUOBJDUMP}" --dump-sass "${base}.cubin"
      RESULT_VARIABLE rc OUTPUT_FILE "${base}.sass" ERROR_VARIABLE log)
    if(rc EQUAL 0)
      check_sass(${arch} "${base}")
    else()
      string(APPEND failures
        "  sm_${arch} SASS: ${CUOBJDUMP} --dump-sass ${base}.cubin failed (exit ${rc}):\n${log}\n")
    endif()
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "codegen check of ${SOURCE} FAILED:\n${failures}")
endif()
list(JOIN ARCHS ", sm_" archs)
if(sass_tools)
  message(STATUS "codegen check of ${stem} passed for sm_${archs}")
else()
  message(STATUS "codegen check of ${stem} passed for sm_${archs} (PTX and ptxas only: SASS skipped)")
endif()
