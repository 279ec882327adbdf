# wrappers/mpi.cmake - MPI tracing through PMPI (included by wrappers/CMakeLists.txt).
# libtracer.so is compiled against mpi.h only and never linked with libmpi:
# PMPI_* and the predefined handles are looked up at run time (mpi_sym.c).
if(NOT MPI_C_FOUND)
  message(STATUS "tracer: MPI not found, MPI wrappers not built")
  return()
endif()
find_file(TR_MPI_H mpi.h PATHS ${MPI_C_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(NOT TR_MPI_H)
  message(STATUS "tracer: mpi.h not found in ${MPI_C_INCLUDE_DIRS}, MPI wrappers not built")
  return()
endif()
set(_mpi_gen_c ${CMAKE_CURRENT_BINARY_DIR}/mpi_gen.c)
set(_mpi_gen_h ${CMAKE_CURRENT_BINARY_DIR}/mpi_gen.h)
set(_mpi_gen_f ${CMAKE_CURRENT_BINARY_DIR}/mpi_fgen.c)
add_custom_command(
  OUTPUT ${_mpi_gen_c} ${_mpi_gen_h} ${_mpi_gen_f}
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/gen-mpi-wrappers
          ${CMAKE_CURRENT_SOURCE_DIR}/mpi.spec ${TR_MPI_H} ${_mpi_gen_c} ${_mpi_gen_h} ${_mpi_gen_f}
  DEPENDS ${CMAKE_SOURCE_DIR}/scripts/gen-mpi-wrappers ${CMAKE_CURRENT_SOURCE_DIR}/mpi.spec ${TR_MPI_H}
  COMMENT "Generating MPI wrappers from wrappers/mpi.spec"
  VERBATIM)
set(_mpi_srcs ${_mpi_gen_c} ${_mpi_gen_f} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_core.c ${CMAKE_CURRENT_SOURCE_DIR}/mpi_req.c ${CMAKE_CURRENT_SOURCE_DIR}/mpi_sym.c
  ${CMAKE_CURRENT_SOURCE_DIR}/mpi_fortran.c)
target_sources(tr_wrappers PRIVATE ${_mpi_srcs} ${_mpi_gen_h})
set_source_files_properties(${_mpi_srcs} PROPERTIES
  INCLUDE_DIRECTORIES "${MPI_C_INCLUDE_DIRS}"
  OBJECT_DEPENDS ${_mpi_gen_h})
