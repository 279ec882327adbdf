# bench/mpi: MPI ping-pong latency and MPI_Finalize time (run by bench/mpi.sh).
if(MPI_C_FOUND)
  foreach(b mpi_pingpong mpi_finalize)
    add_executable(bench_${b} ${CMAKE_CURRENT_LIST_DIR}/${b}.c)
    target_link_libraries(bench_${b} PRIVATE MPI::MPI_C)
    set_target_properties(bench_${b} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  endforeach()
endif()
