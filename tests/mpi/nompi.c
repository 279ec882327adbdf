/* SPDX-License-Identifier: BSD-3-Clause */
/* A program without MPI: libtracer.so (which defines the MPI_* wrappers)
 * must load and trace it. */
#include <stdio.h>

int main(void)
{
	printf("nompi ok\n");
	return 0;
}
