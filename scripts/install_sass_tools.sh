#!/usr/bin/env bash
# Installs cuobjdump and nvdisasm, the two tools the codegen test needs to check SASS,
# into .tools/sass (git-ignored) from NVIDIA's PyPI wheels. No root, no CUDA install.
#
#   scripts/install_sass_tools.sh
#
# Afterwards CMake finds them in .tools/sass/nvidia/cu13/bin (configure again if the build
# directory was configured before). A second run does nothing. Exit status non-zero if the
# tools could not be installed; the codegen test then skips its SASS part.
#
# Environment: PYTHON (default python3), TILEPIPE_SASS_TOOLS_DIR (default <repo>/.tools/sass).
set -euo pipefail

# PyPI has no cu13 wheel older than 13.2 (none for 13.0): 13.2.51 is the oldest, the closest
# to the toolkit we build with. A disassembler only prints what ptxas produced, so the counts
# do not depend on its version (13.2.51 and 13.5.37 print identical SASS for our cubins).
# Pinned by hash too (Linux x86_64 and aarch64 wheels) so that CI's counts are reproducible.
VERSION=13.2.51
REQUIREMENTS="
nvidia-cuda-cuobjdump==${VERSION} \
  --hash=sha256:95c69d3ddf0c2c1f535ec44c3433a66aeee19f588d9d22f73356e20b25f12b50 \
  --hash=sha256:f2f3bc433a91f4ff910841f2de8bc9e7ce92556602d6e363054fe2bb62a587c4
nvidia-cuda-nvdisasm==${VERSION} \
  --hash=sha256:5a7acf77c55d6d2911ed6155d4d5bc156ffadf9df7a68a89b0c1155f4b13688c \
  --hash=sha256:483c8f652c1ca006135584b4faf7ea1d2bafe4c40ec1c9ef57a04c6acfbdd57f
"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DEST=${TILEPIPE_SASS_TOOLS_DIR:-${PWD}/.tools/sass}
BIN=${DEST}/nvidia/cu13/bin
STAMP=${DEST}/installed.txt
PYTHON=${PYTHON:-python3}

if [[ -x ${BIN}/cuobjdump && -x ${BIN}/nvdisasm && "$(cat "${STAMP}" 2>/dev/null)" == "${VERSION}" ]]; then
  echo "[sass-tools] cuobjdump and nvdisasm ${VERSION} already in ${BIN}"
  exit 0
fi

# Install next to DEST and move into place only when complete, so that an interrupted run
# never leaves a half-installed directory that the check above would accept.
mkdir -p "$(dirname "${DEST}")"
tmp=$(mktemp -d "${DEST}.tmp.XXXXXX")
trap 'rm -rf "${tmp}"' EXIT
trap 'echo "[sass-tools] could not install cuobjdump and nvdisasm (see above): the codegen test will skip its SASS checks" >&2' ERR
printf '%s' "${REQUIREMENTS}" >"${tmp}/requirements.txt"

echo "[sass-tools] installing nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm ${VERSION} into ${DEST}"
PIP_ROOT_USER_ACTION=ignore "${PYTHON}" -m pip install --quiet --disable-pip-version-check --no-input \
  --timeout 30 --retries 2 --no-deps --only-binary=:all: --require-hashes \
  --target "${tmp}/dir" -r "${tmp}/requirements.txt"

# Fail here, not in the test, if the binaries do not run on this machine.
"${tmp}/dir/nvidia/cu13/bin/cuobjdump" --version >/dev/null
"${tmp}/dir/nvidia/cu13/bin/nvdisasm" --version >/dev/null
echo "${VERSION}" >"${tmp}/dir/installed.txt"

rm -rf "${DEST}"
mv "${tmp}/dir" "${DEST}"
echo "[sass-tools] installed in ${BIN}: $("${BIN}/cuobjdump" --version | grep -m1 release)"
