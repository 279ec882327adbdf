# tools/tracer: the `tracer` command (run, report, convert, merge, recover),
# reading archives with our own reader (format/otf2r).
find_package(ZLIB)
add_executable(tracer_cmd ${CMAKE_CURRENT_LIST_DIR}/tracer.c ${CMAKE_CURRENT_LIST_DIR}/report.c
  ${CMAKE_CURRENT_LIST_DIR}/report_text.c ${CMAKE_CURRENT_LIST_DIR}/report_mpi.c ${CMAKE_CURRENT_LIST_DIR}/report_io.c
  ${CMAKE_CURRENT_LIST_DIR}/report_html.c ${CMAKE_CURRENT_LIST_DIR}/report_html_lod.c ${CMAKE_CURRENT_LIST_DIR}/report_bins.c
  ${CMAKE_CURRENT_LIST_DIR}/report_util.c ${CMAKE_CURRENT_LIST_DIR}/report_samples.c
  ${CMAKE_CURRENT_LIST_DIR}/report_diff.c ${CMAKE_CURRENT_LIST_DIR}/report_select.c
  ${CMAKE_CURRENT_LIST_DIR}/report_metric.c ${CMAKE_CURRENT_LIST_DIR}/report_wait.c
  ${CMAKE_CURRENT_LIST_DIR}/report_pairs.c ${CMAKE_CURRENT_LIST_DIR}/report_path.c
  ${CMAKE_CURRENT_LIST_DIR}/report_callers.c ${CMAKE_CURRENT_LIST_DIR}/report_locks.c
  ${CMAKE_CURRENT_LIST_DIR}/convert.c ${CMAKE_CURRENT_LIST_DIR}/convert_pprof.c ${TR_RECOVER_SRC})
target_compile_definitions(tracer_cmd PRIVATE _GNU_SOURCE)
target_include_directories(tracer_cmd PRIVATE ${CMAKE_SOURCE_DIR}/preload/defs)   # tr_defs.h (recover_syms.c)
# libdw: the names of static locks from the traced objects (report_locks.c, objsyms.c)
target_link_libraries(tracer_cmd PRIVATE otf2r otf2w_stage otf2w_libc PkgConfig::LIBDW)
if(ZLIB_FOUND)
  target_compile_definitions(tracer_cmd PRIVATE TRACER_HAVE_ZLIB)
  target_link_libraries(tracer_cmd PRIVATE ZLIB::ZLIB)
endif()
set_target_properties(tracer_cmd PROPERTIES OUTPUT_NAME tracer
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
