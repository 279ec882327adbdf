# tools/tracer-merge: one archive out of the per-rank archives of an MPI run
# that ended without MPI_Finalize. Reads and writes with the reference libotf2.
find_library(TR_OTF2_LIB otf2)
find_path(TR_OTF2_INC otf2/otf2.h)
if(TR_OTF2_LIB AND TR_OTF2_INC)
  add_executable(tracer-merge ${CMAKE_CURRENT_LIST_DIR}/tracer-merge.c)
  target_include_directories(tracer-merge PRIVATE ${TR_OTF2_INC})
  target_link_libraries(tracer-merge PRIVATE ${TR_OTF2_LIB})
  set_target_properties(tracer-merge PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
else()
  message(STATUS "tracer: libotf2 not found, tracer-merge not built")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/tracer-mpirun ${CMAKE_BINARY_DIR}/bin/tracer-mpirun COPYONLY)
