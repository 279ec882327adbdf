/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * source.c - where the sampler's SIGPROF signals come from.
 *
 * In order of preference:
 *   perf     one perf event per thread (perf_event_open on the calling
 *            thread, pid 0, user mode only so perf_event_paranoid 2 allows
 *            it): the software task-clock event for TRACER_SAMPLING=<period>
 *            (timed by high-resolution timers: the period asked for is the
 *            period delivered), or a hardware event for cycles@N /
 *            instructions@N. Overflows are signalled to that thread only:
 *            O_ASYNC + F_SETSIG(SIGPROF) + F_SETOWN_EX(F_OWNER_TID). The
 *            siginfo then carries si_code POLL_IN and si_fd = the event's fd.
 *   timer    a POSIX timer on the thread's CPU-time clock (SIGEV_THREAD_ID),
 *            where perf events are refused. The kernel checks CPU-time
 *            timers at its tick: at most HZ signals per second and thread,
 *            measured once at start and said in one line.
 *   itimer   setitimer(ITIMER_PROF): process CPU time, whichever thread runs.
 *
 * The perf descriptors live among the program's: they are moved high
 * (F_DUPFD_CLOEXEC above most of the RLIMIT_NOFILE range) so that dup2()
 * to small numbers and "close every fd from 3" loops that stop at the usual
 * limits rarely meet them, and every use after the start (disable, close,
 * read) first checks that the number still names our event (same anonymous
 * inode and the PERF_EVENT_IOC_ID given at open): a program that closed it
 * (close_range) and reused the number never sees us touch its file. We
 * never write to them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "smp_int.h"

int tr_smp_mode;
int tr_smp_marker;
uint64_t tr_smp_period;
static struct itimerspec src_its;
static struct perf_event_attr src_attr;
static int src_fd_min = -1;          /* F_DUPFD_CLOEXEC target (-1: keep the number) */
static uint64_t src_timer_hz;        /* fallback: signals/s a thread can get */

int tr_smp_real_setitimer(int which, const struct itimerval *v, struct itimerval *o)
{
	return (int)tr_syscall(SYS_setitimer, which, v, o);
}

static long src_perf_open(struct perf_event_attr *a)
{
	return tr_syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *src_perf_why(int err)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
		return "the processor exposes no such counter here, e.g. a VM without a PMU";
	case EACCES:
	case EPERM:
		return "not permitted by perf_event_paranoid, seccomp or a container policy";
	case ENOSYS:
		return "no perf_event_open in this kernel";
	default:
		return strerror(err);
	}
}

/* CPU time of a thread of this process (ns), by kernel tid. */
uint64_t tr_smp_thread_cpu_ns(int tid)
{
	struct timespec ts;
	clockid_t c = (clockid_t)((~(unsigned)tid << 3) | 6u);   /* MAKE_THREAD_CPUCLOCK(tid, SCHED) */
	if (clock_gettime(c, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Fallback: the most signals per second a thread's CPU-time timer can
 * deliver, the kernel's tick (CONFIG_HZ): the resolution of the coarse
 * clock is one tick. Not measured: a probe of the timer itself counted
 * half the ticks while the thread shared its core at start-up, and the
 * tracer then announced less than the timer later delivered. */
static uint64_t src_tick_hz(void)
{
	struct timespec res;
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || res.tv_sec || res.tv_nsec < 100000)
		return 0;   /* (0: unknown, the asked rate is announced) */
	return 1000000000ull / (uint64_t)res.tv_nsec;
}

static void src_fd_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= 1024)
		src_fd_min = (int)(rl.rlim_cur - rl.rlim_cur / 8);
	else if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
		src_fd_min = 1 << 20;
}

int tr_smp_src_setup(uint64_t period, uint32_t event, uint32_t *ig)
{
	char name[160];
	tr_smp_period = period;
	memset(&src_attr, 0, sizeof(src_attr));
	src_attr.size = sizeof(src_attr);
	src_attr.disabled = 1;
	src_attr.exclude_kernel = 1;
	src_attr.exclude_hv = 1;
	src_attr.wakeup_events = 1;
	src_attr.sample_period = period;
	const char *evname = "task-clock";
	if (event == TR_SMP_EVENT_CYCLES || event == TR_SMP_EVENT_INSTRUCTIONS) {
		src_attr.type = PERF_TYPE_HARDWARE;
		src_attr.config = event == TR_SMP_EVENT_CYCLES ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_HW_INSTRUCTIONS;
		evname = event == TR_SMP_EVENT_CYCLES ? "cycles" : "instructions";
	} else {
		src_attr.type = PERF_TYPE_SOFTWARE;
		src_attr.config = PERF_COUNT_SW_TASK_CLOCK;
	}
	src_fd_floor();
	long fd = src_perf_open(&src_attr);
	int err = errno;
	if (fd >= 0)
		tr_real.close((int)fd);
	if (fd >= 0) {
		tr_smp_mode = SMP_MODE_PERF;
		if (event) {
			snprintf(name, sizeof(name), "perf_event %s overflow (SIGPROF, every %llu events)", evname,
				 (unsigned long long)period);
			*ig = tr_def_interrupt_generator(name, OTF2W_INTERRUPT_COUNT, OTF2W_BASE_DECIMAL, 0, period);
		} else {
			snprintf(name, sizeof(name), "perf_event task-clock (SIGPROF, every %llu ns of thread CPU time)",
				 (unsigned long long)period);
			*ig = tr_def_interrupt_generator(name, OTF2W_INTERRUPT_TIME, OTF2W_BASE_DECIMAL, -9, period);
		}
		return 0;
	}
	if (event) {
		tr_log_warn("sampling: %s@%llu unavailable: perf_event_open of the %s counter failed: %s; sampling off",
			    evname, (unsigned long long)period, evname, src_perf_why(err));
		return -1;
	}
	/* fallback: POSIX CPU-time timers, else setitimer */
	src_its.it_interval.tv_sec = (time_t)(period / 1000000000ull);
	src_its.it_interval.tv_nsec = (long)(period % 1000000000ull);
	src_its.it_value = src_its.it_interval;
	struct sigevent sev;
	timer_t probe;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)tr_syscall(SYS_gettid);
	const char *perf_why = src_perf_why(err);
	uint64_t ig_period = period;
	uint64_t asked = 1000000000ull / period;
	if (tr_syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &sev, &probe) == 0) {
		tr_syscall(SYS_timer_delete, probe);
		tr_smp_mode = SMP_MODE_TIMER;
		src_timer_hz = src_tick_hz();
		uint64_t can = src_timer_hz && src_timer_hz < asked ? src_timer_hz : asked;
		tr_log_warn("sampling: perf events refused: %s; using CPU-time timers, which the kernel checks at "
			    "its tick: at most %llu samples/s per thread of CPU (asked %llu/s)",
			    perf_why, (unsigned long long)can, (unsigned long long)asked);
		snprintf(name, sizeof(name), "CPU-time timer (SIGPROF, asked every %llu ns, at most %llu/s)",
			 (unsigned long long)period, (unsigned long long)can);
		/* the period it really delivers */
		if (can && can < asked)
			ig_period = 1000000000ull / can;
	} else {
		tr_smp_mode = SMP_MODE_ITIMER;
		tr_log_warn("sampling: perf events refused: %s, and per-thread CPU-time timers unavailable (%s); "
			    "using setitimer(ITIMER_PROF): process CPU time, delivered to whichever thread runs, "
			    "at most the kernel's tick rate", perf_why, strerror(errno));
		snprintf(name, sizeof(name), "setitimer ITIMER_PROF (SIGPROF, every %llu ns of process CPU time)",
			 (unsigned long long)period);
	}
	*ig = tr_def_interrupt_generator(name, OTF2W_INTERRUPT_TIME, OTF2W_BASE_DECIMAL, -9, ig_period);
	return 0;
}

/* Does src->fd still name the event we opened? */
int tr_smp_src_valid(const struct smp_src *src)
{
	struct stat st;
	uint64_t id = 0;
	if (src->fd < 0 || tr_real.fstat(src->fd, &st) != 0)
		return 0;
	if ((uint64_t)st.st_dev != src->dev || (uint64_t)st.st_ino != src->ino)
		return 0;
	return ioctl(src->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == src->id;
}

/* Start the calling thread's source. 0, or an errno value. */
int tr_smp_src_start(struct smp_src *src)
{
	src->fd = -1;
	src->ok = 0;
	if (tr_smp_mode == SMP_MODE_ITIMER)
		return 0;
	pid_t tid = (pid_t)tr_syscall(SYS_gettid);
	if (tr_smp_mode == SMP_MODE_TIMER) {
		struct sigevent sev;
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGPROF;
		sev.sigev_value.sival_ptr = &tr_smp_marker;
		sev._sigev_un._tid = tid;
		if (tr_syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &sev, &src->timer) != 0)
			return errno;
		if (tr_syscall(SYS_timer_settime, src->timer, 0, &src_its, NULL) != 0) {
			int e = errno;
			tr_syscall(SYS_timer_delete, src->timer);
			return e;
		}
		src->ok = 1;
		return 0;
	}
	long r = src_perf_open(&src_attr);
	if (r < 0)
		return errno;
	int fd = (int)r;
	if (src_fd_min > fd) {
		int hi = tr_real.fcntl(fd, F_DUPFD_CLOEXEC, src_fd_min);
		if (hi >= 0) {
			tr_real.close(fd);
			fd = hi;
		}
	}
	struct f_owner_ex own = { F_OWNER_TID, tid };
	struct stat st;
	int e = 0;
	if (tr_real.fcntl(fd, F_SETSIG, SIGPROF) != 0 || tr_real.fcntl(fd, F_SETOWN_EX, &own) != 0 ||
	    tr_real.fcntl(fd, F_SETFL, tr_real.fcntl(fd, F_GETFL) | O_ASYNC) != 0 || ioctl(fd, PERF_EVENT_IOC_ID, &src->id) != 0 ||
	    tr_real.fstat(fd, &st) != 0)
		e = errno ? errno : EINVAL;
	if (!e) {
		src->dev = (uint64_t)st.st_dev;
		src->ino = (uint64_t)st.st_ino;
		src->fd = fd;
		if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
			e = errno ? errno : EINVAL;
	}
	if (e) {
		tr_real.close(fd);
		src->fd = -1;
		return e;
	}
	src->ok = 1;
	return 0;
}

/* Stop a thread's source (any thread). Returns 0, or 1 when the program had
 * closed (and maybe reused) our descriptor: then it is left alone. */
int tr_smp_src_stop(struct smp_src *src)
{
	if (!src->ok)
		return 0;
	src->ok = 0;
	if (tr_smp_mode == SMP_MODE_TIMER) {
		tr_syscall(SYS_timer_delete, src->timer);
		return 0;
	}
	if (src->fd < 0)
		return 0;
	int fd = src->fd;
	src->fd = -1;
	if (!tr_smp_src_valid(&(struct smp_src){ .fd = fd, .id = src->id, .dev = src->dev, .ino = src->ino }))
		return 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	tr_real.close(fd);
	return 0;
}

/* fork child: the inherited descriptor counts the parent's thread and
 * signals it; close it (after the check) without disabling it. */
void tr_smp_src_forget(struct smp_src *src)
{
	if (src->ok && tr_smp_mode == SMP_MODE_PERF && src->fd >= 0 && tr_smp_src_valid(src))
		tr_real.close(src->fd);
	src->fd = -1;
	src->ok = 0;
}

void tr_smp_src_process(int on)
{
	if (tr_smp_mode != SMP_MODE_ITIMER)
		return;
	struct itimerval iv;
	memset(&iv, 0, sizeof(iv));
	if (on) {
		iv.it_interval.tv_sec = (time_t)(tr_smp_period / 1000000000ull);
		iv.it_interval.tv_usec = (suseconds_t)(tr_smp_period % 1000000000ull / 1000);
		if (!iv.it_interval.tv_sec && !iv.it_interval.tv_usec)
			iv.it_interval.tv_usec = 1;
		iv.it_value = iv.it_interval;
	}
	tr_smp_real_setitimer(ITIMER_PROF, &iv, NULL);
}
