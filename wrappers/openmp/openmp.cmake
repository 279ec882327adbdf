# OpenMP (TRACER_OPENMP): LLVM libomp through OMPT (ompt_start_tool exported),
# GCC libgomp through its GOMP_* entry points; shared records in openmp.c.
target_sources(tr_wrappers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/openmp.c
  ${CMAKE_CURRENT_LIST_DIR}/openmp_ompt.c
  ${CMAKE_CURRENT_LIST_DIR}/openmp_gomp.c
  ${CMAKE_CURRENT_LIST_DIR}/openmp_gomp_sync.c)
