# Package test driver: proves that a separate CMake project can consume tilepipe.
#
#   MODE=add_subdirectory  consumer does add_subdirectory(<tilepipe source tree>)
#   MODE=build_tree        consumer does find_package(tilepipe CONFIG), tilepipe_DIR = build tree
#   MODE=install           `cmake --install` of the build tree into WORK_DIR/prefix, then
#                          find_package(tilepipe CONFIG) with CMAKE_PREFIX_PATH = that prefix
#
# Then configures and builds test/package/consumer in WORK_DIR/build (no GPU needed).
# Run by ctest (see test/CMakeLists.txt) as: cmake -DMODE=... -P run_package_test.cmake

foreach(var IN ITEMS MODE TILEPIPE_SOURCE_DIR TILEPIPE_BINARY_DIR TILEPIPE_VERSION WORK_DIR
                     GENERATOR CUDA_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_package_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(consumer_dir "${CMAKE_CURRENT_LIST_DIR}/consumer")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run step)
  list(JOIN ARGN " " shown)
  message(STATUS "[package.${MODE}] ${step}: ${shown}")
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  file(WRITE "${WORK_DIR}/${step}.log" "${shown}\n\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[package.${MODE}] ${step} failed (exit ${rc}):\n${out}")
  endif()
endfunction()

set(config_args
  "-DTILEPIPE_CONSUMER_MODE=${MODE}"
  "-DTILEPIPE_EXPECTED_VERSION=${TILEPIPE_VERSION}"
  "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}"
  # One architecture keeps CI fast.
  "-DCMAKE_CUDA_ARCHITECTURES=80"
  # Only what this test points at may be found.
  "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF")
if(CONFIG)
  list(APPEND config_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
if(MAKE_PROGRAM)
  list(APPEND config_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND config_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CUDA_HOST_COMPILER)
  list(APPEND config_args "-DCMAKE_CUDA_HOST_COMPILER=${CUDA_HOST_COMPILER}")
endif()

if(MODE STREQUAL "add_subdirectory")
  list(APPEND config_args "-DTILEPIPE_SOURCE_DIR=${TILEPIPE_SOURCE_DIR}")
  set(expected_dir "")
elseif(MODE STREQUAL "build_tree")
  list(APPEND config_args "-Dtilepipe_DIR=${TILEPIPE_BINARY_DIR}")
  set(expected_dir "${TILEPIPE_BINARY_DIR}")
elseif(MODE STREQUAL "install")
  set(install_args "")
  if(CONFIG)
    set(install_args --config "${CONFIG}")
  endif()
  run(install "${CMAKE_COMMAND}" --install "${TILEPIPE_BINARY_DIR}" --prefix "${prefix}" ${install_args})
  if(NOT EXISTS "${prefix}/include/tilepipe/version.cuh")
    message(FATAL_ERROR "[package.install] the install did not put include/tilepipe/version.cuh into ${prefix}")
  endif()
  list(APPEND config_args "-DCMAKE_PREFIX_PATH=${prefix}")
  set(expected_dir "${prefix}/")  # a prefix of the directory it must come from
else()
  message(FATAL_ERROR "run_package_test.cmake: unknown MODE '${MODE}'")
endif()

run(configure "${CMAKE_COMMAND}" -S "${consumer_dir}" -B "${build}" -G "${GENERATOR}" ${config_args})

# find_package must have used the tilepipe this test pointed at.
if(expected_dir)
  file(STRINGS "${build}/CMakeCache.txt" found_dir REGEX "^tilepipe_DIR:")
  string(REGEX REPLACE "^tilepipe_DIR:[A-Z]+=" "" found_dir "${found_dir}")
  string(FIND "${found_dir}/" "${expected_dir}" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "[package.${MODE}] find_package(tilepipe) used '${found_dir}', expected it under '${expected_dir}'")
  endif()
  message(STATUS "[package.${MODE}] tilepipe_DIR = ${found_dir}")
endif()

run(build "${CMAKE_COMMAND}" --build "${build}")
message(STATUS "[package.${MODE}] the consumer configured and built")
