/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * procwait.c - the process waits: wait, waitpid, wait3, wait4, waitid.
 *
 * A thread about to block until a child ends first publishes what it
 * recorded (tr_durable_idle: TRACER_DURABLE's tick runs only at records,
 * and a thread that waits records nothing). A shell waiting for its
 * command, make, a launcher or a wrapper script is then part of the
 * recovered tree when the whole tree is killed while it waits, its events
 * up to the wait (tr_durable_idle_often: a shell waits for each of its
 * commands). With WNOHANG nothing blocks: nothing is done. Nothing is
 * recorded; the call and its result are the program's.
 */
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include "tr_int.h"


static void before_wait(int options)
{
	struct tr_thread *t = tr_tls_self;
	if (!(options & WNOHANG) && t)
		tr_durable_idle_often(t);
}

TR_EXPORT pid_t wait(int *status)
{
	TR_REAL_INIT(wait);
	before_wait(0);
	return tr_real.wait(status);
}

TR_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	TR_REAL_INIT(waitpid);
	before_wait(options);
	return tr_real.waitpid(pid, status, options);
}

TR_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	TR_REAL_INIT(wait3);
	before_wait(options);
	return tr_real.wait3(status, options, ru);
}

TR_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	TR_REAL_INIT(wait4);
	before_wait(options);
	return tr_real.wait4(pid, status, options, ru);
}

TR_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	TR_REAL_INIT(waitid);
	before_wait(options);
	return tr_real.waitid(idtype, id, info, options);
}
