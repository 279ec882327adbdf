/* SPDX-License-Identifier: BSD-3-Clause */
/* Definitions made after MPI_Finalize: a barrier, MPI_Finalize, then each
 * rank writes a file of its own (/tmp/tracer-late-<pid>-r<rank>.txt: a new
 * I/O file and handles), starts a thread that takes a mutex and writes to
 * stdout (a new location), and removes the file. Prints one line per rank. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int rank;

static void *worker(void *arg)
{
	pthread_mutex_lock(&mu);
	printf("rank %d: thread after MPI_Finalize\n", rank);
	fflush(stdout);
	pthread_mutex_unlock(&mu);
	return arg;
}

int main(int argc, char **argv)
{
	char path[128];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	snprintf(path, sizeof(path), "/tmp/tracer-late-%d-r%d.txt", (int)getpid(), rank);
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "rank %d\n", rank);
	fclose(f);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		return 1;
	unlink(path);
	return 0;
}
