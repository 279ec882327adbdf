# bench/openmp: empty parallel regions and omp lock pairs, built with clang
# (libomp, OMPT) and gcc (libgomp, GOMP_* wrappers); run by bench/openmp.sh.
find_program(TR_BENCH_CLANG NAMES clang clang-14)
foreach(cc clang gcc)
  if(cc STREQUAL "clang")
    set(_cc ${TR_BENCH_CLANG})
  elseif(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    set(_cc ${CMAKE_C_COMPILER})
  else()
    find_program(_cc gcc)
  endif()
  if(NOT _cc)
    continue()
  endif()
  set(_exe ${CMAKE_BINARY_DIR}/bench/bench_openmp_${cc})
  add_custom_command(OUTPUT ${_exe}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bench
    COMMAND ${_cc} -O2 -fopenmp ${CMAKE_CURRENT_LIST_DIR}/openmp_bench.c -o ${_exe}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/openmp_bench.c VERBATIM)
  add_custom_target(bench_openmp_${cc} ALL DEPENDS ${_exe})
endforeach()
