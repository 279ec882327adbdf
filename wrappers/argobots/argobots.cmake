# Argobots work units as OTF2 tasks (ABT_init interposed, tool callbacks).
target_sources(tr_wrappers PRIVATE ${CMAKE_CURRENT_LIST_DIR}/argobots.c)
