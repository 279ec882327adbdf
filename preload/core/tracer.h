/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tracer.h - the core of libtracer.so as seen by wrappers/ and sampling/.
 *
 * Layering: wrappers/ and sampling/ call down into preload/ (this header)
 * and format/ (otf2w.h), never into each other. preload/ is the only code
 * that reads the environment.
 *
 * Hot path contract (one wrapped call, one event): tr_thread_get(),
 * tr_time(), tr_enter()/tr_leave() and the otf2w_evt_* writers allocate
 * nothing, take no lock, do no stdio and never call a wrapped function.
 *
 * Typical wrapper:
 *
 *	TR_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
 *	{   // real_pthread_mutex_lock: the family's table (tr_real_resolve)
 *		struct tr_thread *t = tr_thread_get();   // NULL: not ready/dying/nested
 *		if (!t)
 *			return real_pthread_mutex_lock(m);
 *		uint64_t t0 = tr_time();
 *		tr_enter(t, t0, tr_rgn_mutex_lock);
 *		int ret = real_pthread_mutex_lock(m);
 *		tr_leave(t, tr_time(), tr_rgn_mutex_lock);
 *		tr_thread_put(t);                        // restores errno
 *		return ret;
 *	}
 */
#ifndef TR_TRACER_H
#define TR_TRACER_H

/* By topic (each <= 400 lines):
 *   tr_config.h    macros, log, configuration (tr_cfg)
 *   tr_thread.h    clock, per-thread state
 *   tr_event.h     the hot path: records of a wrapped call, region stack
 *   tr_module.h    user-level tasks, module hooks
 *   tr_registry.h  definitions registry
 *   tr_process.h   process identity, archive life cycle, helpers, MPI support
 *   tr_real.h      the real C library functions, the heap, the raw system
 *                  call, the resolver of the families' real functions */
#ifdef __cplusplus
extern "C" {
#endif
#include "tr_real.h"
#include "tr_process.h"
#ifdef __cplusplus
}
#endif
#endif /* TR_TRACER_H */
