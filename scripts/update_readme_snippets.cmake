# Rewrites the C++ blocks of README.md from the source regions they copy (how they are marked:
# cmake/readme_snippets.cmake):
#
#   cmake -P scripts/update_readme_snippets.cmake
#
# Run it after changing a marked region; the host test readme_snippets fails until then.
set(UPDATE ON)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/readme_snippets.cmake")
