# bench/pthread: uncontended mutex lock/unlock pairs (run by bench/pthread.sh).
add_executable(bench_pthread_mutex ${CMAKE_CURRENT_LIST_DIR}/pthread_mutex.c)
target_link_libraries(bench_pthread_mutex PRIVATE Threads::Threads)
set_target_properties(bench_pthread_mutex PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
