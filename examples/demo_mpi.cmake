# examples/demo_mpi: a small MPI program (halo exchange, Allreduce, Comm_split, RMA).
if(MPI_C_FOUND)
  add_executable(tr_demo_mpi ${CMAKE_CURRENT_LIST_DIR}/demo_mpi.c)
  target_link_libraries(tr_demo_mpi PRIVATE MPI::MPI_C m)
  set_target_properties(tr_demo_mpi PROPERTIES OUTPUT_NAME demo_mpi
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/examples)
endif()
