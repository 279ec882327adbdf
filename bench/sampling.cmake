# bench/sampling.cmake: programs of bench/sampling.sh (scripts/bench sampling).
add_executable(sampling_cpu ${CMAKE_CURRENT_SOURCE_DIR}/sampling_cpu.c)
target_compile_options(sampling_cpu PRIVATE -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls)
target_link_libraries(sampling_cpu PRIVATE rt)
if(PAPI_LIBRARY AND PAPI_INCLUDE_DIR)
  add_executable(sampling_metric ${CMAKE_CURRENT_SOURCE_DIR}/sampling_metric.c)
  target_include_directories(sampling_metric PRIVATE ${PAPI_INCLUDE_DIR})
  target_link_libraries(sampling_metric PRIVATE ${PAPI_LIBRARY} ${CMAKE_DL_LIBS})
endif()
