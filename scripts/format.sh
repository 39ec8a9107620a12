#!/usr/bin/env bash
# Formats tilepipe's C++ and CUDA sources with the pinned clang-format and .clang-format.
#
#   scripts/format.sh                 format every tracked source in place
#   scripts/format.sh FILE...         format only these files
#   scripts/format.sh --check [FILE...]
#                                     change nothing; list the files that are not formatted, show
#                                     what would change, exit 1 if any (scripts/check_format.sh)
#
# The sources are the files git tracks under include/, test/, example/, bench/ and python/ that
# end in .cu, .cuh, .cpp, .hpp or .h. The clang-format that scripts/install_format_tools.sh pins is
# installed first (a second run does nothing); another version may format differently, so no
# other one is used. Exit status 2 if it cannot be installed or fails to run.
set -euo pipefail

check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
# FILE arguments are relative to where the script was called from; it works at the repo root.
files=()
for f in "$@"; do [[ ${f} == /* ]] && files+=("${f}") || files+=("${PWD}/${f}"); done
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! bash scripts/install_format_tools.sh >&2; then
  echo "[format] ERROR: the pinned clang-format could not be installed (see above), so the" \
    "formatting was not checked or applied. scripts/install_format_tools.sh needs python3 with" \
    "pip and access to PyPI." >&2
  exit 2
fi
CLANG_FORMAT=${TILEPIPE_FORMAT_TOOLS_DIR:-${PWD}/.tools/format}/clang_format/data/bin/clang-format
STYLE=--style=file:${PWD}/.clang-format

if [[ ${#files[@]} -eq 0 ]]; then
  while IFS= read -r -d '' f; do files+=("${f}"); done < <(
    git ls-files -z -- include test example bench python | grep -zE '\.(cu|cuh|cpp|hpp|h)$')
fi
[[ ${#files[@]} -gt 0 ]] || { echo "[format] ERROR: no source files found" >&2; exit 2; }

if [[ ${check} -eq 0 ]]; then
  printf '%s\0' "${files[@]}" | xargs -0 "${CLANG_FORMAT}" "${STYLE}" -i
  echo "[format] formatted ${#files[@]} files with $("${CLANG_FORMAT}" --version)"
  exit 0
fi

# --dry-run -Werror fails a file that clang-format would change; any other error (a file that
# cannot be read, a bad .clang-format) is a failure of the check itself, not of the file.
unformatted=()
for f in "${files[@]}"; do
  if ! out=$("${CLANG_FORMAT}" "${STYLE}" --dry-run -Werror --ferror-limit=1 "${f}" 2>&1); then
    if [[ ${out} == *clang-format-violations* ]]; then
      unformatted+=("${f}")
    else
      printf '%s\n[format] ERROR: clang-format failed on %s\n' "${out}" "${f}" >&2
      exit 2
    fi
  fi
done

if [[ ${#unformatted[@]} -eq 0 ]]; then
  echo "[format] ${#files[@]} files checked: all formatted ($("${CLANG_FORMAT}" --version))"
  exit 0
fi
echo "[format] ${#unformatted[@]} of ${#files[@]} files are not formatted as .clang-format says:"
printf '  %s\n' "${unformatted[@]}"
changes=$(for f in "${unformatted[@]}"; do
  "${CLANG_FORMAT}" "${STYLE}" "${f}" | diff -u --label "${f}" --label "${f} (formatted)" "${f}" -
done || true)
lines=$(wc -l <<<"${changes}")
shown=$([[ ${lines} -gt 200 ]] && echo " (the first 200 of ${lines} lines)" || true)
echo "[format] what clang-format would change${shown}:"
head -n 200 <<<"${changes}"
echo "[format] run scripts/format.sh to format them, then commit the result." >&2
exit 1
