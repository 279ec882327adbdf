/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp_plugin.c - an OpenMP runtime reached only through dlopen(RTLD_LOCAL):
 * built twice, as the plugin (-DOMP_PLUGIN, -fopenmp -shared: its libgomp
 * or libomp is a dependency of the plugin alone) and as the program (no
 * -fopenmp: no OpenMP runtime in the global scope) that opens the plugin
 * with RTLD_NOW | RTLD_LOCAL and calls its entry point, as numpy's OpenBLAS
 * and Python extension modules are opened.
 *
 *   omp_plugin PLUGIN.so   -> "omp_plugin: sum 499500 threads 2 regions 5"
 */
#ifdef OMP_PLUGIN
#include <omp.h>

int plugin_run(long *sum, int *threads)
{
	int regions = 0;
	*sum = 0;
	for (int r = 0; r < 5; r++) {
		long s = 0;
		int nt = 0;
#pragma omp parallel num_threads(2) reduction(+ : s)
		{
#pragma omp for
			for (int i = 0; i < 1000; i++)
				s += i;
#pragma omp single
			nt = omp_get_num_threads();
		}
		*sum = s;
		*threads = nt;
		regions++;
	}
	return regions;
}
#else
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: omp_plugin PLUGIN.so\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "omp_plugin: %s\n", dlerror());
		return 1;
	}
	int (*run)(long *, int *) = (int (*)(long *, int *))dlsym(h, "plugin_run");
	if (!run) {
		fprintf(stderr, "omp_plugin: no plugin_run\n");
		return 1;
	}
	long sum;
	int threads;
	int regions = run(&sum, &threads);
	printf("omp_plugin: sum %ld threads %d regions %d\n", sum, threads, regions);
	return 0;
}
#endif
