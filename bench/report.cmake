# bench/report: events per second of our OTF2 reader (report_bench_ours) and,
# when libotf2-trace-dev is installed, of the reference libotf2 reader
# (report_bench_ref), same program (report_bench.c). Run: scripts/bench report.
add_executable(report_bench_ours ${CMAKE_CURRENT_LIST_DIR}/report_bench.c)
target_compile_definitions(report_bench_ours PRIVATE BENCH_REF=0)
target_link_libraries(report_bench_ours PRIVATE otf2r)
set_target_properties(report_bench_ours PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
find_library(OTF2_REPORT_LIB otf2)
find_path(OTF2_REPORT_INCLUDE otf2/otf2.h PATHS /usr/include)
if(OTF2_REPORT_LIB AND OTF2_REPORT_INCLUDE)
  add_executable(report_bench_ref ${CMAKE_CURRENT_LIST_DIR}/report_bench.c)
  target_compile_definitions(report_bench_ref PRIVATE BENCH_REF=1)
  target_compile_options(report_bench_ref PRIVATE -Wno-unused-parameter -Wno-deprecated-declarations)
  target_include_directories(report_bench_ref PRIVATE ${OTF2_REPORT_INCLUDE})
  target_link_libraries(report_bench_ref PRIVATE ${OTF2_REPORT_LIB})
  set_target_properties(report_bench_ref PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
