#!/usr/bin/env bash
# Installs clang-format, the formatter that .clang-format configures and CI checks, into
# .tools/format (git-ignored) from the PyPI wheel. No root, no system LLVM.
#
#   scripts/install_format_tools.sh
#
# Afterwards scripts/format.sh and scripts/check_format.sh run
# .tools/format/clang_format/data/bin/clang-format.
# A second run does nothing. Exit status non-zero if the tool could not be installed.
#
# Environment: PYTHON (default python3), TILEPIPE_FORMAT_TOOLS_DIR (default <repo>/.tools/format).
set -euo pipefail

# One pinned version for everyone: clang-format's output changes between releases, so a
# different version would report (or make) changes that CI does not. Pinned by hash too
# (Linux x86_64 and aarch64 wheels).
VERSION=23.1.5
REQUIREMENTS="
clang-format==${VERSION} \
  --hash=sha256:d97ce49911ba8c89ef3f3c0735a9c7818e4780ab4812c67d1c5fcd829d16ae52 \
  --hash=sha256:e8037e12eae19a9779e01ca6719b8d7f6a939ade8869b061912551c9748a27ad
"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DEST=${TILEPIPE_FORMAT_TOOLS_DIR:-${PWD}/.tools/format}
# The binary itself, not the Python launcher that pip writes to bin/ (that one needs the package
# on PYTHONPATH).
BIN=${DEST}/clang_format/data/bin/clang-format
STAMP=${DEST}/installed.txt
PYTHON=${PYTHON:-python3}

if [[ -x ${BIN} && "$(cat "${STAMP}" 2>/dev/null)" == "${VERSION}" ]]; then
  echo "[format-tools] clang-format ${VERSION} already in ${BIN}"
  exit 0
fi

# Install next to DEST and move into place only when complete, so that an interrupted run
# never leaves a half-installed directory that the check above would accept.
mkdir -p "$(dirname "${DEST}")"
tmp=$(mktemp -d "${DEST}.tmp.XXXXXX")
trap 'rm -rf "${tmp}"' EXIT
trap 'echo "[format-tools] could not install clang-format ${VERSION} (see above)" >&2' ERR
printf '%s' "${REQUIREMENTS}" >"${tmp}/requirements.txt"

echo "[format-tools] installing clang-format ${VERSION} into ${DEST}"
PIP_ROOT_USER_ACTION=ignore "${PYTHON}" -m pip install --quiet --disable-pip-version-check \
  --no-input --timeout 30 --retries 2 --no-deps --only-binary=:all: --require-hashes \
  --target "${tmp}/dir" -r "${tmp}/requirements.txt"

# Fail here, not in the check, if the binary does not run on this machine.
"${tmp}/dir/clang_format/data/bin/clang-format" --version >/dev/null
echo "${VERSION}" >"${tmp}/dir/installed.txt"

rm -rf "${DEST}"
mv "${tmp}/dir" "${DEST}"
echo "[format-tools] installed in ${BIN}: $("${BIN}" --version)"
