# wrappers/mpi/mpi.cmake - MPI tracing through PMPI (included by wrappers/CMakeLists.txt).
#
# One libtracer.so for every MPI ABI found at build time (docs/mpi.md):
#   ompi   Open MPI 4.1 (handles are pointers)   mpicc.openmpi -showme:compile
#   mpich  MPICH 4.0 and its ABI family (ints)   mpicc.mpich -show
# (else the mpi.h of find_package(MPI), by its content). The MPI layer is
# generated from wrappers/mpi/mpi.spec and compiled once per ABI against that
# MPI's mpi.h (object library tr_mpi_<abi>), then joined and renamed by
# scripts/gen-mpi-wrappers --link (mpi_<abi>.o: only its entry points and
# descriptor stay global) next to mpi_disp.c, the entry points defined once
# with their run-time dispatch (mpi_abi.c). libtracer.so is compiled
# against mpi.h only and never linked with libmpi: PMPI_* and the
# predefined handles are looked up at run time (mpi_sym.c).
if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  message(STATUS "tracer: MPI trampolines are x86-64 only, MPI wrappers not built")
  return()
endif()

# -I directories of a wrapper compiler's compile line
function(tr_mpi_incdirs out)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE _line ERROR_QUIET RESULT_VARIABLE _rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(_dirs "")
  if(_rc EQUAL 0)
    separate_arguments(_args UNIX_COMMAND "${_line}")
    foreach(a ${_args})
      if(a MATCHES "^-I(.+)")
        list(APPEND _dirs ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endif()
  set(${out} "${_dirs}" PARENT_SCOPE)
endfunction()

set(TR_MPI_ABIS "")
find_program(TR_MPICC_OMPI mpicc.openmpi)
find_program(TR_MPICC_MPICH mpicc.mpich)
set(_cands "")
if(TR_MPICC_OMPI)
  tr_mpi_incdirs(_inc_ompi ${TR_MPICC_OMPI} -showme:compile)
  list(APPEND _cands ompi)
endif()
if(TR_MPICC_MPICH)
  tr_mpi_incdirs(_inc_mpich ${TR_MPICC_MPICH} -show)
  list(APPEND _cands mpich)
endif()
if(MPI_C_FOUND)
  set(_inc_default ${MPI_C_INCLUDE_DIRS})
  list(APPEND _cands default)
endif()
foreach(c ${_cands})
  find_file(_h mpi.h PATHS ${_inc_${c}} NO_DEFAULT_PATH NO_CACHE)
  if(NOT _h)
    continue()
  endif()
  file(STRINGS ${_h} _ompi REGEX "define OPEN_MPI ")
  file(STRINGS ${_h} _mpich REGEX "define MPICH_VERSION ")
  set(_abi "")
  if(_ompi)
    set(_abi ompi)
    set(_what "Open MPI")
  elseif(_mpich)
    set(_abi mpich)
    set(_what "MPICH")
  endif()
  if(_abi AND NOT _abi IN_LIST TR_MPI_ABIS)
    list(APPEND TR_MPI_ABIS ${_abi})
    set(TR_MPI_H_${_abi} ${_h})
    set(TR_MPI_INC_${_abi} ${_inc_${c}})
    set(TR_MPI_WHAT_${_abi} "${_what}")
  endif()
  unset(_h)
endforeach()
if(NOT TR_MPI_ABIS)
  message(STATUS "tracer: no Open MPI or MPICH mpi.h found, MPI wrappers not built")
  return()
endif()
message(STATUS "tracer: MPI ABIs: ${TR_MPI_ABIS}")
set(TR_MPI_ABIS ${TR_MPI_ABIS} PARENT_SCOPE)

# tr_mpi_prog_mpich: how tests and benchmarks build an MPICH program
# (mpicc.mpich -show: "gcc <flags> -I<inc> -L<dir> -lmpich")
if(TR_MPICC_MPICH AND "mpich" IN_LIST TR_MPI_ABIS AND NOT TARGET tr_mpi_prog_mpich)
  execute_process(COMMAND ${TR_MPICC_MPICH} -show OUTPUT_VARIABLE _line OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(_args UNIX_COMMAND "${_line}")
  list(REMOVE_AT _args 0)
  add_library(tr_mpi_prog_mpich INTERFACE)
  foreach(a ${_args})
    if(a MATCHES "^-I(.+)")
      target_include_directories(tr_mpi_prog_mpich INTERFACE ${CMAKE_MATCH_1})
    elseif(a MATCHES "^-l")
      target_link_libraries(tr_mpi_prog_mpich INTERFACE ${a})
    else()
      target_link_options(tr_mpi_prog_mpich INTERFACE ${a})
    endif()
  endforeach()
  # MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) trips gcc's -Wstringop-overflow
  target_compile_options(tr_mpi_prog_mpich INTERFACE -Wno-stringop-overflow)
endif()

set(_gen ${CMAKE_SOURCE_DIR}/scripts/gen-mpi-wrappers)
set(_spec ${CMAKE_CURRENT_LIST_DIR}/mpi.spec)
set(_link_args "")
set(_link_deps "")
foreach(abi ${TR_MPI_ABIS})
  set(_d ${CMAKE_CURRENT_BINARY_DIR}/mpi_${abi})
  file(MAKE_DIRECTORY ${_d})
  set(_srcs ${_d}/mpi_gen.c ${CMAKE_CURRENT_LIST_DIR}/mpi_core.c ${CMAKE_CURRENT_LIST_DIR}/mpi_req.c
    ${CMAKE_CURRENT_LIST_DIR}/mpi_sym.c ${CMAKE_CURRENT_LIST_DIR}/mpi_io.c
    ${CMAKE_CURRENT_LIST_DIR}/mpi_cut.c ${CMAKE_CURRENT_LIST_DIR}/mpi_unify.c)
  set(_outs ${_d}/mpi_gen.c ${_d}/mpi_gen.h)
  # Open MPI's Fortran bindings call PMPI_* directly: own Fortran entry
  # points. MPICH's (libmpichfort) call the C MPI_* functions, which the C
  # wrappers already trace.
  if(abi STREQUAL ompi)
    list(APPEND _outs ${_d}/mpi_fgen.c)
    list(APPEND _srcs ${_d}/mpi_fgen.c ${CMAKE_CURRENT_LIST_DIR}/mpi_fortran.c)
  else()
    # but its mpi_f08 bindings call PMPI_*: Init/Finalize brackets
    list(APPEND _srcs ${CMAKE_CURRENT_LIST_DIR}/mpi_f08_mpich.c)
  endif()
  add_custom_command(
    OUTPUT ${_outs}
    COMMAND ${Python3_EXECUTABLE} ${_gen} ${_spec} ${TR_MPI_H_${abi}} ${_outs}
    DEPENDS ${_gen} ${_spec} ${TR_MPI_H_${abi}}
    COMMENT "Generating the ${TR_MPI_WHAT_${abi}} MPI wrappers from wrappers/mpi/mpi.spec"
    VERBATIM)
  add_library(tr_mpi_${abi} OBJECT ${_srcs})
  # (MPI-IO records its handles with the I/O family's functions: io/io_int.h)
  target_include_directories(tr_mpi_${abi} PRIVATE ${_d} ${TR_MPI_INC_${abi}} ${CMAKE_SOURCE_DIR}/preload/core ${CMAKE_SOURCE_DIR}/preload/defs
    ${CMAKE_SOURCE_DIR}/format ${CMAKE_BINARY_DIR}/format ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/../io)
  target_compile_definitions(tr_mpi_${abi} PRIVATE _GNU_SOURCE TR_MPI_ABI=${abi} "TR_MPI_ABI_WHAT=\"${TR_MPI_WHAT_${abi}}\"")
  add_dependencies(tr_mpi_${abi} otf2w)
  set_source_files_properties(${_srcs} PROPERTIES OBJECT_DEPENDS ${_d}/mpi_gen.h)
  list(APPEND _link_args ${abi} $<TARGET_OBJECTS:tr_mpi_${abi}> --)
  list(APPEND _link_deps tr_mpi_${abi} $<TARGET_OBJECTS:tr_mpi_${abi}>)
  list(APPEND _link_outs ${CMAKE_CURRENT_BINARY_DIR}/mpi_${abi}.o)
endforeach()
if(NOT CMAKE_READELF)
  find_program(CMAKE_READELF readelf)
endif()
set(_b ${CMAKE_CURRENT_BINARY_DIR})
add_custom_command(
  OUTPUT ${_b}/mpi_disp.c ${_b}/mpi_disp.h ${_link_outs}
  COMMAND ${Python3_EXECUTABLE} ${_gen} --link ${_b} ${CMAKE_LINKER} ${CMAKE_OBJCOPY} ${CMAKE_READELF} ${_link_args}
  DEPENDS ${_gen} ${_link_deps}
  COMMENT "Linking the MPI layers (${TR_MPI_ABIS}) and their entry points"
  COMMAND_EXPAND_LISTS VERBATIM)
target_sources(tr_wrappers PRIVATE ${_b}/mpi_disp.c ${CMAKE_CURRENT_LIST_DIR}/mpi_abi.c)
# the generated dispatcher and mpi_abi.c: this family's headers, and the I/O family's (io_int.h, via mpi_int.h)
set_source_files_properties(${_b}/mpi_disp.c ${CMAKE_CURRENT_LIST_DIR}/mpi_abi.c PROPERTIES
  INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR};${CMAKE_CURRENT_LIST_DIR}/../io")
# the joined objects go straight into libtracer.so (an object library
# cannot carry external objects): see the top CMakeLists.txt
set_property(GLOBAL APPEND PROPERTY TR_EXTRA_OBJECTS ${_link_outs})
set_source_files_properties(${_b}/mpi_disp.c ${CMAKE_CURRENT_LIST_DIR}/mpi_abi.c PROPERTIES
  OBJECT_DEPENDS ${_b}/mpi_disp.h)
