#!/usr/bin/env bash
# Installs CUTLASS's C++ headers (cute/ and cutlass/), for the benchmark's optional CUTLASS
# columns (TILEPIPE_BENCH_CUTLASS), into .tools/cutlass (git-ignored): they come from NVIDIA's
# `nvidia-cutlass` wheel on PyPI, which ships them under cutlass_library/source/include. Only that
# directory is unpacked; nothing is imported or installed into a Python environment. No root.
#
#   scripts/install_cutlass_headers.sh
#
# Afterwards CMake finds them in .tools/cutlass/cutlass_library/source/include (configure again if
# the build directory was configured before). A second run does nothing. Exit status non-zero if
# the headers could not be installed; the benchmark is then built without its CUTLASS columns.
# The headers are never committed.
#
# Environment: PYTHON (default python3), TILEPIPE_CUTLASS_DIR (default <repo>/.tools/cutlass).
set -euo pipefail

# CUTLASS 4.2.0, the release that supports CUDA 13.0. Pinned by hash (the wheel is pure Python,
# one file for every platform) so that every machine compiles the same peer kernels.
VERSION=4.2.0.0
REQUIREMENTS="
nvidia-cutlass==${VERSION} \
  --hash=sha256:f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6
"
INCLUDE_IN_WHEEL=cutlass_library/source/include

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DEST=${TILEPIPE_CUTLASS_DIR:-${PWD}/.tools/cutlass}
STAMP=${DEST}/installed.txt
PYTHON=${PYTHON:-python3}

if [[ -f ${DEST}/${INCLUDE_IN_WHEEL}/cutlass/version.h && "$(cat "${STAMP}" 2>/dev/null)" == "${VERSION}" ]]; then
  echo "[cutlass] CUTLASS ${VERSION} headers already in ${DEST}/${INCLUDE_IN_WHEEL}"
  exit 0
fi

# Unpack next to DEST and move into place only when complete, so that an interrupted run never
# leaves a half-installed directory that the check above would accept.
mkdir -p "$(dirname "${DEST}")"
tmp=$(mktemp -d "${DEST}.tmp.XXXXXX")
trap 'rm -rf "${tmp}"' EXIT
trap 'echo "[cutlass] could not install the CUTLASS headers (see above): the benchmark will be built without its CUTLASS columns" >&2' ERR
printf '%s' "${REQUIREMENTS}" >"${tmp}/requirements.txt"

echo "[cutlass] downloading nvidia-cutlass ${VERSION} (its headers only are kept) into ${DEST}"
PIP_ROOT_USER_ACTION=ignore "${PYTHON}" -m pip download --quiet --disable-pip-version-check --no-input \
  --timeout 30 --retries 2 --no-deps --only-binary=:all: --require-hashes \
  --dest "${tmp}/wheel" -r "${tmp}/requirements.txt"

"${PYTHON}" - "${tmp}/wheel" "${tmp}/dir" "${INCLUDE_IN_WHEEL}/" <<'EOF'
import glob, os, sys, zipfile
wheel_dir, out, prefix = sys.argv[1:]
(wheel,) = glob.glob(os.path.join(wheel_dir, "*.whl"))
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit(f"{wheel} has no {prefix}")
    z.extractall(out, names)
print(f"[cutlass] unpacked {len(names)} headers")
EOF

grep -q '#define CUTLASS_MAJOR 4' "${tmp}/dir/${INCLUDE_IN_WHEEL}/cutlass/version.h"
echo "${VERSION}" >"${tmp}/dir/installed.txt"

rm -rf "${DEST}"
mv "${tmp}/dir" "${DEST}"
echo "[cutlass] installed in ${DEST}/${INCLUDE_IN_WHEEL}"
