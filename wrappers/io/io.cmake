# I/O interposition (TRACER_IO): POSIX (io.c; copies and seeks: io_copy.c), ISO C stdio (io_stdio.c;
# per-character calls folded into counts: io_chars.c),
# mappings and POSIX aio (io_async.c) as OTF2 Io records; truncate, allocation,
# advice, stat, unlink and rename (io_meta.c) as regions.
target_sources(tr_wrappers PRIVATE ${CMAKE_CURRENT_LIST_DIR}/io.c ${CMAKE_CURRENT_LIST_DIR}/io_stdio.c
  ${CMAKE_CURRENT_LIST_DIR}/io_async.c ${CMAKE_CURRENT_LIST_DIR}/io_meta.c ${CMAKE_CURRENT_LIST_DIR}/io_copy.c
  ${CMAKE_CURRENT_LIST_DIR}/io_chars.c)
# The tracer's own file I/O never reaches the wrappers: it calls tr_real
# (preload/core/tr_real.h) and otf2w_sys (format/otf2w_sys.h).
