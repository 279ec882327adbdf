# bench/io: POSIX pwrite/pread of 4 KiB and 64-byte fwrite (run by bench/io.sh).
add_executable(bench_io_calls ${CMAKE_CURRENT_LIST_DIR}/io_calls.c)
set_target_properties(bench_io_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
