/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sandbox.c - what a process does to itself that the tracer must see first:
 * it sandboxes itself (a seccomp filter, strict mode, a landlock ruleset),
 * ends through the raw exit_group system call, or makes a fork-like child
 * with the raw clone system call.
 *
 * Sandboxes. Once a filter applies, a system call of ours that it forbids
 * would kill the program (SECCOMP_RET_KILL_*) or fail (every later file of
 * the archive), and landlock may forbid the archive's directory. So before
 * the filter is installed the archive of the process is finished (as at its
 * end: the process tree's part, unified when it is the last), with a
 * MeasurementOnOff(OFF) on the calling thread and the anchor property
 * TRACER::RECORDING_STOPPED naming the call; from then on the process runs
 * untraced and the tracer makes no system call of its own (its exit path
 * sees the archive finished). Reached through prctl(PR_SET_SECCOMP)
 * (wrappers/pthread/pthread_thread.c) and syscall(SYS_seccomp) /
 * syscall(SYS_landlock_restrict_self) (libseccomp's seccomp_load, most
 * sandboxing code); a program that issues the system call instruction
 * itself is not seen.
 *
 * Privilege drops (setuid family, below): the archive is handed to the
 * new user first.
 *
 * syscall(). The C library's syscall() is interposed: every other number
 * goes straight to the kernel (the system call instruction here, errno set
 * as glibc does; not a cancellation point, as glibc's is not), so the
 * tracer's own calls of syscall() cost one compare more. exit_group
 * finishes the archive with the status first (as _exit does); a clone
 * without CLONE_VM (a fork made by hand, as bwrap does) runs fork's three
 * steps around it, so the child gets a process of its own in the archive
 * instead of writing into its parent's mapped event files.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "proctree.h"

#include "tr_int.h"

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

void tr_sandbox_enter(const char *what)
{
	if (!tr_g.initialized || !tr_g.active || tr_g.finishing || tr_g.pid != tr_self_pid())
		return;
	struct tr_thread *t = tr_tls_self;
	if (t && t->state == TR_T_ACTIVE && t->w && t->guard <= 1) {
		t->guard++;
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_measurement_on_off(t->w, NULL, tr_time(), OTF2W_MEASUREMENT_OFF));
			tr_rec_end(t);
		}
		t->guard--;
	}
	char note[160];
	snprintf(note, sizeof(note), "%s: the archive was finished before it (the process ran on untraced)", what);
	if (tr_g.ar)
		otf2w_archive_set_property(tr_g.ar, "TRACER::RECORDING_STOPPED", note);
	tr_log_debug("recording stopped at %s", what);
	tr_finish_status(0, 1);
}

/* ---- privileges ----
 * A process running as root that drops to another user (setuid, setresuid,
 * setpriv, su, runuser) would no longer be allowed to write the archive's
 * files (root's, 0644 in 0755 directories): its later windows, its part,
 * the images it execs (their parts, the unification by the last one) would
 * be lost or go to a second archive. So right before the drop, while it
 * still may, what the tracer wrote in the archive directory (procs/ and
 * its parts, ranks/, tracer.log) is handed to the new user, and the
 * directory itself when it holds nothing else (never the other files of a
 * directory TRACER_OUTPUT names). Runs in the private descriptor table
 * (fdtable.c). */

struct handover {
	uid_t uid;
	int foreign;   /* the archive directory holds something not the tracer's */
};

static void chown_entry(const char *path, const char *name, int type, void *ud)
{
	(void)name;
	const struct handover *h = ud;
	if (chown(path, h->uid, (gid_t)-1) == 0 && type == 4 /* DT_DIR */)
		tr_dir_each(path, chown_entry, ud);
}

/* What the tracer writes at the top of an archive directory. */
static int ours(const char *name)
{
	static const char *const names[] = { "procs", "ranks", "traces", "tracer.log", "traces.def", "traces.otf2" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 1;
	return !strncmp(name, "traces.", 7);   /* (.part, .tmp names of the unification) */
}

static void top_entry(const char *path, const char *name, int type, void *ud)
{
	struct handover *h = ud;
	if (!ours(name)) {
		h->foreign = 1;   /* never another file of a directory named by TRACER_OUTPUT */
		return;
	}
	chown_entry(path, name, type, ud);
}

static void chown_archive(void *ud)
{
	struct handover *h = ud;
	h->foreign = 0;
	tr_dir_each(tr_g.dir, top_entry, h);   /* procs/ and its parts, ranks/, tracer.log */
	if (!h->foreign)
		(void)chown(tr_g.dir, h->uid, (gid_t)-1);   /* the directory itself only when it is all ours */
	tr_tree_handover((unsigned)h->uid);
}

static void priv_drop(uid_t euid)
{
	if (euid == (uid_t)-1 || euid == 0 || geteuid() != 0 || !tr_g.initialized || !tr_g.active ||
	    tr_g.finishing || !tr_g.dir[0])
		return;
	int saved = errno;
	tr_fork_complete();   /* a fork child's files are made while it may, then handed over */
	struct handover h = { euid, 0 };
	tr_fd_private_call(chown_archive, &h);
	tr_log_debug("the archive directory was handed to uid %u (the process drops its privileges)", (unsigned)euid);
	errno = saved;
}


TR_EXPORT int setuid(uid_t u)
{
	TR_REAL_INIT(setuid);
	priv_drop(u);
	return tr_real.setuid(u);
}

TR_EXPORT int seteuid(uid_t e)
{
	TR_REAL_INIT(seteuid);
	priv_drop(e);
	return tr_real.seteuid(e);
}

TR_EXPORT int setreuid(uid_t r, uid_t e)
{
	TR_REAL_INIT(setreuid);
	priv_drop(e);
	return tr_real.setreuid(r, e);
}

TR_EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
	TR_REAL_INIT(setresuid);
	priv_drop(e);
	return tr_real.setresuid(r, e, s);
}

/* The flags of a raw clone or clone3 system call (struct clone_args:
 * flags first). */
static uint64_t clone_flags(long n, long a1)
{
	uint64_t flags = 0;
	if (n == SYS_clone)
		flags = (uint64_t)a1;
	else if (a1)
		memcpy(&flags, (const void *)a1, sizeof(flags));
	return flags;
}

/* glibc's clone() (chromium's sandbox makes its zygote and renderers
 * with it, in namespaces of their own): a child without CLONE_VM is a new
 * process, like a fork child, which must not go on recording into its
 * parent's locations (their shared file mappings: the parent's event
 * files came out corrupt). The child sets up its own part first, on the
 * tracer's own stack (the one it was given may be small: chromium's is
 * PTHREAD_STACK_MIN), then runs fn. */
struct clone_call {
	int (*fn)(void *);
	void *arg;
};

static void clone_child_init(void *unused)
{
	(void)unused;
	tr_atfork_child();
}

/* (a child whose fn returns ends with the exit system call, never
 * through exit or _exit: its archive is written here, as at _exit) */
static int clone_child(void *p)
{
	struct clone_call c = *(struct clone_call *)p;   /* (the parent's memory, copied) */
	int saved = errno;
	tr_crash_stack_run(clone_child_init, NULL);
	errno = saved;
	int r = c.fn(c.arg);
	tr_finish_status(r & 0xff, 1);
	return r;
}

TR_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	TR_REAL_INIT(clone);
	if (!fn || !stack || !tr_is_active() || tr_fd_private)
		return tr_real.clone(fn, stack, flags, arg, ptid, tls, ctid);
	if (flags & CLONE_FILES)   /* a thread glibc does not know */
		tr_fd_shared_clone();
	if (flags & (CLONE_VM | CLONE_THREAD))
		return tr_real.clone(fn, stack, flags, arg, ptid, tls, ctid);
	struct clone_call c = { fn, arg };
	int saved = errno;
	tr_atfork_prepare();
	errno = saved;
	int r = tr_real.clone(clone_child, stack, flags, &c, ptid, tls, ctid);
	saved = errno;
	tr_atfork_parent();
	errno = saved;
	return r;
}

TR_EXPORT long syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	if (tr_likely(n != SYS_seccomp && n != SYS_landlock_restrict_self && n != SYS_exit_group && n != SYS_clone &&
		      n != SYS_clone3))
		return tr_syscall6(n, a1, a2, a3, a4, a5, a6);
	if (!tr_is_active() || tr_fd_private)
		return tr_syscall6(n, a1, a2, a3, a4, a5, a6);
	switch (n) {
	case SYS_seccomp:
		if (a1 == 0 || a1 == 1)   /* SECCOMP_SET_MODE_STRICT, _FILTER (not the queries) */
			tr_sandbox_enter("seccomp()");
		break;
	case SYS_landlock_restrict_self:
		tr_sandbox_enter("landlock_restrict_self()");
		break;
	case SYS_exit_group:
		tr_finish_status((int)a1, 1);   /* (as _exit) */
		break;
	default:
		if (clone_flags(n, a1) & CLONE_FILES)   /* a thread glibc does not know */
			tr_fd_shared_clone();
		if (!(clone_flags(n, a1) & (CLONE_VM | CLONE_THREAD))) {   /* a new process, like fork */
			int saved = errno;
			tr_atfork_prepare();
			errno = saved;
			long r = tr_syscall6(n, a1, a2, a3, a4, a5, a6);
			saved = errno;
			if (r == 0)
				tr_atfork_child();
			else
				tr_atfork_parent();
			errno = saved;
			return r;
		}
	}
	return tr_syscall6(n, a1, a2, a3, a4, a5, a6);
}
