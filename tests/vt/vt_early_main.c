/* SPDX-License-Identifier: BSD-3-Clause */
/* vt_early_main.c - after the early calls, the VT API works normally. */
#include <stdio.h>
#include <VT.h>

int main(void)
{
	int h, rc1, rc2, rc3;
	rc1 = VT_funcdef("late", VT_NOCLASS, &h);
	rc2 = VT_begin(h);
	rc3 = VT_end(h);
	printf("main: %d %d %d\n", rc1, rc2, rc3);
	return rc1 || rc2 || rc3;
}
