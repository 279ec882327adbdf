/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signals.c - termination and crash signals.
 *
 * We keep our own handler installed for the signals below and remember
 * the program's disposition (interposed sigaction/signal). On delivery:
 *  - program handler installed: it is called (with its flags: SA_SIGINFO,
 *    SA_RESETHAND); if it exits (exit/_exit/abort) the archive is written on
 *    that path; if it returns, the program goes on and so does tracing;
 *  - program disposition ignore: really ignored (installed as SIG_IGN);
 *  - default: termination signals write the whole archive (or, when the
 *    thread was interrupted inside the tracer or inside libc where it may
 *    hold the malloc lock, the emergency path); crash
 *    signals use otf2w_archive_close_emergency (no lock, no malloc). Then
 *    the default action runs (re-raised): the exit status and core dump seen
 *    by the parent are those without the tracer.
 * A termination signal that lands while its thread is inside a record
 * (in_record: the encoder is half-way through a record in the location's
 * buffer) is deferred: the handler returns at once, the thread completes
 * its record, and tr_rec_end (tracer.h) raises the signal again on the same
 * thread (its siginfo kept for a program's handler). So the location gets
 * its last records (ThreadEnd) like every other one; the delay is the rest
 * of one record (or of a buffer flush). The archive is then written by the
 * emergency path, as for a signal inside a record before (the record may
 * belong to a wrapper called by the allocator with its lock held). Crash
 * signals are not deferred.
 * SIGPROF/SIGUSR1/SIGUSR2 are left alone (sampling, MPI libraries).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include "tr_int.h"

static const int tr_term_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGXCPU, SIGXFSZ };
static const int tr_crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };

#define TR_NSIG 65
static struct sigaction tr_prog[TR_NSIG];   /* the program's disposition */
static unsigned char tr_managed[TR_NSIG];   /* 1 term, 2 crash */
static unsigned char tr_ours[TR_NSIG];      /* our handler is installed */
static volatile int tr_sig_ready;
static struct tr_lock tr_sig_lock = TR_LOCK_INIT;

static void tr_handler(int sig, siginfo_t *info, void *uctx);

/* Our action for sig, with the mask and flags of the program's handler
 * like (NULL: none). */
static void ours_like(int sig, const struct sigaction *like, struct sigaction *a)
{
	memset(a, 0, sizeof(*a));
	a->sa_sigaction = tr_handler;
	if (like)
		a->sa_mask = like->sa_mask;
	else
		sigemptyset(&a->sa_mask);
	a->sa_flags = SA_SIGINFO | (like ? (like->sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER)) : SA_RESTART);
	/* (fix) crash signals on the alternate stack (thread.c sets one up per
	 * traced thread): a stack overflow still writes the archive */
	if (tr_managed[sig] == 2)
		a->sa_flags |= SA_ONSTACK;
}

static int install_ours(int sig, const struct sigaction *like)
{
	struct sigaction a;
	ours_like(sig, like, &a);
	if (tr_real.sigaction(sig, &a, NULL) == 0) {
		tr_ours[sig] = 1;
		return 0;
	}
	return -1;
}

/* ---- where did the signal interrupt the program? ----
 * The full archive close allocates memory. A termination signal that lands
 * while its thread is inside libc (malloc holding an arena lock, stdio
 * holding a FILE lock, ...) would deadlock it: then the lock-free emergency
 * writer is used instead. The thread is considered safe when the
 * interrupted instruction is outside libc and ld.so, or is a blocking
 * system call wrapper of libc that malloc never uses (x86-64: decoded from
 * the code around the interrupted pc). */
#define TR_NTEXT 8
static uintptr_t tr_text_lo[TR_NTEXT], tr_text_hi[TR_NTEXT];
static int tr_ntext;

/* (fix) The object that defines malloc/free/calloc/realloc when it is not
 * libc (jemalloc, tcmalloc, mimalloc, or the program's own allocator in the
 * main executable): a pc anywhere in its text may hold the allocator's lock,
 * so it is always unsafe (no system call decoding: such allocators also wait
 * in futex calls while holding their own locks). */
#define TR_NALLOC 8
static uintptr_t tr_alloc_lo[TR_NALLOC], tr_alloc_hi[TR_NALLOC];
static int tr_nalloc;
static uintptr_t tr_alloc_fn[4];
static int tr_alloc_done;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *n = info->dlpi_name;
	(void)size;
	(void)data;
	if (!n || (!strstr(n, "/libc.so") && !strstr(n, "/ld-linux") && !strstr(n, "/ld64.so") &&
		   strncmp(n, "libc.so", 7)))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && tr_ntext < TR_NTEXT; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		tr_text_lo[tr_ntext] = info->dlpi_addr + ph->p_vaddr;
		tr_text_hi[tr_ntext] = tr_text_lo[tr_ntext] + ph->p_memsz;
		tr_ntext++;
	}
	return 0;
}

static int in_libc(uintptr_t pc)
{
	for (int i = 0; i < tr_ntext; i++)
		if (pc >= tr_text_lo[i] && pc < tr_text_hi[i])
			return 1;
	return 0;
}

/* (fix) records the executable segments of every object whose loaded
 * segments contain one of tr_alloc_fn (the allocator's entry points). */
static int alloc_phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int hit = 0;
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum && !hit; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		for (int k = 0; k < 4; k++)
			if (tr_alloc_fn[k] >= lo && tr_alloc_fn[k] < hi)
				hit = 1;
	}
	for (int i = 0; hit && i < info->dlpi_phnum && tr_nalloc < TR_NALLOC; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		tr_alloc_lo[tr_nalloc] = info->dlpi_addr + ph->p_vaddr;
		tr_alloc_hi[tr_nalloc] = tr_alloc_lo[tr_nalloc] + ph->p_memsz;
		tr_nalloc++;
	}
	return 0;
}

/* (fix) at init: where do malloc & co. come from? (libc: already covered) */
static void find_allocator(void)
{
	static const char *const fn[4] = { "malloc", "free", "calloc", "realloc" };
	int any = 0;
	if (tr_alloc_done)
		return;
	tr_alloc_done = 1;
	for (int k = 0; k < 4; k++) {
		uintptr_t a = (uintptr_t)tr_sym_default(fn[k]);
		if (a && !in_libc(a)) {
			tr_alloc_fn[k] = a;
			any = 1;
		}
	}
	if (any)
		dl_iterate_phdr(alloc_phdr_cb, NULL);
}

static int in_alloc(uintptr_t pc)
{
	for (int i = 0; i < tr_nalloc; i++)
		if (pc >= tr_alloc_lo[i] && pc < tr_alloc_hi[i])
			return 1;
	return 0;
}

/* 1 if the interrupted thread may hold a libc (or allocator) lock the full
 * close needs. */
static int tr_interrupted_in_libc(void *uctx)
{
	if (!uctx || (!tr_ntext && !tr_nalloc))
		return 0;
#if defined(__x86_64__)
	const ucontext_t *uc = uctx;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	long rax = (long)uc->uc_mcontext.gregs[REG_RAX];
	if (in_alloc(pc))
		return 1;   /* (fix) inside a non-libc allocator */
	if (!in_libc(pc))
		return 0;
	const uint8_t *p = (const uint8_t *)pc;
	long nr = -1;
	if (in_libc(pc + 1) && p[0] == 0x0f && p[1] == 0x05) {
		/* at a syscall instruction (restarted call, or about to enter):
		 * rax holds the number */
		nr = rax;
	} else if (in_libc(pc - 7) && p[-2] == 0x0f && p[-1] == 0x05 && p[-7] == 0xb8) {
		/* just after "mov $nr, %eax; syscall" */
		int32_t imm;
		memcpy(&imm, p - 6, 4);
		nr = imm;
	}
	switch (nr) {
	case -1:
	case SYS_mmap:
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_brk:
	case SYS_mremap:
	case SYS_madvise:
		return 1;   /* unknown place in libc, or a system call of malloc */
	default:
		return 0;   /* blocked in (or returning from) another system call */
	}
#elif defined(__aarch64__)
	const ucontext_t *uc = uctx;
	return in_libc((uintptr_t)uc->uc_mcontext.pc) || in_alloc((uintptr_t)uc->uc_mcontext.pc);
#else
	return 0;
#endif
}

/* 1 if another signal handler may be running below this one on the
 * thread's stack: a signal that has a handler is blocked in the interrupted
 * context's mask (a handler runs with its own signal blocked: the
 * sampler's SIGPROF handler, a program's handler, one of ours chained).
 * That frame's own interrupted context (inside malloc, inside a record)
 * is not visible from here, so the full close is not safe. */
static int tr_nested_handler(void *uctx)
{
	if (!uctx || !tr_real.sigaction)
		return 0;
	const ucontext_t *uc = uctx;
	for (int sig = 1; sig < TR_NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || !sigismember(&uc->uc_sigmask, sig))
			continue;
		struct sigaction a;
		if (tr_real.sigaction(sig, NULL, &a) == 0 && a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN)
			return 1;
	}
	return 0;
}

void tr_signals_init(void)
{
	if (!tr_real.sigaction)
		return;
	if (!tr_ntext)
		dl_iterate_phdr(phdr_cb, NULL);
	find_allocator();   /* (fix) after the libc ranges are known */
	for (size_t i = 0; i < sizeof(tr_term_sigs) / sizeof(int); i++)
		tr_managed[tr_term_sigs[i]] = 1;
	for (size_t i = 0; i < sizeof(tr_crash_sigs) / sizeof(int); i++)
		tr_managed[tr_crash_sigs[i]] = 2;
	if (!tr_g.active)
		return;
	/* Ours installed and the program's read in one call per signal (a new
	 * image has only SIG_DFL and SIG_IGN): put back when it was SIG_IGN,
	 * set again with its mask and flags when it was a handler. The crash
	 * signals are blocked meanwhile, as the termination signals are here
	 * (init.c): one sent in between waits, and is then dropped by SIG_IGN
	 * or handled as the program's disposition says - never by ours
	 * before that disposition is known. */
	sigset_t crash, was;
	sigemptyset(&crash);
	for (size_t i = 0; i < sizeof(tr_crash_sigs) / sizeof(int); i++)
		sigaddset(&crash, tr_crash_sigs[i]);
	tr_real.pthread_sigmask(SIG_BLOCK, &crash, &was);
	for (int sig = 1; sig < TR_NSIG; sig++) {
		if (!tr_managed[sig])
			continue;
		struct sigaction ours, old;
		ours_like(sig, NULL, &ours);
		if (tr_real.sigaction(sig, &ours, &old))
			continue;
		tr_prog[sig] = old;
		if (old.sa_handler == SIG_IGN) {
			tr_real.sigaction(sig, &old, NULL);   /* e.g. nohup: stays ignored */
			continue;
		}
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			install_ours(sig, &old);   /* the program's mask and flags */
		else
			tr_ours[sig] = 1;   /* (as install_ours(sig, NULL) sets it) */
	}
	tr_real.pthread_sigmask(SIG_SETMASK, &was, NULL);
	tr_sig_ready = 1;
}

/* Termination signals blocked while the archive is written (a second
 * Ctrl-C must not kill the process half-way); delivered afterwards. */
void tr_signals_block(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(tr_term_sigs) / sizeof(int); i++)
		sigaddset(&set, tr_term_sigs[i]);
	tr_real.pthread_sigmask(SIG_BLOCK, &set, old);
}

void tr_signals_restore(const sigset_t *old)
{
	tr_real.pthread_sigmask(SIG_SETMASK, old, NULL);
}

void tr_signals_fork_child(void)
{
	tr_sig_lock.v = 0;
}

static void default_action(int sig)
{
	struct sigaction a;
	sigset_t set;
	memset(&a, 0, sizeof(a));
	a.sa_handler = SIG_DFL;
	sigemptyset(&a.sa_mask);
	if (tr_real.sigaction)
		tr_real.sigaction(sig, &a, NULL);
	tr_ours[sig] = 0;
	tr_syscall(SYS_tgkill, getpid(), gettid(), sig);
	sigemptyset(&set);
	sigaddset(&set, sig);
	tr_real.sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* a fault re-executes the instruction with the default action */
}

/* ---- termination signals inside a record ---- */

/* The siginfo of the first deferred signal of this thread (for a program
 * handler: it sees the sender, not our re-raise). */
static TR_TLS siginfo_t tr_tls_definfo;
static TR_TLS int tr_tls_definfo_sig;
/* the signal tr_rec_deferred raises again right now */
static TR_TLS volatile int tr_tls_reraise;

/* tgkill from our own text (not libc's syscall()): the re-raised signal
 * then interrupts libtracer.so, and the handler does not take the place
 * for "inside libc" (which would force the emergency path). */
static long raw_tgkill(long pid, long tid, long sig)
{
#if defined(__x86_64__)
	long ret;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "0"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"(sig)
			     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_tgkill;
	register long x0 __asm__("x0") = pid;
	register long x1 __asm__("x1") = tid;
	register long x2 __asm__("x2") = sig;
	__asm__ __volatile__("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#else
	return tr_syscall(SYS_tgkill, pid, tid, sig);
#endif
}

/* The handler, on a thread inside a record: note sig (1 = deferred). */
static int defer_signal(struct tr_thread *t, int sig, const siginfo_t *info)
{
	if (sig >= 32 || !t || !t->in_record)
		return 0;
	uint32_t bit = 1u << sig;
	if (!(t->sig_deferred & bit) && !tr_tls_definfo_sig && info) {
		tr_tls_definfo = *info;
		tr_tls_definfo_sig = sig;
	}
	__atomic_fetch_or(&t->sig_deferred, bit, __ATOMIC_SEQ_CST);   /* twice: merged, as the kernel does */
	return 1;
}

/* tr_rec_end saw a deferred signal: the record is complete, raise it again
 * on this thread (delivered before tgkill returns, unless the thread blocks
 * it now: then when it unblocks it). Async-signal-safe. */
void tr_rec_deferred(struct tr_thread *t)
{
	uint32_t m;
	while (!t->in_record && (m = __atomic_load_n(&t->sig_deferred, __ATOMIC_SEQ_CST)) != 0) {
		int sig = __builtin_ctz(m);
		__atomic_fetch_and(&t->sig_deferred, ~(1u << sig), __ATOMIC_SEQ_CST);
		int saved = errno;
		tr_tls_reraise = sig;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		raw_tgkill(getpid(), gettid(), sig);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		tr_tls_reraise = 0;
		errno = saved;
	}
}

static void tr_handler(int sig, siginfo_t *info, void *uctx)
{
	int saved = errno;
	struct sigaction p = tr_prog[sig];
	int reraised = 0;

	if (tr_managed[sig] == 1 && p.sa_handler != SIG_IGN) {
		if (defer_signal(tr_tls_self, sig, info)) {
			errno = saved;
			return;
		}
		reraised = tr_tls_reraise == sig;
		if (reraised && tr_tls_definfo_sig == sig) {
			info = &tr_tls_definfo;   /* our re-raise: the sender's siginfo */
			tr_tls_definfo_sig = 0;
		}
	}
	if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
		if (p.sa_flags & SA_RESETHAND) {
			tr_prog[sig].sa_handler = SIG_DFL;
			tr_prog[sig].sa_flags &= ~(SA_RESETHAND | SA_SIGINFO);
		}
		if (p.sa_flags & SA_SIGINFO)
			p.sa_sigaction(sig, info, uctx);
		else
			p.sa_handler(sig);
		errno = saved;
		return;
	}
	if (p.sa_handler == SIG_IGN) {
		errno = saved;
		return;
	}
	struct tr_thread *t = tr_tls_self;
	sigset_t old;
	tr_signals_block(&old);
	/* a deferred signal (reraised): the record may have been written by
	 * a wrapper that the allocator called (jemalloc's locks go through the
	 * pthread wrappers) with its lock held, which the pc does not show:
	 * the lock-free path, as for a signal inside the record itself */
	if (tr_managed[sig] == 1 && !reraised && tr_tls_internal == 0 && !(t && t->in_record) &&
	    !tr_tls_creating && !tr_interrupted_in_libc(uctx) && !tr_nested_handler(uctx))
		tr_finish_status(128 + sig, 1);
	else
		tr_emergency(sig);
	default_action(sig);
	errno = saved;
}

/* ---- interposed signal / sigaction ---- */

static int tr_sigaction_impl(int sig, const struct sigaction *act, struct sigaction *old)
{
	/* Before the program's handler is installed, so no SIGPROF of the
	 * sampler's timers reaches it (SIGPROF is not a managed signal: this
	 * comes before the early return below). */
	if (sig == SIGPROF && act && act->sa_handler != SIG_IGN && act->sa_handler != SIG_DFL)
		tr_modules_sigaction(sig, act);   /* the sampler hands SIGPROF over */
	if (sig <= 0 || sig >= TR_NSIG || !tr_managed[sig] || !tr_sig_ready)
		return tr_real.sigaction(sig, act, old);
	tr_lock(&tr_sig_lock);
	struct sigaction prev = tr_prog[sig];
	int ret = 0;
	if (act) {
		if (act->sa_handler == SIG_IGN) {
			ret = tr_real.sigaction(sig, act, NULL);
			if (ret == 0)
				tr_ours[sig] = 0;
		} else if (tr_g.active || tr_ours[sig]) {
			ret = install_ours(sig, act);
		} else {
			ret = tr_real.sigaction(sig, act, NULL);
		}
		if (ret == 0)
			tr_prog[sig] = *act;
	}
	tr_unlock(&tr_sig_lock);
	if (ret == 0 && old)
		*old = prev;
	return ret;
}

TR_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	TR_REAL_INIT(sigaction);
	if (!tr_g.initialized && !tr_g.initializing)
		tr_init();
	return tr_sigaction_impl(sig, act, old);
}

TR_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction a, old;
	TR_REAL_INIT(sigaction);
	if (!tr_g.initialized && !tr_g.initializing)
		tr_init();
	memset(&a, 0, sizeof(a));
	a.sa_handler = handler;
	sigemptyset(&a.sa_mask);
	if (sig > 0 && sig < TR_NSIG)
		sigaddset(&a.sa_mask, sig);
	a.sa_flags = SA_RESTART;   /* BSD semantics, as glibc's signal() */
	if (tr_sigaction_impl(sig, &a, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

TR_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

TR_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	struct sigaction a, old;
	TR_REAL_INIT(sigaction);
	memset(&a, 0, sizeof(a));
	a.sa_handler = handler;
	sigemptyset(&a.sa_mask);
	a.sa_flags = SA_RESETHAND | SA_NODEFER;
	if (tr_sigaction_impl(sig, &a, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
