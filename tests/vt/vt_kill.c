/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt_kill.c - a VT program for vt_durable_kill: defines three classes (one
 * nested) and five functions, enters and leaves them, prints "ready", then
 * goes on until it is killed (SIGKILL by check_vt_kill.py).
 */
#include <stdio.h>
#include <time.h>
#include <VT.h>

int main(void)
{
	int solver, inner, io, step, solve, reduce, rd, wr;
	if (VT_classdef("Solver", &solver) || VT_classdef("Solver:Inner", &inner) || VT_classdef("IO", &io) ||
	    VT_funcdef("step", solver, &step) || VT_funcdef("solve", solver, &solve) ||
	    VT_funcdef("reduce", inner, &reduce) || VT_funcdef("read", io, &rd) || VT_funcdef("write", io, &wr)) {
		fprintf(stderr, "vt_kill: a definition failed\n");
		return 1;
	}
	const struct timespec ms = { 0, 1000000 };
	for (long i = 0;; i++) {
		VT_begin(step);
		VT_begin(solve);
		VT_begin(reduce);
		VT_end(reduce);
		VT_end(solve);
		VT_begin(i % 2 ? rd : wr);
		VT_end(i % 2 ? rd : wr);
		VT_end(step);
		if (i == 100) {
			printf("ready\n");
			fflush(stdout);
		}
		nanosleep(&ms, NULL);
	}
}
