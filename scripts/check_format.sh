#!/usr/bin/env bash
# CI's formatting check: fails (exit 1) if clang-format, at the version that
# scripts/install_format_tools.sh pins, would change any tracked C++ or CUDA source under
# include/, test/, example/, bench/ or python/, and lists those files. Exit 2 if the pinned
# clang-format cannot be installed: the check never passes unchecked. Fix with scripts/format.sh.
#
#   scripts/check_format.sh [FILE...]
exec bash "$(dirname "${BASH_SOURCE[0]}")/format.sh" --check "$@"
