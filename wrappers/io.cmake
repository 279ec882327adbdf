# I/O interposition (TRACER_IO): POSIX (io.c) and ISO C stdio (io_stdio.c)
# as OTF2 Io records.
target_sources(tr_wrappers PRIVATE ${CMAKE_CURRENT_LIST_DIR}/io.c ${CMAKE_CURRENT_LIST_DIR}/io_stdio.c)
# The tracer's own file I/O must never reach the wrappers: every reference
# libtracer.so's objects make to these functions goes to __wrap_<fn> (the
# real C library function). Propagated to libtracer.so's link through the
# object library's interface (CMakeLists.txt copies it).
set(_io_self open close read write pread pwrite fcntl unlink rename lseek dup dup2 fsync
    fopen fdopen fclose fgets fputs fflush fwrite fread vfprintf fprintf)
set(_io_wrap "")
foreach(f ${_io_self})
  string(APPEND _io_wrap ",--wrap=${f}")
endforeach()
set_property(TARGET tr_wrappers APPEND PROPERTY INTERFACE_LINK_LIBRARIES "-Wl${_io_wrap}")
