# tools/tracer-merge: one archive out of the per-rank archives of an MPI run
# that ended without MPI_Finalize. Our own code only (no libotf2): the
# definition code of the core that knows no process (preload/defs/tr_defs.h:
# sets, packing, merge, maps, unified global definitions) compiled into the
# tool, the format/ writer (otf2w).
set(TR_DEFSET_SRC ${CMAKE_SOURCE_DIR}/preload/defs/defset.c ${CMAKE_SOURCE_DIR}/preload/defs/defs_write.c
  ${CMAKE_SOURCE_DIR}/preload/defs/defs_pack.c ${CMAKE_SOURCE_DIR}/preload/defs/defs_unify.c)
add_executable(tracer-merge ${CMAKE_CURRENT_LIST_DIR}/tracer-merge.c ${CMAKE_CURRENT_LIST_DIR}/merge_parts.c ${TR_DEFSET_SRC}
  ${CMAKE_SOURCE_DIR}/preload/archive/fsutil.c ${TR_RECOVER_SRC})
target_include_directories(tracer-merge PRIVATE ${TR_PRELOAD_INCLUDES} ${CMAKE_BINARY_DIR}/preload)
add_dependencies(tracer-merge tr_defs_gen)
target_compile_definitions(tracer-merge PRIVATE _GNU_SOURCE)
target_link_libraries(tracer-merge PRIVATE otf2r otf2w otf2w_libc PkgConfig::LIBDW)
set_target_properties(tracer-merge PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
# tracer-mpirun: the script with the installed tree's paths and the version
configure_file(${CMAKE_CURRENT_LIST_DIR}/tracer-mpirun ${CMAKE_BINARY_DIR}/bin/tracer-mpirun @ONLY)
