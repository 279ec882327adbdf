/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abt_prog.c - an "Argobots program" for the stand-in libabt.so: ULT bodies
 * use the VT API and a pthread mutex while the units migrate between the
 * two execution streams (see abt_double.c for the script).
 */
#include <pthread.h>
#include <stdio.h>
#include <VT.h>

int ABT_init(int argc, char **argv);
int ABT_finalize(void);
int abtd_run_script(void (*body)(int unit, int step));

static int h_work, h_inner, h_again, h_outer, h_child, h_leak, h_migr;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void body(int unit, int step)
{
	switch (unit * 10 + step) {
	case 10:        /* unit 1, stream 0, then yields */
		VT_begin(h_work);
		break;
	case 20:        /* unit 2, stream 1, then suspends */
		VT_begin(h_work);
		pthread_mutex_lock(&mtx);
		counter++;
		pthread_mutex_unlock(&mtx);
		break;
	case 11:        /* unit 1 again, now on stream 1, finishes */
		VT_begin(h_inner);
		VT_end(h_inner);
		VT_end(h_work);
		break;
	case 21:        /* unit 2 resumed on stream 0, finishes */
		VT_end(h_work);
		break;
	case 12:        /* unit 1 revived, stream 1 */
		VT_begin(h_again);
		VT_end(h_again);
		break;
	case 40:        /* unit 4, then runs unit 5 on top of itself */
		VT_begin(h_outer);
		break;
	case 50:
		VT_begin(h_child);
		VT_end(h_child);
		break;
	case 41:        /* unit 4 again after unit 5 finished */
		VT_end(h_outer);
		break;
	case 60:        /* unit 6 finishes with "leak" open */
		VT_begin(h_leak);
		break;
	case 70:        /* unit 7 on stream 1, then yields */
		VT_begin(h_migr);
		break;
	case 71:        /* unit 7 on stream 0 */
		VT_end(h_migr);
		break;
	}
}

int main(int argc, char **argv)
{
	int rc = ABT_init(argc, argv);
	if (rc) {
		printf("ABT_init failed: %d\n", rc);
		return 1;
	}
	VT_funcdef("work", VT_NOCLASS, &h_work);
	VT_funcdef("inner", VT_NOCLASS, &h_inner);
	VT_funcdef("again", VT_NOCLASS, &h_again);
	VT_funcdef("outer", VT_NOCLASS, &h_outer);
	VT_funcdef("child", VT_NOCLASS, &h_child);
	VT_funcdef("leak", VT_NOCLASS, &h_leak);
	VT_funcdef("migr", VT_NOCLASS, &h_migr);
	rc = abtd_run_script(body);
	printf("script rc=%d counter=%d\n", rc, counter);
	rc = ABT_finalize();
	printf("finalize rc=%d\n", rc);
	return 0;
}
