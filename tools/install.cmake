# The installed tree (cmake --install --prefix P) and the Debian package
# (cpack -G DEB, run in the build directory):
#   BINDIR      tracer, tracer-run, tracer-merge, tracer-mpirun
#   LIBDIR      libtracer.so (the commands find it by TR_BIN_TO_LIB, it finds
#               them by TR_LIB_TO_BIN: any prefix, no environment variable)
#   INCLUDEDIR  VT.h (wrappers/vt/vt.cmake); LIBDIR/pkgconfig/tracer.pc
#   MANDIR/man1 one page per command, made by help2man from its --help
#   DOCDIR      README.md, docs/*.md, copyright
install(TARGETS tracer_cmd tracer-run tracer-merge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${CMAKE_BINARY_DIR}/bin/tracer-mpirun DESTINATION ${CMAKE_INSTALL_BINDIR})

# pkg-config: programs that call the VT_* API (cc app.c $(pkg-config --cflags
# --libs tracer)); paths relative to the file, so any prefix works
file(RELATIVE_PATH TR_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/+$" "" TR_PC_TO_PREFIX "${TR_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/tracer.pc.in ${CMAKE_BINARY_DIR}/tracer.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tracer.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_CURRENT_LIST_DIR}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB _docs ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# Manual pages: help2man runs each built command's --help and --version
# (scripts/gen-man; `tracer` also gets every subcommand's --help).
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(_man_tracer "one command for the tracer's tools (run, report, convert, diff, merge, recover)")
  set(_man_tracer_subs report convert diff recover)
  set(_man_tracer-run "record a program and every process it starts into one OTF2 archive")
  set(_man_tracer-merge "make one OTF2 archive of an MPI run's ranks or a process tree's parts")
  set(_man_tracer-mpirun "mpirun with libtracer.so preloaded into every rank")
  set(_pages)
  foreach(cmd tracer tracer-run tracer-merge tracer-mpirun)
    set(_page ${CMAKE_BINARY_DIR}/man/${cmd}.1.gz)
    set(_dep ${cmd})
    if(cmd STREQUAL "tracer")
      set(_dep tracer_cmd)
    elseif(cmd STREQUAL "tracer-mpirun")
      set(_dep ${CMAKE_BINARY_DIR}/bin/tracer-mpirun)
    endif()
    add_custom_command(OUTPUT ${_page}
      COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/gen-man ${HELP2MAN} ${CMAKE_BINARY_DIR}/bin/${cmd} ${_page}
              "${_man_${cmd}}" ${_man_${cmd}_subs}
      DEPENDS ${_dep} ${CMAKE_SOURCE_DIR}/scripts/gen-man
      COMMENT "Generating the manual page ${cmd}.1"
      VERBATIM)
    list(APPEND _pages ${_page})
  endforeach()
  add_custom_target(tr_man ALL DEPENDS ${_pages})
  install(FILES ${_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(WARNING "help2man not found: no manual pages (scripts/install-deps installs it)")
endif()

# The Debian package (cpack -G DEB in the build directory, after the
# build: cpack's "preinstall" step builds nothing, so packaging never
# rebuilds a tree whose tests may be running).
# dpkg-shlibdeps finds what the binaries link (libc6,
# zlib1g); the libraries libtracer.so opens at run time for sampling and
# metrics (libunwind, libdw, PAPI: sampling/CMakeLists.txt) are added by the
# package that holds each. MPI is not a dependency: the MPI layer is chosen
# at run time by the library the program itself loads.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tracer)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "LD_PRELOAD tracer writing OTF2 archives")
set(CPACK_PACKAGE_CONTACT "tracer developers <tracer@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "LD_PRELOAD tracer writing OTF2 archives
 libtracer.so records what an unmodified program does (pthread, MPI, POSIX
 and stdio I/O, MPI-IO, OpenMP, the VT_* API, call-stack samples, PAPI and
 rusage metrics) and writes a standard OTF2 3.0 archive that otf2-print,
 Vampir, ViTE and the otf2 Python bindings read. tracer-run records a whole
 process tree into one archive; tracer reports, converts and recovers.")
set(_deps)
get_property(_dlopened GLOBAL PROPERTY TR_DLOPENED_LIBS)
find_program(DPKG_QUERY dpkg-query)
foreach(_so ${_dlopened})
  get_filename_component(_real ${_so} REALPATH)
  if(DPKG_QUERY)
    execute_process(COMMAND ${DPKG_QUERY} -S ${_real} OUTPUT_VARIABLE _o ERROR_QUIET)
    string(REGEX MATCH "^([^:,]+)" _pkg "${_o}")
    if(_pkg)
      list(APPEND _deps ${_pkg})
    endif()
  endif()
endforeach()
string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${_deps}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "otf2-tools")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "openmpi-bin | mpich, vite")
include(CPack)
