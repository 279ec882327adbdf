/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * locks_prog.c - test_locks.py: two threads take mutexes that live in
 * different places: a file-local one (queue_lock, .bss), a global one
 * (table_lock), one inside an initialized struct (stats.m, .data), one of
 * a shared library (locks_lib.c) and one on the heap, made by
 * pthread_mutex_init in make_heap_lock (the line marked LOCK_INIT: where
 * the report says it was made). Prints, per lock, "lock <what it is>
 * <address>" (what: the name the report should give, "-" for the heap
 * one), after the threads have joined.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

void *locks_lib_take(int n);

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	long count;
	pthread_mutex_t m;
} stats = { 1, PTHREAD_MUTEX_INITIALIZER };
static pthread_mutex_t *heap_lock;
static void *lib_lock;

static void *worker(void *arg)
{
	pthread_mutex_t *locks[] = { &queue_lock, &table_lock, &stats.m, heap_lock };
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_t *l = locks[i % 4];
		pthread_mutex_lock(l);
		stats.count++;
		pthread_mutex_unlock(l);
	}
	lib_lock = locks_lib_take(100);
	return arg;
}

static __attribute__((noinline)) pthread_mutex_t *make_heap_lock(void)
{
	pthread_mutex_t *m = malloc(sizeof *m);
	if (m && pthread_mutex_init(m, NULL) != 0) /* LOCK_INIT */
		return NULL;
	return m;
}

int main(void)
{
	pthread_t t[2];

	if (!(heap_lock = make_heap_lock()))
		return 1;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("lock queue_lock %p\n", (void *)&queue_lock);
	printf("lock table_lock %p\n", (void *)&table_lock);
	printf("lock stats+0x%zx %p\n", offsetof(__typeof__(stats), m), (void *)&stats.m);
	printf("lock lib_lock %p\n", lib_lock);
	printf("lock - %p\n", (void *)heap_lock);
	return 0;
}
