# tools/tracer-run: launcher (scripts/tracer-run execs it): preloads
# libtracer.so, waits for the whole process tree (child subreaper), prints
# the run's summary once, ends like the program.
add_executable(tracer-run ${CMAKE_CURRENT_LIST_DIR}/tracer-run.c ${TR_RECOVER_SRC}
  ${CMAKE_SOURCE_DIR}/preload/archive/fsutil.c)
target_include_directories(tracer-run PRIVATE ${TR_PRELOAD_INCLUDES})
target_link_libraries(tracer-run PRIVATE otf2r otf2w_stage otf2w_libc PkgConfig::LIBDW)   # preload/archive/fsutil.c calls through otf2w_sys
set_target_properties(tracer-run PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
