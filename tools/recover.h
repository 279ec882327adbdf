/* SPDX-License-Identifier: BSD-3-Clause */
/* recover.h - `tracer recover` (recover.c), also called by tracer-run. */
#ifndef TRACER_RECOVER_H
#define TRACER_RECOVER_H

#include <stdio.h>

/* Recover every killed process's archive in dir (and dir/ranks); one line
 * per archive to msg. 0 recovered, 1 nothing to recover, 2 errors. */
int tracer_recover_dir(const char *dir, FILE *msg);
int tracer_recover_main(int argc, char **argv);

#endif
