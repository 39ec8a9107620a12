# The SASS part of check_codegen.cmake, which includes this file and calls check_sass() for
# each architecture's cubin. What it requires, forbids and counts is listed at the top of
# check_codegen.cmake; this file only knows how to read cuobjdump's output.

set(sass_tools OFF)
if(NOT CUOBJDUMP OR NOT EXISTS "${CUOBJDUMP}")
  message(STATUS "SASS checks skipped: cuobjdump not found (run scripts/install_sass_tools.sh, then configure again)")
elseif(NOT NVDISASM OR NOT EXISTS "${NVDISASM}")
  message(STATUS "SASS checks skipped: nvdisasm not found (run scripts/install_sass_tools.sh, then configure again)")
else()
  set(sass_tools ON)
  # cuobjdump --dump-sass runs the nvdisasm it finds on PATH.
  get_filename_component(nvdisasm_dir "${NVDISASM}" DIRECTORY)
  set(ENV{PATH} "${nvdisasm_dir}:$ENV{PATH}")
  # Kernels are shown, and picked for the baseline, by their demangled names.
  find_program(CXXFILT NAMES c++filt cu++filt)
endif()

# Splits cuobjdump's SASS into functions: <prefix>_names (mangled), <prefix>_indices (0..n-1)
# and <prefix>_ops_<i>, the opcodes of function i in order, predicate and operands stripped.
function(parse_sass prefix sass_file)
  file(READ "${sass_file}" sass)
  string(REPLACE ";" "," sass "${sass}")  # every instruction ends in ';', which splits lists
  string(REPLACE "Function : " ";" chunks "${sass}")
  list(POP_FRONT chunks)                  # what precedes the first function
  set(names "")
  set(indices "")
  set(i 0)
  foreach(chunk IN LISTS chunks)
    string(REGEX MATCH "^[^\n]+" name "${chunk}")
    string(STRIP "${name}" name)
    list(APPEND names "${name}")
    # An instruction line: /*0a30*/  [@!P0]  OPCODE.MODIFIERS operands ;
    string(REGEX MATCHALL "/\\*[0-9a-f]+\\*/ +(@!?U?P[0-9T] +)?[A-Z][A-Z0-9_.]*" ops "${chunk}")
    list(TRANSFORM ops REPLACE "^.* " "")
    set(${prefix}_ops_${i} "${ops}" PARENT_SCOPE)
    list(APPEND indices ${i})
    math(EXPR i "${i} + 1")
  endforeach()
  set(${prefix}_names "${names}" PARENT_SCOPE)
  set(${prefix}_indices "${indices}" PARENT_SCOPE)
endfunction()

# Demangled names without the parameter list (it repeats a kernel's template arguments).
function(demangle out names)
  if(CXXFILT)
    execute_process(COMMAND "${CXXFILT}" ${names} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
    string(STRIP "${text}" text)
    string(REPLACE "\n" ";" pretty "${text}")
    list(LENGTH names n)
    list(LENGTH pretty m)
    if(rc EQUAL 0 AND n EQUAL m)
      list(TRANSFORM pretty REPLACE "^void " "")
      list(TRANSFORM pretty REPLACE ">\\(.*\\)$" ">")
      set(names "${pretty}")
    endif()
  endif()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# How many opcodes of `ops` match `regex`, and which distinct ones.
function(count_opcodes count_var distinct_var ops regex)
  list(FILTER ops INCLUDE REGEX "${regex}")
  list(LENGTH ops n)
  list(REMOVE_DUPLICATES ops)
  list(JOIN ops " " distinct)
  set(${count_var} ${n} PARENT_SCOPE)
  set(${distinct_var} "${distinct}" PARENT_SCOPE)
endfunction()

# `text` right-aligned in `width` columns.
function(pad out text width)
  string(LENGTH "${text}" n)
  while(n LESS width)
    string(PREPEND text " ")
    math(EXPR n "${n} + 1")
  endwhile()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Checks ${base}.sass of sm_<arch> against REQUIRED_SASS, FORBIDDEN_SASS and the baseline,
# writes ${base}.sass_counts.txt; appends what fails to `failures` in the caller.
function(check_sass arch base)
  parse_sass(fn "${base}.sass")
  demangle(shown_names "${fn_names}")

  # ---- Opcodes, per function -------------------------------------------------------------
  set(table "instructions")
  set(rest ${SASS_COUNTS})
  while(rest)
    list(POP_FRONT rest name regex)
    pad(cell "${name}" 7)
    string(APPEND table "${cell}")
  endwhile()
  string(APPEND table "  kernel\n")
  set(kernels "")
  foreach(i IN LISTS fn_indices)
    list(GET fn_names ${i} name)
    list(GET shown_names ${i} shown)
    set(rest ${FORBIDDEN_SASS})
    while(rest)
      list(POP_FRONT rest what regex family)
      count_opcodes(count distinct "${fn_ops_${i}}" "${regex}")
      if(count GREATER 0)
        string(APPEND failures
          "  sm_${arch} SASS: ${shown} has ${count} instruction(s) of ${what}: ${distinct}\n"
          "    (see ${base}.sass)\n")
      endif()
    endwhile()
    if(NOT name MATCHES "${SASS_KERNELS}")
      continue()
    endif()

    list(APPEND kernels ${i})
    set(rest ${REQUIRED_SASS} ${REQUIRED_SASS_sm_${arch}})
    while(rest)
      list(POP_FRONT rest what regex family)
      count_opcodes(count distinct "${fn_ops_${i}}" "${regex}")
      if(count EQUAL 0)
        count_opcodes(count distinct "${fn_ops_${i}}" "${family}")
        if(count EQUAL 0)
          set(distinct "(none)")
        endif()
        string(APPEND failures
          "  sm_${arch} SASS: ${shown} has no ${what}\n"
          "    expected an opcode matching: ${regex}\n"
          "    its opcodes matching '${family}': ${distinct}\n")
      endif()
    endwhile()
    list(LENGTH fn_ops_${i} total)
    pad(row "${total}" 12)
    set(rest ${SASS_COUNTS})
    while(rest)
      list(POP_FRONT rest name regex)
      count_opcodes(count_${i}_${name} distinct "${fn_ops_${i}}" "${regex}")
      pad(cell "${count_${i}_${name}}" 7)
      string(APPEND row "${cell}")
    endwhile()
    string(APPEND table "${row}  ${shown}\n")
  endforeach()

  if(NOT kernels)
    list(JOIN shown_names "\n      " all)
    string(APPEND failures
      "  sm_${arch} SASS: no function name matches SASS_KERNELS (${SASS_KERNELS}); functions:\n"
      "      ${all}\n")
  else()
    file(WRITE "${base}.sass_counts.txt" "# SASS opcode counts, sm_${arch}, from ${base}.sass\n${table}")
    list(LENGTH fn_names n)
    message(STATUS "sm_${arch} SASS: ${n} function(s) checked for local memory, GEMM kernels for "
      "the required opcodes; counts (also in ${base}.sass_counts.txt):\n${table}")
  endif()

  # ---- Counts of the kernels that SASS_BASELINE_KERNELS names, against SASS_BASELINE --------
  if(NOT kernels OR NOT SASS_BASELINE)
    set(rest "")
  elseif(NOT CXXFILT)
    message(STATUS "sm_${arch} SASS baseline skipped: c++filt not found to demangle kernel names")
    set(rest "")
  else()
    set(rest ${SASS_BASELINE_KERNELS})
  endif()
  set(update_hint "If the change is intended, update the baseline file ${SASS_BASELINE}: run\n      TILEPIPE_UPDATE_SASS_BASELINE=1 ctest --test-dir <build> -L codegen\n    and commit it.")
  while(rest)
    list(POP_FRONT rest label regex)
    set(matches "")
    set(candidates "")
    foreach(i IN LISTS kernels)
      list(GET shown_names ${i} shown)
      string(APPEND candidates "\n      ${shown}")
      if(shown MATCHES "${regex}")
        list(APPEND matches ${i})
      endif()
    endforeach()
    list(LENGTH matches n_matches)
    if(NOT n_matches EQUAL 1)
      string(APPEND failures
        "  sm_${arch} SASS baseline: ${n_matches} kernels match ${label}'s regex instead of one; if "
        "kernels were renamed, update SASS_BASELINE_KERNELS in cmake/check_codegen.cmake\n"
        "    regex: ${regex}\n    kernels:${candidates}\n")
      continue()
    endif()
    list(GET shown_names ${matches} shown)

    if("$ENV{TILEPIPE_UPDATE_SASS_BASELINE}")
      set(line "${label} sm_${arch}")
      foreach(name IN LISTS SASS_BASELINE_COUNTS)
        string(APPEND line " ${name}=${count_${matches}_${name}}")
      endforeach()
      # Both architectures' tests may rewrite the file at once under ctest -j.
      file(LOCK "${OUTPUT_DIR}/sass_baseline.lock" TIMEOUT 120)
      file(READ "${SASS_BASELINE}" text)
      if(text MATCHES "(^|\n)${label} +sm_${arch} ")
        string(REGEX REPLACE "(^|\n)${label} +sm_${arch} [^\n]*" "\\1${line}  # ${shown}" text "${text}")
      else()
        string(APPEND text "${line}  # ${shown}\n")
      endif()
      file(WRITE "${SASS_BASELINE}" "${text}")
      file(LOCK "${OUTPUT_DIR}/sass_baseline.lock" RELEASE)
      message(STATUS "sm_${arch} SASS baseline updated in ${SASS_BASELINE}: ${line}")
      continue()
    endif()

    file(STRINGS "${SASS_BASELINE}" recorded REGEX "^${label} +sm_${arch} ")
    foreach(name IN LISTS SASS_BASELINE_COUNTS)
      set(now ${count_${matches}_${name}})
      if(NOT recorded MATCHES " ${name}=([0-9]+)")
        string(APPEND failures
          "  sm_${arch} SASS baseline: ${SASS_BASELINE} has no ${name} count for ${label} on sm_${arch}.\n"
          "    ${update_hint}\n")
        continue()
      endif()
      set(then ${CMAKE_MATCH_1})
      math(EXPR slack "${then} * ${SASS_BASELINE_TOLERANCE} / 100")
      math(EXPR low "${then} - ${slack}")
      math(EXPR high "${then} + ${slack}")
      if(now LESS low OR now GREATER high)
        string(APPEND failures
          "  sm_${arch} SASS baseline: ${label} has ${name}=${now}, the baseline says ${then} "
          "(${SASS_BASELINE_TOLERANCE}% tolerance: ${low} to ${high})\n"
          "    kernel: ${shown}\n"
          "    ${update_hint}\n")
      else()
        message(STATUS "sm_${arch} SASS baseline ok: ${label} ${name}=${now} (baseline ${then})")
      endif()
    endforeach()
  endwhile()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()
