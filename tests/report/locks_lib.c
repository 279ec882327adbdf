/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * locks_lib.c - a shared library of test_locks.py with a mutex of its own
 * (file-local, in its .bss): locks_lib_take() takes it n times and
 * returns its address.
 */
#include <pthread.h>

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((visibility("default"))) void *locks_lib_take(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&lib_lock);
		pthread_mutex_unlock(&lib_lock);
	}
	return &lib_lock;
}
