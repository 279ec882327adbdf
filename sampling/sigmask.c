/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sigmask.c - keep SIGPROF deliverable while the sampler owns it (module
 * "sigmask").
 *
 * Programs block signals in threads they start (liblzma's workers, thread
 * pools that leave signal handling to one thread): pthread_create gives the
 * new thread its creator's mask, and a thread with SIGPROF blocked would get
 * no sample at all. While the sampler owns SIGPROF (tr_smp_enabled), the
 * masks the program sets through pthread_sigmask, sigprocmask and
 * sigsuspend are passed on without SIGPROF; threads created with "every
 * signal blocked" then start with SIGPROF open. The sampler's handler is
 * async-signal-safe and touches no program state, so the program's
 * critical sections stay safe from its own handlers as before. The mask a
 * program reads back (the old set) is the kernel's: SIGPROF shows
 * unblocked. Calls made while the thread is inside the tracer or its
 * handler (libunwind blocking signals around its locks) pass unchanged;
 * libtracer.so's own calls never come here (tr_real.h). A mask set by a raw system call
 * (not through libc) is not seen: such a thread shows 0 % in the exit
 * line's under-delivery warning.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "smp_int.h"

static uint64_t smk_filtered;

/* The set to pass on: without SIGPROF when the program would block it. */
static inline const sigset_t *smk_filter(int how, const sigset_t *set, sigset_t *copy)
{
	if (!set || !tr_smp_enabled || tr_smp_callers_only || how == SIG_UNBLOCK || !sigismember(set, SIGPROF))
		return set;
	/* called on behalf of the tracer: libunwind blocks every signal
	 * around its locked slow path (a SIGPROF there would deadlock on its
	 * lock), also inside our handler */
	if (tr_smp_in_tracer())
		return set;
	*copy = *set;
	sigdelset(copy, SIGPROF);
	__atomic_fetch_add(&smk_filtered, 1, __ATOMIC_RELAXED);
	return copy;
}

/* Before our constructor resolved libc's (another library's constructor):
 * the system call, without the two signals glibc keeps for itself. */
static int smk_raw(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t c;
	if (set) {
		c = *set;
		sigdelset(&c, 32);
		sigdelset(&c, 33);
		set = &c;
	}
	return (int)tr_syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8));
}

TR_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t c;
	const sigset_t *s = smk_filter(how, set, &c);
	if (tr_real.pthread_sigmask)
		return tr_real.pthread_sigmask(how, s, old);
	return smk_raw(how, s, old) == 0 ? 0 : errno;
}

TR_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t c;
	const sigset_t *s = smk_filter(how, set, &c);
	if (tr_real.sigprocmask)
		return tr_real.sigprocmask(how, s, old);
	return smk_raw(how, s, old);
}

TR_EXPORT int sigsuspend(const sigset_t *mask)
{
	/* the thread blocks until a signal (dash's `wait` for its jobs:
	 * WNOHANG, then sigsuspend): what it recorded is published first
	 * (TRACER_DURABLE), as before the process waits (preload/core/procwait.c) */
	if (tr_tls_self)
		tr_durable_idle_often(tr_tls_self);
	sigset_t c;
	const sigset_t *s = smk_filter(SIG_SETMASK, mask, &c);
	if (tr_real.sigsuspend)
		return tr_real.sigsuspend(s);
	return (int)tr_syscall(SYS_rt_sigsuspend, s, (size_t)(_NSIG / 8));
}

static void smk_fini(void)
{
	if (smk_filtered)
		tr_log_debug("sampling: SIGPROF kept open in %llu signal masks the program set",
			     (unsigned long long)smk_filtered);
}

static const struct tr_module smk_module = {
	.name = "sigmask",
	.fini = smk_fini,
};

__attribute__((constructor(205))) static void smk_register(void)
{
	if (tr_smp_cfg.period_ns)
		tr_module_register(&smk_module);
}
