#!/usr/bin/env bash
# The compiler launcher of the CUTLASS peers (bench/CutlassPeers.cmake):
#
#   check_wgmma_serialization.sh NVCC ARGS...
#
# Runs the compile command, passes its output and status on, and fails it (removing the object
# file) when ptxas says it serialized wgmma instructions: "(C7510) Potential Performance Loss:
# wgmma.mma_async instructions are serialized due to ...". nvcc 13.0 prints that as "ptxas info",
# not as a warning, so --warning-as-error cannot catch it; it appears, for instance, when CUTLASS's
# SM90 kernels are built without -DNDEBUG (their device asserts become calls), and a peer whose
# tensor-core pipeline is serialized would make the comparison hollow.
set -uo pipefail

output=$("$@" 2>&1)
status=$?
[[ -z ${output} ]] || printf '%s\n' "${output}" >&2
if [[ ${status} -eq 0 ]] && grep -qE 'C7510|wgmma[.a-z_]* instructions are serialized' <<<"${output}"; then
  echo "error: ptxas serialized wgmma instructions (see above): this peer would not be CUTLASS at its speed. Build it as CUTLASS builds itself (Release, -DNDEBUG)." >&2
  previous=""
  for arg in "$@"; do
    [[ ${previous} == -o ]] && rm -f "${arg}"
    previous=${arg}
  done
  exit 1
fi
exit "${status}"
