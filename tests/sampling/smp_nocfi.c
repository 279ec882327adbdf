/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_nocfi.c - CPU time in hand-written code without unwind information,
 * as in OpenBLAS's kernels: nocfi_spin has no FDE and uses %rbp as a
 * plain register, so neither the unwind tables nor the frame-pointer chain
 * lead out of it (sampling.nocfi: libunwind is asked once there, its
 * samples keep the pc alone, in the same context as the walk gave).
 * Runs SMP_CPU_SECONDS (default 0.5) of CPU in it.
 */
#include <stdlib.h>
#include "smp_cpu.h"

volatile double smp_sink;

void nocfi_spin(long n);
__asm__(".text\n"
	".globl nocfi_spin\n"
	".type nocfi_spin, @function\n"
	"nocfi_spin:\n"
	"	push %rbp\n"
	"	xor %ebp, %ebp\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	pop %rbp\n"
	"	ret\n"
	".size nocfi_spin, .-nocfi_spin\n");

int main(void)
{
	const char *e = getenv("SMP_CPU_SECONDS");
	double end = cpu_seconds() + (e ? atof(e) : 0.5);
	while (cpu_seconds() < end)
		nocfi_spin(2000000);
	return 0;
}
