/* SPDX-License-Identifier: BSD-3-Clause */
/* tracer - one command for the tracer's tools:
 *   tracer run      record a program (execs the launcher tracer-run)
 *   tracer report   where did the time go (text, --json, --html)
 *   tracer convert  Chrome Trace Event JSON for Perfetto / chrome://tracing
 *   tracer diff     what changed between two runs (report_diff.c)
 *   tracer merge    one archive from the per-rank archives (execs tracer-merge)
 *   tracer recover  rebuild the archive of a killed TRACER_DURABLE run (recover.c)
 * `tracer run` and `tracer merge` exec their program, found next to this
 * binary (build/bin, the installed BINDIR). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "recover.h"
#include "report.h"


static const char usage_text[] =
	"usage: tracer COMMAND [options] [args]\n"
	"\n"
	"commands:\n"
	"  run      record a program into an OTF2 archive (the launcher tracer-run)\n"
	"  report   where did the time go: regions, threads, ranks, messages;\n"
	"           text, --json or --html FILE (one self-contained page)\n"
	"  convert  Chrome Trace Event JSON for Perfetto's UI and chrome://tracing\n"
	"  diff     what changed from run A to run B: regions, I/O, locks, MPI\n"
	"  merge    one archive from the per-rank archives of an MPI run (tracer-merge)\n"
	"  recover  rebuild the archive of a run killed by SIGKILL (TRACER_DURABLE)\n"
	"  help     this text; `tracer COMMAND --help` for a command's options\n"
	"\n"
	"  -h, --help  this text\n"
	"  --version   the version\n";


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

/* exec NAME found next to this binary, argv[0] = NAME, args = argv[1..]
 * (`tracer merge --help` is tracer-merge's own help) */
static int exec_tool(const char *name, int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	self_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (access(path, X_OK) != 0) {
		fprintf(stderr, "tracer: %s not found next to %s/tracer\n", name, dir);
		return 127;
	}
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

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tracer (libtracer) %s\n", TRACER_VERSION);
		return 0;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "report"))
		return tracer_report_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "convert"))
		return tracer_convert_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return tracer_diff_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return exec_tool("tracer-run", argc - 1, argv + 1);
	if (!strcmp(cmd, "merge"))
		return exec_tool("tracer-merge", argc - 1, argv + 1);
	if (!strcmp(cmd, "recover"))
		return tracer_recover_main(argc - 1, argv + 1);
	fprintf(stderr, "tracer: unknown command '%s'\n%s", cmd, usage_text);
	return 2;
}
