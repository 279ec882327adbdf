# unit.cmake - criterion unit tests of format/ internals (owner: fmt).
# Included by tests/format/CMakeLists.txt (owner: fmtest).
if(TARGET PkgConfig::CRITERION)
  foreach(t encode buffer archive)
    add_executable(unit_format_${t} ${CMAKE_CURRENT_LIST_DIR}/unit_${t}.c)
    target_link_libraries(unit_format_${t} PRIVATE otf2w otf2w_libc PkgConfig::CRITERION Threads::Threads)
    target_include_directories(unit_format_${t} PRIVATE ${CMAKE_CURRENT_LIST_DIR})
    add_test(NAME format_unit_${t} COMMAND unit_format_${t} --jobs 1)
    set_tests_properties(format_unit_${t} PROPERTIES TIMEOUT 120 LABELS format)
  endforeach()
endif()
