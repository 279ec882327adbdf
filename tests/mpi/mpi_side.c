/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_side.c - an MPI program with side processes: each rank runs a shell
 * through system() before and after MPI_Finalize and forks a child that
 * writes to /dev/null. Rank 0 prints one line (check_side.py).
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int fork_writer(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || write(fd, "side\n", 5) != 5)
			_exit(1);
		close(fd);
		_exit(0);
	}
	int st = 0;
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	bad |= system("exec true") != 0;
	bad |= fork_writer() != 0;
	int sum = 0;
	MPI_Allreduce(&bad, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	bad |= system("exec true") != 0;
	if (rank == 0)
		printf("ranks %d, failed side steps %d\n", size, sum);
	return bad || sum ? 1 : 0;
}
