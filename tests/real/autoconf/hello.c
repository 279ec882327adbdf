/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"
#include <stdio.h>

int main(void)
{
	printf("%s: long is %d bytes", PACKAGE_STRING, (int)SIZEOF_LONG);
#ifdef HAVE_CLOSE_RANGE
	printf(", close_range");
#endif
#ifdef HAVE_NO_SUCH_FUNCTION_HERE
	printf(", impossible");
#endif
	printf("\n");
	return 0;
}
