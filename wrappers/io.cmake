# I/O interposition (TRACER_IO): POSIX (io.c), ISO C stdio (io_stdio.c),
# mappings and POSIX aio (io_async.c) as OTF2 Io records; truncate, allocation,
# advice and stat (io_meta.c) as regions.
target_sources(tr_wrappers PRIVATE ${CMAKE_CURRENT_LIST_DIR}/io.c ${CMAKE_CURRENT_LIST_DIR}/io_stdio.c
  ${CMAKE_CURRENT_LIST_DIR}/io_async.c ${CMAKE_CURRENT_LIST_DIR}/io_meta.c)
# The tracer's own file I/O must never reach the wrappers: every reference
# libtracer.so's objects make to these functions goes to __wrap_<fn> (the
# real C library function, defined next to each wrapper). Added to the one
# list of wrapped functions libtracer.so is linked with (CMakeLists.txt).
set_property(GLOBAL APPEND PROPERTY TR_SELF_WRAPPED open close read write pread pwrite fcntl unlink
  rename lseek dup dup2 fsync fopen fdopen fclose fgets fputs fflush fwrite fread vfprintf fprintf
  mmap munmap stat lstat fstat ftruncate posix_fallocate)
