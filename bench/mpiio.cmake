# bench/mpiio: MPI-IO calls of 4 KiB (run by bench/mpiio.sh), for Open MPI
# (bench_mpiio_calls) and MPICH (bench_mpichio_calls) when present.
if(MPI_C_FOUND)
  add_executable(bench_mpiio_calls ${CMAKE_CURRENT_LIST_DIR}/mpiio_calls.c)
  target_link_libraries(bench_mpiio_calls PRIVATE MPI::MPI_C)
  set_target_properties(bench_mpiio_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
if(TARGET tr_mpi_prog_mpich)
  add_executable(bench_mpichio_calls ${CMAKE_CURRENT_LIST_DIR}/mpiio_calls.c)
  target_link_libraries(bench_mpichio_calls PRIVATE tr_mpi_prog_mpich)
  set_target_properties(bench_mpichio_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
