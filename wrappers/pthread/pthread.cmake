# pthread interposition (TRACER_PTHREAD): thread life cycle, locks,
# condition variables, barriers, semaphores.
target_sources(tr_wrappers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pthread.c
  ${CMAKE_CURRENT_LIST_DIR}/pthread_sync.c
  ${CMAKE_CURRENT_LIST_DIR}/pthread_thread.c
  ${CMAKE_CURRENT_LIST_DIR}/pthread_lock.c
  ${CMAKE_CURRENT_LIST_DIR}/pthread_site.c)
