#!/usr/bin/env bash
# Full check on a machine with a GPU (compute capability >= 8.0).
#
#   scripts/gpu_check.sh LOGDIR
#
# Configures with the `gpu` preset (Ninja, Release, CMAKE_CUDA_ARCHITECTURES=native, or 90a on
# an sm_90 GPU; build dir build/gpu), builds with every core, runs ctest once per label (host,
# codegen, device), runs every example program, writes one log per step into LOGDIR
# (configure.log, build.log, ctest-<label>.log, examples.log, ...) and prints a summary LAST
# (also kept in summary.log). Exit status 0 only if every step passed.
# On an sm_90 GPU it stops after configuring, before building or running anything, where the
# build's architectures lack 90a (e.g. TILEPIPE_CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=native,
# which CMake reads as plain 90 there): the Hopper tier's tests would skip and every step pass.
# On this machine a skipped device test is a failure (it means the GPU was not usable);
# set TILEPIPE_ALLOW_SKIPPED=1 to accept skips.
#
# Adding a step: write a function that returns non-zero
# on failure and may set STEP_DETAIL to a one-line result, then add one `step` line to
# main() below. Its result then appears in the summary like the others.
#
# The `torch` step installs the PyTorch package (python/, `pip install --no-build-isolation`, into
# build/torch-site) and runs its pytest (against torch in float64, opcheck, torch.compile, CUDA
# graphs); `torch-bench` runs its benchmark (python/bench/bench_ops.py) against torch,
# `torch-bench-fp8` the FP8 one (python/bench/bench_fp8.py) against torch._scaled_mm, and
# `torch-bench-grouped` the grouped one (python/bench/bench_grouped.py) against
# torch._grouped_mm, and `torch-bench-grouped-fp8` the FP8 grouped one
# (python/bench/bench_grouped_fp8.py) against torch._scaled_grouped_mm. Where python3 does not import torch and pytest, they pass and say so. Where
# only these are selected (TILEPIPE_GPU_CHECK_ONLY='torch'), the CMake build is skipped.
#
# Environment: JOBS (default: all cores), TILEPIPE_ALLOW_SKIPPED (default 0),
# TILEPIPE_FUZZ_COUNT (the randomized test's problems, default 4000 here),
# TILEPIPE_GPU_CHECK_ONLY (a regex of the steps to run after configure and build, e.g.
# 'ctest|examples' then 'check$' in a second call, for machines that limit one command's time;
# the second call finds the build done), TILEPIPE_PYTHON (the torch step's and the plot's
# interpreter, default python3), TILEPIPE_BENCH_ARGS (added to the `bench` step's gemm_bench
# command line, e.g. --no-sweep), TILEPIPE_CMAKE_ARGS (added to the configure command line, e.g.
# -DTILEPIPE_BENCH_CUTLASS_FULL=ON for CUTLASS's kernels on every data type and layout).
#
# The `bench` step runs the benchmark (bench/gemm_bench --json) last, so that one lease gives the
# checks and the figures of the same build.
# Needs only CMake >= 3.25, ninja, nvcc and GoogleTest's CMake package (and torch and pytest for
# the torch step).
set -uo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 LOGDIR" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
LOGDIR=$(cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

PRESET=gpu
# CMake looks for nvcc on PATH (or in CUDACXX); fall back to the usual toolkit location.
if [[ -z ${CUDACXX:-} ]] && ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
  export PATH="/usr/local/cuda/bin:${PATH}"
fi
JOBS=${JOBS:-$(nproc)}
ALLOW_SKIPPED=${TILEPIPE_ALLOW_SKIPPED:-0}
# The randomized test gives about 26% of its problems to the Hopper tier where the GPU has one
# (a quarter are unaligned and run the Ampere tier; 3,600 gave the Hopper tier 1,043 on f76ee9e,
# but 938 on a6f0c6f, whose table has 37 configurations): 4,000 give each tier at least 1,000
# (the test's own default is 1,000 problems in all).
export TILEPIPE_FUZZ_COUNT=${TILEPIPE_FUZZ_COUNT:-4000}

# ---- Bookkeeping ----------------------------------------------------------------------------
STEP_NAMES=()
STEP_RESULTS=()
STEP_DETAILS=()
STEP_DETAIL=""
BUILD_OK=0
EXAMPLE_LINES=""

# step NAME FUNCTION [ARGS...]: runs FUNCTION, records PASS/FAIL, its time and STEP_DETAIL.
step() {
  local name=$1
  shift
  STEP_DETAIL=""
  echo "[gpu_check] ${name} ..."
  local start=${SECONDS} result=PASS
  "$@" || result=FAIL
  local elapsed=$((SECONDS - start))
  STEP_NAMES+=("${name}")
  STEP_RESULTS+=("${result}")
  STEP_DETAILS+=("${STEP_DETAIL:+${STEP_DETAIL} }(${elapsed}s)")
  echo "[gpu_check] ${name}: ${result}"
  [[ ${result} == PASS ]]
}

# logged LOGFILE COMMAND...: runs COMMAND with stdout and stderr in LOGDIR/LOGFILE.
logged() {
  local log="${LOGDIR}/$1"
  shift
  echo "+ $*" >"${log}"
  "$@" >>"${log}" 2>&1
}

# ---- Steps ------------------------------------------------------------------------------------
step_environment() {
  {
    echo "date:   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host:   $(hostname)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)"
    echo
    nvidia-smi || echo "nvidia-smi: not available"
    echo
    cmake --version | head -n 1
    echo "ninja $(ninja --version 2>/dev/null || echo 'not found')"
    nvcc --version 2>/dev/null | tail -n 2 || command -v nvcc || echo "nvcc: not on PATH"
  } >"${LOGDIR}/environment.log" 2>&1
  return 0
}

# The compute capability of the first GPU ("9.0"), as nvidia-smi gives it; empty where it cannot.
gpu_compute_cap() {
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' '
}

# The preset builds for `native`, which CMake reads as plain 90 on a Hopper GPU: that would
# leave the Hopper tier (sm_90a only) out. There, build for 90a.
step_configure() {
  local archs=()
  if [[ $(gpu_compute_cap) == "9.0" ]]; then
    archs=(-DCMAKE_CUDA_ARCHITECTURES=90a)
  fi
  # shellcheck disable=SC2086  # TILEPIPE_CMAKE_ARGS is a list of arguments
  logged configure.log cmake --preset "${PRESET}" "${archs[@]}" ${TILEPIPE_CMAKE_ARGS:-} ||
    { STEP_DETAIL="see configure.log"; return 1; }
}

# step_architectures: on an sm_90 GPU the build must include 90a (its CMakeCache.txt; `native`
# resolved to what CMake found, which is never 90a), or the Hopper tier's tests skip and pass.
step_architectures() {
  local cc archs native resolved cache="build/${PRESET}/CMakeCache.txt"
  cc=$(gpu_compute_cap)
  archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "${cache}" 2>/dev/null)
  resolved=${archs}
  if [[ ${archs} == native ]]; then
    native=$(sed -n 's/^set(CMAKE_CUDA_ARCHITECTURES_NATIVE "\(.*\)")$/\1/p' \
      "build/${PRESET}"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null | head -n 1)
    resolved="native (${native:-the GPU architecture as a plain number, never 90a})"
  fi
  STEP_DETAIL="GPU compute capability ${cc:-unknown}, build for ${resolved:-unknown}"
  [[ ${cc} == "9.0" ]] || return 0
  local has_90a=';90a(-real|-virtual)?;'
  [[ ";${archs};" =~ ${has_90a} ]] && return 0
  STEP_DETAIL="build/${PRESET} is for CMAKE_CUDA_ARCHITECTURES=${resolved:-unknown}, which lacks"
  STEP_DETAIL+=" 90a, on an sm_90 GPU: the Hopper tier would go untested. Configure with"
  STEP_DETAIL+=" -DCMAKE_CUDA_ARCHITECTURES=90a (or \"80;90a\"), e.g. by leaving"
  STEP_DETAIL+=" CMAKE_CUDA_ARCHITECTURES out of TILEPIPE_CMAKE_ARGS"
  echo "[gpu_check] refused: ${STEP_DETAIL}" >&2
  return 1
}

step_build() {
  logged build.log cmake --build --preset "${PRESET}" --parallel "${JOBS}" ||
    { STEP_DETAIL="see build.log"; return 1; }
}

# step_ctest LABEL: the tests of one label; a skipped test fails the step unless allowed.
step_ctest() {
  local label=$1 log="ctest-$1.log" status=0
  if [[ ${BUILD_OK} -ne 1 ]]; then
    STEP_DETAIL="not run: configure or build failed"
    return 1
  fi
  # --verbose keeps every test's own output in the log (the fuzzer's counts, device names).
  logged "${log}" ctest --preset "${PRESET}" --label-regex "^${label}\$" \
    --parallel "${JOBS}" --no-tests=error --verbose || status=$?
  STEP_DETAIL=$(grep -E '[0-9]+% tests passed|No tests were found' \
    "${LOGDIR}/${log}" | tail -n 1)
  [[ -n ${STEP_DETAIL} ]] || STEP_DETAIL="ctest exited with ${status}; see ${log}"
  local skipped
  skipped=$(grep -c '(Skipped)$' "${LOGDIR}/${log}")
  if [[ ${skipped} -gt 0 ]]; then
    STEP_DETAIL+=", ${skipped} skipped"
    if [[ ${ALLOW_SKIPPED} != 1 ]]; then
      STEP_DETAIL+=" (not allowed on the GPU machine; see ${log})"
      status=1
    fi
  fi
  return "${status}"
}

# step_examples: every example program (build/gpu/example/*) with its default arguments.
step_examples() {
  if [[ ${BUILD_OK} -ne 1 ]]; then
    STEP_DETAIL="not run: configure or build failed"
    return 1
  fi
  local log="${LOGDIR}/examples.log" exe passed=0 failed=0
  : >"${log}"
  while IFS= read -r exe; do
    echo "+ ${exe}" >>"${log}"
    if timeout 600 "${exe}" >>"${log}" 2>&1; then
      passed=$((passed + 1))
    else
      echo "FAILED (exit $?): ${exe}" >>"${log}"
      failed=$((failed + 1))
    fi
  done < <(find "build/${PRESET}/example" -maxdepth 1 -type f -perm -u+x 2>/dev/null | sort)
  STEP_DETAIL="${passed} passed, ${failed} failed"
  [[ $((passed + failed)) -gt 0 ]] || STEP_DETAIL="no examples built"
  # Keep each example's verdict lines (error, speed) for the summary.
  EXAMPLE_LINES=$(grep -E 'VERIFIED|FAILED|TFLOP/s|relative error|fused_bias_relu|hopper_bias_relu|GemmMultistage<' "${log}" || true)
  [[ ${failed} -eq 0 ]]
}

# step_sanitizer TOOL: every device test under compute-sanitizer --tool TOOL, on the reduced
# set of shapes (the large cuBLAS-checked problems are filtered out: under the sanitizer they
# take minutes and add no coverage of other code paths). Clean means exit 0 and
# "ERROR SUMMARY: 0 errors" from every program.
SANITIZER_FILTER=${TILEPIPE_SANITIZER_FILTER:--*Large*}
# The randomized test runs fewer, smaller problems under the sanitizers.
SANITIZER_FUZZ_COUNT=${TILEPIPE_SANITIZER_FUZZ_COUNT:-60}
SANITIZER_FUZZ_MAX_DIM=${TILEPIPE_SANITIZER_FUZZ_MAX_DIM:-320}
step_sanitizer() {
  local tool=$1 log="${LOGDIR}/sanitizer-$1.log" exe programs=0 dirty=0
  if [[ ${BUILD_OK} -ne 1 ]]; then
    STEP_DETAIL="not run: configure or build failed"
    return 1
  fi
  if ! command -v compute-sanitizer >/dev/null 2>&1; then
    STEP_DETAIL="compute-sanitizer not found"
    return 1
  fi
  : >"${log}"
  while IFS= read -r exe; do
    programs=$((programs + 1))
    echo "+ compute-sanitizer --tool ${tool} ${exe} --gtest_filter=${SANITIZER_FILTER}" >>"${log}"
    local out
    out=$(TILEPIPE_FUZZ_COUNT=${SANITIZER_FUZZ_COUNT} TILEPIPE_FUZZ_MAX_DIM=${SANITIZER_FUZZ_MAX_DIM} \
      timeout 900 compute-sanitizer --tool "${tool}" --error-exitcode 99 \
      "${exe}" --gtest_filter="${SANITIZER_FILTER}" --gtest_brief=1 2>&1)
    local rc=$?
    echo "${out}" >>"${log}"
    # memcheck, synccheck, initcheck: "ERROR SUMMARY: 0 errors";
    # racecheck: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
    if [[ ${rc} -ne 0 ]] || ! grep -qE 'ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)' <<<"${out}"; then
      echo "NOT CLEAN (exit ${rc}): ${exe}" >>"${log}"
      dirty=$((dirty + 1))
    fi
  done < <(find "build/${PRESET}/test/device" -maxdepth 1 -type f -perm -u+x 2>/dev/null | sort)
  STEP_DETAIL="${programs} programs, $((programs - dirty)) clean"
  [[ ${programs} -gt 0 && ${dirty} -eq 0 ]]
}

# install_package: `pip install` of python/ into build/torch-site (once per run), timed.
# Returns non-zero (and sets STEP_DETAIL) where torch or pytest is missing or the install fails.
PYTHON=${TILEPIPE_PYTHON:-python3}
TORCH_SITE="${PWD}/build/torch-site"
PACKAGE_INSTALLED=""
install_package() {
  local missing=""
  "${PYTHON}" -c 'import torch' >/dev/null 2>&1 || missing="torch"
  "${PYTHON}" -c 'import pytest' >/dev/null 2>&1 || missing+="${missing:+ and }pytest"
  if [[ -n ${missing} ]]; then
    STEP_DETAIL="not run: ${missing} not installed for ${PYTHON}"
    return 2
  fi
  [[ -z ${PACKAGE_INSTALLED} ]] || return 0
  local start=${SECONDS}
  # MAX_JOBS is the build's parallelism in torch.utils.cpp_extension; no index, no network.
  if ! logged torch-install.log env MAX_JOBS="${JOBS}" timeout 1800 "${PYTHON}" -m pip install \
    -v --no-build-isolation --no-deps --no-index --upgrade --target "${TORCH_SITE}" ./python; then
    STEP_DETAIL="pip install ./python failed; see torch-install.log"
    return 1
  fi
  PACKAGE_INSTALLED="pip install: $((SECONDS - start))s with MAX_JOBS=${JOBS}"
}

# step_torch: the package's pytest. As in step_ctest, a skipped test fails the step unless allowed
# (it means torch saw no usable GPU).
step_torch() {
  local log="torch.log" status=0
  install_package || { status=$?; [[ ${status} -eq 2 ]] && return 0; return "${status}"; }
  logged "${log}" env PYTHONPATH="${TORCH_SITE}" timeout 1800 \
    "${PYTHON}" -m pytest -v -rs -p no:cacheprovider python/tests || status=$?
  STEP_DETAIL=$(grep -E '^=+ .*[0-9]+ (passed|failed|skipped|errors?).* in [0-9.]+s' \
    "${LOGDIR}/${log}" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')
  [[ -n ${STEP_DETAIL} ]] || STEP_DETAIL="pytest exited with ${status}; see ${log}"
  STEP_DETAIL+="; ${PACKAGE_INSTALLED}"
  if grep -qE '[0-9]+ skipped' <<<"${STEP_DETAIL}"; then
    if [[ ${ALLOW_SKIPPED} != 1 ]]; then
      STEP_DETAIL+=" (skips are not allowed on the GPU machine; see ${log})"
      status=1
    elif [[ ${status} -eq 5 ]]; then
      status=0  # pytest's "no tests ran": the module skipped itself, which is allowed here
    fi
  fi
  return "${status}"
}

# step_torch_bench: the package's benchmark against torch (tables in torch-bench.log, every row in
# torch-bench.json); the detail is its summary lines.
step_torch_bench() {
  local status=0
  install_package || { status=$?; [[ ${status} -eq 2 ]] && return 0; return "${status}"; }
  logged torch-bench.log env PYTHONPATH="${TORCH_SITE}" "${PYTHON}" python/bench/bench_ops.py \
    --json "${LOGDIR}/torch-bench.json" || status=$?
  STEP_DETAIL=$(grep -E '^summary: ' "${LOGDIR}/torch-bench.log" | sed 's/^summary: //' |
    paste -sd ';' -)
  [[ -n ${STEP_DETAIL} ]] || STEP_DETAIL="bench_ops.py exited with ${status}; see torch-bench.log"
  return "${status}"
}

# step_torch_bench_fp8: tilepipe.scaled_mm against torch._scaled_mm (torch-bench-fp8.log and
# .json); the detail is its summary lines.
step_torch_bench_fp8() {
  local status=0
  install_package || { status=$?; [[ ${status} -eq 2 ]] && return 0; return "${status}"; }
  logged torch-bench-fp8.log env PYTHONPATH="${TORCH_SITE}" "${PYTHON}" python/bench/bench_fp8.py \
    --json "${LOGDIR}/torch-bench-fp8.json" || status=$?
  STEP_DETAIL=$(grep -E '^summary' "${LOGDIR}/torch-bench-fp8.log" | sed -E 's/^summary:? //' |
    paste -sd ';' -)
  [[ -n ${STEP_DETAIL} ]] || STEP_DETAIL="bench_fp8.py exited with ${status}; see torch-bench-fp8.log"
  return "${status}"
}

# step_torch_bench_grouped: tilepipe.grouped_mm against torch._grouped_mm, a loop of torch.mm and
# tilepipe's dense GEMM (torch-bench-grouped.log and .json); the detail is its summary lines.
step_torch_bench_grouped() {
  local status=0
  install_package || { status=$?; [[ ${status} -eq 2 ]] && return 0; return "${status}"; }
  logged torch-bench-grouped.log env PYTHONPATH="${TORCH_SITE}" "${PYTHON}" \
    python/bench/bench_grouped.py --json "${LOGDIR}/torch-bench-grouped.json" || status=$?
  STEP_DETAIL=$(grep -E '^summary: ' "${LOGDIR}/torch-bench-grouped.log" | sed 's/^summary: //' |
    paste -sd ';' -)
  [[ -n ${STEP_DETAIL} ]] ||
    STEP_DETAIL="bench_grouped.py exited with ${status}; see torch-bench-grouped.log"
  return "${status}"
}

# step_torch_bench_grouped_fp8: tilepipe.scaled_grouped_mm against torch._scaled_grouped_mm and
# tilepipe's dense FP8 GEMM (torch-bench-grouped-fp8.log and .json); the detail is its summary
# lines.
step_torch_bench_grouped_fp8() {
  local status=0
  install_package || { status=$?; [[ ${status} -eq 2 ]] && return 0; return "${status}"; }
  logged torch-bench-grouped-fp8.log env PYTHONPATH="${TORCH_SITE}" "${PYTHON}" \
    python/bench/bench_grouped_fp8.py --json "${LOGDIR}/torch-bench-grouped-fp8.json" || status=$?
  STEP_DETAIL=$(grep -E '^summary: ' "${LOGDIR}/torch-bench-grouped-fp8.log" |
    sed 's/^summary: //' | paste -sd ';' -)
  [[ -n ${STEP_DETAIL} ]] ||
    STEP_DETAIL="bench_grouped_fp8.py exited with ${status}; see torch-bench-grouped-fp8.log"
  return "${status}"
}

# step_bench: the benchmark (bench/gemm_bench, TILEPIPE_BENCH_ARGS added to its command line),
# its JSON (bench.json) and, where matplotlib imports, the f16 TN plot (bench-f16-tn.png). Its
# detail is GemmAuto's summary line; the tables are in bench.log.
step_bench() {
  local exe="build/${PRESET}/bench/gemm_bench" status=0
  if [[ ! -x ${exe} ]]; then
    STEP_DETAIL="${exe} was not built"
    return 1
  fi
  # shellcheck disable=SC2086  # TILEPIPE_BENCH_ARGS is a list of arguments
  logged bench.log "${exe}" --json "${LOGDIR}/bench.json" ${TILEPIPE_BENCH_ARGS:-} || status=$?
  STEP_DETAIL=$(grep -E '^summary: ' "${LOGDIR}/bench.log" | tail -n 1)
  [[ -n ${STEP_DETAIL} ]] || STEP_DETAIL="gemm_bench exited with ${status}; see bench.log"
  if [[ ${status} -eq 0 ]] && "${PYTHON}" -c 'import matplotlib' >/dev/null 2>&1; then
    logged plot.log "${PYTHON}" scripts/plot_bench.py "${LOGDIR}/bench.json" "${LOGDIR}/bench-f16-tn.png" ||
      STEP_DETAIL+=" (the plot failed: see plot.log)"
  fi
  return "${status}"
}

# ---- Summary ----------------------------------------------------------------------------------
gpu_name() {
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>/dev/null |
    sed 's/, / | CC /; s/, / | driver /' || true
}

print_summary() {
  local overall=PASS i
  for i in "${!STEP_NAMES[@]}"; do
    [[ ${STEP_RESULTS[i]} == PASS ]] || overall=FAIL
  done
  local gpu
  gpu=$(gpu_name)
  {
    echo
    echo "==================== tilepipe gpu_check summary ===================="
    echo "GPU:  ${gpu:-unknown (nvidia-smi gave nothing)}"
    echo "logs: ${LOGDIR}"
    for i in "${!STEP_NAMES[@]}"; do
      printf '  %-14s %-4s  %s\n' "${STEP_NAMES[i]}" "${STEP_RESULTS[i]}" "${STEP_DETAILS[i]}"
    done
    local fuzz
    fuzz=$(grep -h '\[\(fp8-\|grouped-\)\?fuzz\(-hopper\)\?\] [0-9]* problems' "${LOGDIR}/ctest-device.log" 2>/dev/null | sed 's/^[0-9]*: //' || true)
    [[ -z ${fuzz} ]] || echo "randomized: ${fuzz}"
    if [[ -n ${EXAMPLE_LINES} ]]; then
      echo "examples:"
      sed 's/^/  /' <<<"${EXAMPLE_LINES}"
    fi
    echo "OVERALL: ${overall}"
  } | tee "${LOGDIR}/summary.log"
  [[ ${overall} == PASS ]]
}

# ---- Main -------------------------------------------------------------------------------------
# selected NAME FUNCTION [ARGS...]: a step, unless TILEPIPE_GPU_CHECK_ONLY leaves it out.
selected() {
  [[ -z ${TILEPIPE_GPU_CHECK_ONLY:-} || $1 =~ ${TILEPIPE_GPU_CHECK_ONLY} ]] || return 0
  step "$@"
}

# Whether a step that needs the CMake build is selected (the torch steps do not need it).
cmake_steps_selected() {
  local name
  for name in ctest-host ctest-codegen ctest-device examples memcheck racecheck synccheck \
    initcheck bench; do
    [[ -z ${TILEPIPE_GPU_CHECK_ONLY:-} || ${name} =~ ${TILEPIPE_GPU_CHECK_ONLY} ]] && return 0
  done
  return 1
}

main() {
  step environment step_environment
  if cmake_steps_selected && step configure step_configure; then
    # A build that lacks the GPU's tier stops here, before anything is built or run.
    if ! step architectures step_architectures; then
      print_summary
      exit 1
    fi
    step build step_build && BUILD_OK=1
  fi
  selected ctest-host step_ctest host
  selected ctest-codegen step_ctest codegen
  selected ctest-device step_ctest device
  selected examples step_examples
  selected memcheck step_sanitizer memcheck
  selected racecheck step_sanitizer racecheck
  selected synccheck step_sanitizer synccheck
  selected initcheck step_sanitizer initcheck
  selected torch step_torch
  selected torch-bench step_torch_bench
  selected torch-bench-fp8 step_torch_bench_fp8
  selected torch-bench-grouped step_torch_bench_grouped
  selected torch-bench-grouped-fp8 step_torch_bench_grouped_fp8
  selected bench step_bench
  print_summary
}

main
