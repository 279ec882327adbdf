# Intel Trace Collector user API (VT_*, Fortran vt*_) in libtracer.so.
target_sources(tr_wrappers PRIVATE ${CMAKE_CURRENT_LIST_DIR}/vt.c ${CMAKE_CURRENT_LIST_DIR}/vt_defs.c
  ${CMAKE_CURRENT_LIST_DIR}/vt_fortran.c)
# VT.h is the public header programs written for ITC compile against.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/VT.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
