# bench/writer: Enter/Leave throughput of our OTF2 writer (writer_ours) and,
# when libotf2-trace-dev is installed, of the reference libotf2 writer
# (writer_ref), same program (writer_bench.c). Run: scripts/bench writer.
add_executable(writer_ours ${CMAKE_CURRENT_LIST_DIR}/writer_bench.c)
target_compile_definitions(writer_ours PRIVATE BENCH_REF=0)
target_link_libraries(writer_ours PRIVATE otf2w otf2w_libc Threads::Threads)
set_target_properties(writer_ours PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)

find_library(OTF2_LIB otf2)
find_path(OTF2_BENCH_INCLUDE otf2/otf2.h PATHS /usr/include)
if(OTF2_LIB AND OTF2_BENCH_INCLUDE)
  add_executable(writer_ref ${CMAKE_CURRENT_LIST_DIR}/writer_bench.c)
  target_compile_definitions(writer_ref PRIVATE BENCH_REF=1)
  target_include_directories(writer_ref PRIVATE ${OTF2_BENCH_INCLUDE})
  target_link_libraries(writer_ref PRIVATE ${OTF2_LIB} Threads::Threads)
  set_target_properties(writer_ref PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
else()
  message(STATUS "bench/writer: libotf2 not found, reference writer benchmark disabled")
endif()
