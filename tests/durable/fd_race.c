/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_race.c - descriptor numbers while the tracer flushes: NTHREADS threads
 * take a mutex in a loop (with a small TRACER_BUFFER they flush chunks all
 * the time) while the main thread opens and closes a file in a loop. With
 * descriptors 0-2 open and nothing else, every open returns 3 untraced; a
 * tracer descriptor that appears in the program's table even for an instant
 * (open, then moved to a high number) makes some open return 4. Prints the
 * number of opens and how many returned another number than 3.
 *
 * usage: fd_race FILE [SECONDS] [NTHREADS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lockers.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fd_race FILE [SECONDS] [NTHREADS]\n");
		return 2;
	}
	double secs = argc > 2 ? atof(argv[2]) : 3;
	int nt = argc > 3 ? atoi(argv[3]) : 3;
	if (nt < 1 || nt > LK_MAXT)
		nt = 3;
	lockers_start(nt);
	long opens = 0, other = 0;
	int seen_other = -1;
	double end = lk_now() + secs;
	while (lk_now() < end) {
		for (int k = 0; k < 100; k++) {
			int fd = open(argv[1], O_WRONLY | O_CREAT, 0644);
			if (fd < 0) {
				perror(argv[1]);
				return 1;
			}
			opens++;
			if (fd != 3) {
				other++;
				seen_other = fd;
			}
			close(fd);
		}
	}
	lockers_stop(nt);
	/* stdout is compared with the untraced run: counts only */
	printf("fd_race: opens returned another number than 3: %ld\n", other);
	if (other)
		fprintf(stderr, "fd_race: %ld of %ld opens returned another number (e.g. %d)\n", other, opens,
			seen_other);
	return 0;
}
