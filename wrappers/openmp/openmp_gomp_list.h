/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_gomp_list.h - the one list of the libgomp functions the OpenMP
 * wrappers call for real (openmp_gomp.c, openmp_gomp_sync.c). The index
 * enum, the pointer table and the table given to the core's resolver
 * (tr_real_resolve) are generated from it (openmp_gomp.h/.c); each wrapper
 * keeps its prototype at its GOMP_REAL, and a name missing here does not
 * compile.
 *
 *   TR_GOMP_NAMES(X)             X(fn)
 *   TR_GOMP_LOOP_SCHEDS(X, XRT)  the schedules of GOMP_loop_<s>_start and
 *                                GOMP_loop_ull_<s>_start: with a chunk
 *                                argument (X) or without (XRT)
 */
#ifndef TR_OPENMP_GOMP_LIST_H
#define TR_OPENMP_GOMP_LIST_H

#define TR_GOMP_NAMES(X)                                                                             \
	X(omp_get_thread_num) X(omp_get_max_threads) X(omp_get_num_threads)                         \
	X(GOMP_parallel) X(GOMP_parallel_reductions) X(GOMP_parallel_sections)                      \
	X(GOMP_parallel_loop_static) X(GOMP_parallel_loop_dynamic) X(GOMP_parallel_loop_guided)     \
	X(GOMP_parallel_loop_nonmonotonic_dynamic) X(GOMP_parallel_loop_nonmonotonic_guided)        \
	X(GOMP_parallel_loop_runtime) X(GOMP_parallel_loop_nonmonotonic_runtime)                    \
	X(GOMP_parallel_loop_maybe_nonmonotonic_runtime)                                             \
	X(GOMP_parallel_start) X(GOMP_parallel_end)                                                  \
	X(GOMP_barrier) X(GOMP_barrier_cancel)                                                       \
	X(GOMP_single_start) X(GOMP_single_copy_start) X(GOMP_single_copy_end)                       \
	X(GOMP_loop_start) X(GOMP_loop_ordered_start) X(GOMP_loop_ull_start)                         \
	X(GOMP_sections_start) X(GOMP_sections2_start)                                               \
	X(GOMP_loop_end) X(GOMP_loop_end_nowait) X(GOMP_loop_end_cancel)                             \
	X(GOMP_sections_end) X(GOMP_sections_end_nowait) X(GOMP_sections_end_cancel)                 \
	X(GOMP_critical_start) X(GOMP_critical_end) X(GOMP_critical_name_start)                      \
	X(GOMP_critical_name_end) X(GOMP_atomic_start) X(GOMP_atomic_end)                            \
	X(GOMP_ordered_start) X(GOMP_ordered_end)                                                    \
	X(omp_set_lock) X(omp_unset_lock) X(omp_test_lock)                                           \
	X(omp_set_nest_lock) X(omp_unset_nest_lock) X(omp_test_nest_lock)                            \
	X(omp_set_lock_) X(omp_unset_lock_) X(omp_test_lock_)                                        \
	X(omp_set_nest_lock_) X(omp_unset_nest_lock_) X(omp_test_nest_lock_)                         \
	X(GOMP_task) X(GOMP_taskwait) X(GOMP_taskwait_depend) X(GOMP_taskyield)                      \
	X(GOMP_taskgroup_start) X(GOMP_taskgroup_end) X(GOMP_taskloop) X(GOMP_taskloop_ull)             \
	X(GOMP_cancel) X(GOMP_cancellation_point)

#define TR_GOMP_LOOP_SCHEDS(X, XRT)                                             \
	X(static) X(dynamic) X(guided) X(nonmonotonic_dynamic) X(nonmonotonic_guided) \
	X(ordered_static) X(ordered_dynamic) X(ordered_guided)                 \
	XRT(runtime) XRT(nonmonotonic_runtime) XRT(maybe_nonmonotonic_runtime) \
	XRT(ordered_runtime)

#endif /* TR_OPENMP_GOMP_LIST_H */
