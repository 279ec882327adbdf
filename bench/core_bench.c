/* SPDX-License-Identifier: BSD-3-Clause */
/* core_bench N - ns per traced Enter+Leave pair and per tr_time(), through
 * the test hook of libtracer_coretest.so (bench/core.sh preloads it). */
#include <stdio.h>
#include <stdlib.h>
extern double tracer_test_bench(long n, int mode) __attribute__((weak));
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	if (!tracer_test_bench) {
		fprintf(stderr, "core_bench: preload libtracer_coretest.so\n");
		return 1;
	}
	tracer_test_bench(n / 10, 0);   /* warm up: location, chunks */
	printf("%.2f %.2f\n", tracer_test_bench(n, 0), tracer_test_bench(n, 1));
	return 0;
}
