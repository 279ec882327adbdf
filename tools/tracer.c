/* SPDX-License-Identifier: BSD-3-Clause */
/* tracer - one command for the tracer's tools:
 *   tracer run      record a program (execs the launcher tracer-run)
 *   tracer report   where did the time go (text, --json, --html)
 *   tracer convert  Chrome Trace Event JSON for Perfetto / chrome://tracing
 *   tracer merge    one archive from the per-rank archives (execs tracer-merge)
 *   tracer recover  rebuild the archive of a killed TRACER_DURABLE run (recover.c)
 * `tracer run` and `tracer merge` look for their program next to this
 * binary first, then in the source tree it was built from. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "recover.h"
#include "report.h"

#ifndef TRACER_SOURCE_DIR
#define TRACER_SOURCE_DIR "."
#endif

static const char usage_text[] =
	"usage: tracer COMMAND [options] [args]\n"
	"\n"
	"commands:\n"
	"  run      record a program into an OTF2 archive (the launcher tracer-run)\n"
	"  report   where did the time go: regions, threads, ranks, messages;\n"
	"           text, --json or --html FILE (one self-contained page)\n"
	"  convert  Chrome Trace Event JSON for Perfetto's UI and chrome://tracing\n"
	"  merge    one archive from the per-rank archives of an MPI run (tracer-merge)\n"
	"  recover  rebuild the archive of a run killed by SIGKILL (TRACER_DURABLE)\n"
	"  help     this text; `tracer COMMAND --help` for a command's options\n";


static const char merge_text[] =
	"usage: tracer merge [tracer-merge options] DIR\n"
	"\n"
	"Runs tracer-merge (found next to this binary): makes one archive\n"
	"DIR/traces.otf2 out of the per-rank archives rank<r>.otf2 of an MPI run\n"
	"that did not reach MPI_Finalize (docs/mpi.md). Its options are passed on.\n";

/* Directory of this executable (empty if unknown). */
static void self_dir(char *out, size_t n)
{
	ssize_t k = readlink("/proc/self/exe", out, n - 1);
	if (k <= 0) {
		out[0] = 0;
		return;
	}
	out[k] = 0;
	char *s = strrchr(out, '/');
	if (s)
		*s = 0;
}

/* exec the first executable candidate with argv[0] = name, args = argv[1..] */
static int exec_tool(const char *name, const char *const *cands, int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	self_dir(dir, sizeof dir);
	for (size_t i = 0; cands[i]; i++) {
		const char *base = cands[i][0] == '@' ? dir : TRACER_SOURCE_DIR;
		snprintf(path, sizeof path, "%s/%s", base, cands[i] + (cands[i][0] == '@'));
		if (access(path, X_OK) != 0)
			continue;
		char **av = calloc((size_t)argc + 1, sizeof *av);
		if (!av)
			return 1;
		av[0] = (char *)name;
		for (int a = 1; a < argc; a++)
			av[a] = argv[a];
		execv(path, av);
		fprintf(stderr, "tracer: cannot run %s: %s\n", path, strerror(errno));
		return 127;
	}
	fprintf(stderr, "tracer: %s not found next to %s/tracer nor in %s\n", name, dir,
		TRACER_SOURCE_DIR);
	return 127;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "report"))
		return tracer_report_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "convert"))
		return tracer_convert_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "run")) {
		/* the C launcher next to us (build/bin, install bin), else the script */
		static const char *const c[] = { "@tracer-run", "scripts/tracer-run", NULL };
		return exec_tool("tracer-run", c, argc - 1, argv + 1);
	}
	if (!strcmp(cmd, "merge") && argc > 2 &&
	    (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		fputs(merge_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "merge")) {
		static const char *const c[] = { "@tracer-merge", NULL };
		return exec_tool("tracer-merge", c, argc - 1, argv + 1);
	}
	if (!strcmp(cmd, "recover"))
		return tracer_recover_main(argc - 1, argv + 1);
	fprintf(stderr, "tracer: unknown command '%s'\n%s", cmd, usage_text);
	return 2;
}
