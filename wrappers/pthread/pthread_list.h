/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_list.h - the one list of the interposed POSIX threads functions.
 * Every table of the pthread wrappers is generated from it (pthread.c,
 * pthread_int.h): the real-function pointers, the resolver table, the
 * region enum and region definitions, and the prototypes the wrappers
 * (pthread_sync.c, pthread_thread.c) must match. The lock wrappers that
 * differ only in their lock, its non-blocking attempt and the timeout
 * parameters are generated in pthread_sync.c (PTH_LOCK_WRAPPERS).
 *
 *   R(fn, REGION, ROLE, version, ret, (params))   recorded as region R_REGION
 *   N(fn, version, ret, (params))                 interposed, no region of its own
 *
 * ROLE: OTF2W_ROLE_<ROLE>. version: the symbol version dlvsym asks for
 * (NULL: the default). Order: the resolution order (mutex functions first:
 * a custom allocator used by dlsym may lock one) and the order the regions
 * are defined in.
 */
#ifndef TR_PTHREAD_LIST_H
#define TR_PTHREAD_LIST_H

/* Condition variables exist in two versions in glibc (the pre-2.3.2 ABI
 * and the current one); plain dlsym may return the old one. */
#if defined(__x86_64__) || defined(__i386__) || defined(__powerpc__) || defined(__s390__)
#define PTH_COND_VERSION "GLIBC_2.3.2"
#else
#define PTH_COND_VERSION NULL   /* only one version on newer architectures */
#endif

#define TR_PTH_FUNCS(R, N)                                                                              \
	N(pthread_mutex_init, NULL, int, (pthread_mutex_t *, const pthread_mutexattr_t *))             \
	N(pthread_rwlock_init, NULL, int, (pthread_rwlock_t *, const pthread_rwlockattr_t *))          \
	N(pthread_spin_init, NULL, int, (pthread_spinlock_t *, int))                                   \
	R(pthread_mutex_lock, MUTEX_LOCK, FUNCTION, NULL, int, (pthread_mutex_t *))                     \
	R(pthread_mutex_trylock, MUTEX_TRYLOCK, FUNCTION, NULL, int, (pthread_mutex_t *))               \
	N(pthread_mutex_unlock, NULL, int, (pthread_mutex_t *))                                        \
	R(pthread_mutex_timedlock, MUTEX_TIMEDLOCK, FUNCTION, NULL, int,                                \
	  (pthread_mutex_t *, const struct timespec *))                                                 \
	R(pthread_mutex_clocklock, MUTEX_CLOCKLOCK, FUNCTION, NULL, int,                                \
	  (pthread_mutex_t *, clockid_t, const struct timespec *))                                      \
	R(pthread_create, CREATE, THREAD_CREATE, NULL, int,                                             \
	  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))                             \
	R(pthread_join, JOIN, THREAD_WAIT, NULL, int, (pthread_t, void **))                              \
	R(pthread_tryjoin_np, TRYJOIN, THREAD_WAIT, NULL, int, (pthread_t, void **))                     \
	R(pthread_timedjoin_np, TIMEDJOIN, THREAD_WAIT, NULL, int,                                      \
	  (pthread_t, void **, const struct timespec *))                                                \
	R(pthread_clockjoin_np, CLOCKJOIN, THREAD_WAIT, NULL, int,                                      \
	  (pthread_t, void **, clockid_t, const struct timespec *))                                     \
	R(pthread_detach, DETACH, FUNCTION, NULL, int, (pthread_t))                                     \
	R(pthread_cancel, CANCEL, FUNCTION, NULL, int, (pthread_t))                                     \
	R(pthread_exit, EXIT, FUNCTION, NULL, void, (void *))                                           \
	R(pthread_rwlock_rdlock, RW_RDLOCK, FUNCTION, NULL, int, (pthread_rwlock_t *))                  \
	R(pthread_rwlock_tryrdlock, RW_TRYRDLOCK, FUNCTION, NULL, int, (pthread_rwlock_t *))            \
	R(pthread_rwlock_timedrdlock, RW_TIMEDRDLOCK, FUNCTION, NULL, int,                              \
	  (pthread_rwlock_t *, const struct timespec *))                                                \
	R(pthread_rwlock_clockrdlock, RW_CLOCKRDLOCK, FUNCTION, NULL, int,                              \
	  (pthread_rwlock_t *, clockid_t, const struct timespec *))                                     \
	R(pthread_rwlock_wrlock, RW_WRLOCK, FUNCTION, NULL, int, (pthread_rwlock_t *))                  \
	R(pthread_rwlock_trywrlock, RW_TRYWRLOCK, FUNCTION, NULL, int, (pthread_rwlock_t *))            \
	R(pthread_rwlock_timedwrlock, RW_TIMEDWRLOCK, FUNCTION, NULL, int,                              \
	  (pthread_rwlock_t *, const struct timespec *))                                                \
	R(pthread_rwlock_clockwrlock, RW_CLOCKWRLOCK, FUNCTION, NULL, int,                              \
	  (pthread_rwlock_t *, clockid_t, const struct timespec *))                                     \
	N(pthread_rwlock_unlock, NULL, int, (pthread_rwlock_t *))                                      \
	R(pthread_spin_lock, SPIN_LOCK, FUNCTION, NULL, int, (pthread_spinlock_t *))                    \
	R(pthread_spin_trylock, SPIN_TRYLOCK, FUNCTION, NULL, int, (pthread_spinlock_t *))              \
	N(pthread_spin_unlock, NULL, int, (pthread_spinlock_t *))                                      \
	R(pthread_cond_wait, COND_WAIT, FUNCTION, PTH_COND_VERSION, int, (pthread_cond_t *, pthread_mutex_t *)) \
	R(pthread_cond_timedwait, COND_TIMEDWAIT, FUNCTION, PTH_COND_VERSION, int,                      \
	  (pthread_cond_t *, pthread_mutex_t *, const struct timespec *))                               \
	R(pthread_cond_clockwait, COND_CLOCKWAIT, FUNCTION, NULL, int,                                  \
	  (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *))                    \
	R(pthread_cond_signal, COND_SIGNAL, FUNCTION, PTH_COND_VERSION, int, (pthread_cond_t *))        \
	R(pthread_cond_broadcast, COND_BROADCAST, FUNCTION, PTH_COND_VERSION, int, (pthread_cond_t *))  \
	R(pthread_barrier_wait, BARRIER_WAIT, BARRIER, NULL, int, (pthread_barrier_t *))                \
	R(sem_wait, SEM_WAIT, FUNCTION, NULL, int, (sem_t *))                                           \
	R(sem_timedwait, SEM_TIMEDWAIT, FUNCTION, NULL, int, (sem_t *, const struct timespec *))        \
	R(sem_clockwait, SEM_CLOCKWAIT, FUNCTION, NULL, int, (sem_t *, clockid_t, const struct timespec *)) \
	R(sem_trywait, SEM_TRYWAIT, FUNCTION, NULL, int, (sem_t *))                                     \
	R(sem_post, SEM_POST, FUNCTION, NULL, int, (sem_t *))                                           \
	N(pthread_setname_np, NULL, int, (pthread_t, const char *))                                    \
	N(prctl, NULL, int, (int, ...))

#endif /* TR_PTHREAD_LIST_H */
