# examples/demo: the pthread demo traced by scripts/demo.
add_executable(tr_demo ${CMAKE_CURRENT_LIST_DIR}/demo.c)
target_link_libraries(tr_demo PRIVATE Threads::Threads)
set_target_properties(tr_demo PROPERTIES OUTPUT_NAME demo
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/examples)
