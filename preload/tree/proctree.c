/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proctree.c - one archive for a whole process tree (TRACER_TREE=one).
 *
 * Every process image of a tree writes a part below the one directory DIR:
 * DIR/procs/parts/<location>.evt (its event files: the root's in
 * DIR/procs/proc0/, preload/archive/archive.c) and its packed definitions, for the
 * unification, with its end "<events> <locations>" after them: two
 * records of DIR/procs/parts.tdefs (tree_files.h: no file of its own),
 * or its own proc<N>.tdefs with a line "#tracer-end ..." appended when a
 * durability tick saved them there (and always for the root); proc<N>.end
 * when that fails or tracer recover marks a killed part. The root (part 0)
 * also writes proc0.otf2 and proc0.def, a standalone archive that becomes
 * the archive when it stays alone (promote_single). N comes from the
 * counter DIR/procs/tree (flock): the root is 0, the file is made by the
 * first other part (a lone root makes none). Membership: the live entries
 * DIR/procs/live.<pid>.<start>.<part>.<self> (tree_files.h: hard links,
 * no inode a process; start time: field 22 of /proc/<pid>/stat, against
 * pid reuse; self 0: written by the parent for a child that has not
 * started the tracer yet) and the per-user registry
 * /tmp/.tracer-<uid>/<pid>, a symbolic link to DIR. A new image looks up
 * its own pid (exec'd by a member, or registered by its parent), then its
 * parent's pid, then its own pid again (the parent may have registered it
 * and ended in between); found: it joins DIR with that part as creator.
 *
 * At its real end (not at exec) a member writes its part, then, under the
 * flock of the DIR/procs directory, registers its running children, removes its own live entry and
 * counts the members still running (same start time, not a zombie,
 * registered by itself, the tracer mapped; an entry that is not so within
 * 1 s is an untraced program or a launcher helper: not waited for). The member that finds none runs
 * bin/tracer-merge (next to lib/libtracer.so) on DIR and waits for it; from
 * the crash path it is started detached. TRACER_DURABLE: every part is
 * durable; tracer-merge first recovers the parts of members that were
 * killed (tools/recover.c). Under tracer-run (TRACER_LAUNCHER)
 * tracer-run unifies when its subtree has ended: members only leave.
 * Every function that the crash path reaches is async-signal-safe (no
 * malloc, no stdio, no lock but the flock with a bounded wait).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tr_int.h"
#include "proctree.h"
#include "proctree_int.h"

struct tr_tree tr_tree = { .part = -1, .creator = -1 };

static int tr_tree_deferred;       /* tr_tree_lone_root let NAME.tdefs wait */
static uint64_t tr_self_start;     /* this process's start time */
static struct tr_helper tr_merge;  /* bin/tracer-merge --final DIR (spawn.c) */
static int tr_merge_ok;            /* prepared: the tool is installed */
static char tr_merge_log[4200];

/* 1 when pid is an ancestor of this process (its parent chain, up to init
 * or an MPI launcher's helper daemon). */
int tr_tree_is_ancestor(int pid)
{
	pid_t p = getppid();
	for (int i = 0; i < 64 && p > 1; i++) {
		if (p == pid)
			return 1;
		pid_t pp = 0;
		if (!tr_pt_proc_start(p, NULL, &pp))
			return 0;
		p = pp;
	}
	return 0;
}

/* ---- start ---- */

/* A registry link of a process that is gone (killed by SIGKILL): removed
 * by the next root. */
static void reg_stale(const char *name, void *ud)
{
	char r[128];
	const char *s = name;
	pid_t pid = (pid_t)tr_pt_num(&s);
	if (*s || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
		return;
	snprintf(r, sizeof(r), "%s/%s", tr_reg, name);
	tr_real.unlink(r);
}

int tr_tree_prepare(char *dir, size_t n)
{
	tr_tree.on = 0;
	tr_tree.by_parent = 0;
	tr_env_dir[0] = 0;
	if (tr_cfg.output[0] == '/') {
		snprintf(tr_env_dir, sizeof(tr_env_dir), "%s", tr_cfg.output);
		for (size_t l = strlen(tr_env_dir); l > 1 && tr_env_dir[l - 1] == '/';)
			tr_env_dir[--l] = 0;
	}
	/* (without a directory in the environment the tree is found through
	 * the registry only) */
	if (tr_cfg.tree != TR_TREE_ONE || tr_g.mpi_expected || (!tr_env_dir[0] && !tr_pt_reg_usable()))
		return -1;
	tr_tree.on = 1;
	tr_self_start = tr_pt_proc_start(tr_self_pid(), NULL, NULL);
	pid_t pp = getppid();
	uint64_t pstart = tr_pt_proc_start(pp, NULL, NULL);
	int part = tr_pt_lookup(tr_self_pid(), tr_self_start, pp, pstart, dir, n, &tr_tree.by_parent);
	if (part >= 0) {
		int mine = tr_pt_take_part(dir);
		if (mine > 0) {
			tr_tree.creator = part;
			tr_tree.part = mine;
			return 1;
		}
	}
	tr_tree.by_parent = 0;
	tr_tree.creator = -1;
	/* under tracer-run (its directory named by the environment, its tree
	 * started): a process that no member registered - its parent died
	 * before it started the tracer, an orphan - is still of the run, a
	 * part without creator, never an archive DIR.1 nobody unifies */
	char t[4200];
	snprintf(t, sizeof(t), "%.4000s/procs", tr_env_dir);   /* (the root made it) */
	if (tr_env_dir[0] && tr_getenv("TRACER_LAUNCHER") && access(t, F_OK) == 0) {
		snprintf(dir, n, "%s", tr_env_dir);
		int mine = tr_pt_take_part(dir);
		if (mine > 0) {
			tr_tree.part = mine;
			return 1;
		}
	}
	tr_tree.part = 0;   /* choose_dir claims procs/proc0 of a fresh directory */
	if (tr_pt_reg_usable())
		tr_pt_each_entry(tr_reg, reg_stale, NULL);
	return 0;
}

/* bin/tracer-merge --final DIR ready to run, also from the crash path
 * (which may not allocate: prepared beforehand). */
static void prepare_merge(void)
{
	static const char *const args[] = { "--final", tr_tree_dir, NULL };
	snprintf(tr_merge_log, sizeof(tr_merge_log), "%.4000s/procs/tracer-merge.log", tr_tree_dir);
	tr_merge_ok = tr_helper_prepare(&tr_merge, "tracer-merge", args, tr_merge_log) == 0;
	tr_merge.append = 1;
}

void tr_tree_started(const char *dir)
{
	snprintf(tr_tree_dir, sizeof(tr_tree_dir), "%s", dir);
	/* its own live entry needs its registry link too when the directory
	 * is not tr_env_dir (a default name, a relative TRACER_OUTPUT, DIR.1 of
	 * a second run): its children could not find it from their environment */
	int reg = !tr_env_dir[0] || strcmp(tr_env_dir, dir) != 0;
	snprintf(tr_tree.gname, sizeof(tr_tree.gname), "%.255s (pid %d)", tr_proc.progname, (int)tr_self_pid());
	tr_defs_process_renamed();
	if (tr_pt_live_write(dir, tr_self_pid(), tr_self_start, tr_tree.part, 1, reg) == 0)
		tr_pt_live_drop_others(dir, tr_self_pid(), tr_live_own);
	/* under tracer-run, which unifies, a member never runs tracer-merge:
	 * prepared at the end then, if at all (unify) */
	if (!tr_getenv("TRACER_LAUNCHER"))
		prepare_merge();
}

/* The process (root) is about to become uid: its entry in uid's registry
 * too (/tmp/.tracer-<uid>, made for uid), so the images it execs after
 * the drop find the tree (its files were handed to uid: sandbox.c). */
void tr_tree_handover(unsigned uid)
{
	char reg[64], r[128], t[160];
	struct stat st;
	if (!tr_tree.on || !tr_tree_dir[0] || !tr_pt_reg_usable())
		return;
	snprintf(reg, sizeof(reg), "/tmp/.tracer-%u", uid);
	if (mkdir(reg, 0700) == 0) {
		if (chown(reg, (uid_t)uid, (gid_t)-1) != 0) {
			rmdir(reg);
			return;
		}
	}
	if (tr_real.lstat(reg, &st) || !S_ISDIR(st.st_mode) || (st.st_mode & 077))
		return;
	/* one root made and left (an earlier handover cut short): ours to give */
	if (st.st_uid != (uid_t)uid && (st.st_uid != 0 || chown(reg, (uid_t)uid, (gid_t)-1) != 0))
		return;
	snprintf(r, sizeof(r), "%s/%d", reg, (int)tr_self_pid());
	snprintf(t, sizeof(t), "%s/%d.t%d", reg, (int)tr_self_pid(), (int)tr_self_pid());
	tr_real.unlink(t);
	if (symlink(tr_tree_dir, t) || lchown(t, (uid_t)uid, (gid_t)-1) || tr_real.rename(t, r))
		tr_real.unlink(t);
}

int tr_tree_fork_child(const char *dir)
{
	if (!tr_tree.on)
		return -1;
	tr_self_start = tr_pt_proc_start(tr_self_pid(), NULL, NULL);
	tr_live_own[0] = 0;   /* (the parent's) */
	tr_reg_own = 0;
	int part = tr_pt_take_part(dir);
	if (part <= 0)
		return -1;
	tr_tree.creator = tr_tree.part;
	tr_tree.part = part;
	tr_tree.exec = 0;
	tr_tree_started(dir);
	return 0;
}

void tr_tree_discard(char *const envp[])
{
	char own[sizeof(tr_live_own)];
	if (!tr_tree.on)
		return;
	/* the exec'd image names the fork parent as its creator; it finds the
	 * entry through the registry only when its environment does not name
	 * the directory (a symbolic link less to make in /tmp, 0.1-0.3 ms on
	 * this ext4, for most fork + exec children) */
	int reg = !tr_pt_env_names(envp, tr_tree_dir);
	snprintf(own, sizeof(own), "%s", tr_live_own);
	if (tr_pt_live_write(tr_tree_dir, tr_self_pid(), tr_self_start, tr_tree.creator, 0, reg) == 0 && own[0]) {
		tr_pt_live_unlink(tr_tree_dir, own);
		tr_live_own[0] = 0;
	}
}

/* ---- end ---- */

struct scan {
	const char *dir;
	int alive;
	int waiting;     /* entries running without the tracer mapped (yet) */
	int final;       /* last look: such entries are dropped */
};

/* A child of this process still running: registered for it (it may not
 * have started the tracer yet). */
static void child_entry(const char *name, void *ud)
{
	char state = 0;
	pid_t ppid = 0;
	if (name[0] < '1' || name[0] > '9')
		return;
	const char *s = name;
	pid_t pid = (pid_t)tr_pt_num(&s);
	if (*s)
		return;
	uint64_t st = tr_pt_proc_start(pid, &state, &ppid);
	if (!st || ppid != tr_self_pid() || state == 'Z' || state == 'X')
		return;
	struct tr_live_name e;
	if (tr_pt_live_find(tr_tree_dir, pid, st, &e) == 0)
		return;   /* it registered itself (or another member did) */
	tr_pt_live_write(tr_tree_dir, pid, st, tr_tree.part, 0, 1);
}

static void register_children(void)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	/* no child at all: nothing to scan (WNOWAIT: a zombie stays waitable) */
	if (tr_real.waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return;
	tr_pt_each_entry("/proc", child_entry, NULL);
}

static void live_entry(const char *name, void *ud)
{
	struct scan *sc = ud;
	struct tr_live_name e, b;
	if (tr_live_parse(name, &e))
		return;
	uint64_t st;
	char state = 0;
	st = tr_pt_proc_start((pid_t)e.pid, &state, NULL);
	int gone = st != e.start || state == 'Z' || state == 'X';
	/* a parent's registration that its child has replaced since */
	if (!gone && !e.self && tr_pt_live_find(sc->dir, (pid_t)e.pid, e.start, &b) == 0 && tr_live_better(&b, &e))
		gone = 1;
	/* registered by its parent but not by itself yet (starting), or an
	 * image's entry made before its exec: looked at again; still so after
	 * 1 s, it runs without tracing (an untraced program, a launcher
	 * helper). A member's own entry (self) is alive while its process is:
	 * an image leaves it only through the exec wrappers, which put an
	 * image's entry (self 0) in its place first (its maps were read here:
	 * a shell's, once by each of the 200 commands it started). */
	if (!gone && !e.self) {
		if (!sc->final) {
			sc->waiting++;   /* starting, or in exec: looked at again */
			return;
		}
		gone = 1;   /* an untraced program: not waited for */
	}
	if (!gone) {
		sc->alive++;
		return;
	}
	tr_pt_live_unlink(sc->dir, name);
	tr_pt_reg_drop(sc->dir, (pid_t)e.pid);
}

/* Members still running (stale entries removed). */
static int count_alive(const char *dir)
{
	struct scan sc = { dir, 0, 0, 0 };
	char p[4200];
	tr_pt_live_dir(p, sizeof(p), dir);
	for (int i = 0;; i++) {
		sc.alive = sc.waiting = 0;
		sc.final = i >= 100;
		tr_pt_each_entry(p, live_entry, &sc);
		if (sc.alive || !sc.waiting)
			return sc.alive;
		struct timespec ms = { 0, 10000000 };
		nanosleep(&ms, NULL);
	}
}

static void leave(void)
{
	if (tr_live_own[0])
		tr_pt_live_unlink(tr_tree_dir, tr_live_own);
	tr_live_own[0] = 0;
	if (tr_reg_own)
		tr_pt_reg_drop(tr_tree_dir, tr_self_pid());
}

/* Runs tracer-merge on the tree; waits unless crash. Returns its wall time
 * in seconds, or -1 when it could not run. */
static double unify(int crash)
{
	if (!tr_merge_ok && !crash)
		prepare_merge();   /* (TRACER_LAUNCHER was set at the start, gone now) */
	if (!tr_merge_ok)
		return -1;
	if (!crash)
		return tr_helper_run(&tr_merge);
	return tr_helper_spawn(&tr_merge) > 0 ? 0 : -1;
}


/* Counts the parts (proc<N>...) other than proc0 (a fork child that only
 * exec'd left none). */
static void other_part(const char *name, void *ud)
{
	if (!strncmp(name, "proc", 4) && name[4] >= '0' && name[4] <= '9' &&
	    !(name[4] == '0' && (name[5] == 0 || name[5] == '.')))
		++*(int *)ud;
}

static void count_entry(const char *name, void *ud)
{
	(void)name;
	++*(int *)ud;
}

/* Parts other than the root's in DIR/procs: a proc<N> file (a claim, a
 * part's own packed definitions), an event file in parts/ (a member's,
 * made at its start) or a record in parts.tdefs. */
static int others_exist(void)
{
	char p[4200];
	struct stat st;
	int others = 0;
	snprintf(p, sizeof(p), "%.4000s/procs", tr_tree_dir);
	tr_pt_each_entry(p, other_part, &others);
	snprintf(p, sizeof(p), "%.4000s/procs/" TR_PARTS_EVENTS, tr_tree_dir);
	if (!others)
		tr_pt_each_entry(p, count_entry, &others);
	snprintf(p, sizeof(p), "%.4000s/procs/" TR_PARTS_TDEFS, tr_tree_dir);
	if (!others && tr_real.stat(p, &st) == 0 && st.st_size > 0)
		others = 1;
	return others;
}

/* A tree of one process (the root, no other part recorded): its part
 * becomes the archive as it is (renamed, anchor last: location ids are
 * 0, 1, ... already), DIR/procs goes. 1 done. Async-signal-safe. */
static int promote_single(void)
{
	char p[4200], q[4200];
	struct stat st;
	if (tr_tree.part != 0 || others_exist())
		return 0;
	snprintf(p, sizeof(p), "%.4000s/procs/proc0.otf2", tr_tree_dir);
	if (tr_real.stat(p, &st) || st.st_size == 0)
		return 1;   /* its part was not written: nothing to unify, the part stays */
	static const char *const sfx[] = { "", ".def", ".otf2" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%.4000s/procs/proc0%s", tr_tree_dir, sfx[i]);
		snprintf(q, sizeof(q), "%.4000s/traces%s", tr_tree_dir, sfx[i]);
		if (tr_real.rename(p, q))
			return 0;
	}
	snprintf(p, sizeof(p), "%.4000s/procs/" TR_PARTS_EVENTS, tr_tree_dir);
	rmdir(p);   /* (empty: a fork child that only exec'd removed its files) */
	tr_pt_live_clean();
	snprintf(p, sizeof(p), "%.4000s/procs", tr_tree_dir);
	tr_pt_each_entry(p, tr_pt_unlink_entry, p);
	rmdir(p);
	snprintf(tr_g.anchor, sizeof(tr_g.anchor), "%.4000s/traces.otf2", tr_g.shown);
	return 1;
}

int tr_tree_lone_root(void)
{
	if (!tr_tree.on || tr_tree.part != 0 || tr_tree.exec || !tr_tree_dir[0] || tr_getenv("TRACER_LAUNCHER") ||
	    others_exist())
		return 0;
	tr_tree_deferred = 1;
	return 1;
}

/* The part's end ("events locations", what tracer-merge reads), after its
 * packed definitions (written now when tr_tree_lone_root let them wait):
 * a record of DIR/procs/parts.tdefs beside theirs, or a line
 * "\n#tracer-end events locations\n" appended to its own proc<N>.tdefs
 * (no file to create per process: creating one costs up to 0.5 ms on an
 * ext4 where appending costs 12 us), else the file proc<N>.end. */
static void write_end(const char *end, size_t k)
{
	char p[4200], b[128];
	if (tr_tree_deferred) {
		tr_tree_deferred = 0;
		tr_ar_save_tdefs();
	}
	if (!tr_ar_tdefs_in_own_file()) {
		if (k && tr_tree_put_record('e', end, end[k - 1] == '\n' ? k - 1 : k) == 0)
			return;
	} else {
		snprintf(p, sizeof(p), "%.4000s/procs/proc%d.tdefs", tr_tree_dir, tr_tree.part);
		int fd = tr_real.open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0 && k < sizeof(b) - 16) {
			memcpy(b, "\n#tracer-end ", 13);
			memcpy(b + 13, end, k);
			int ok = tr_real.write(fd, b, k + 13) == (ssize_t)(k + 13);
			tr_real.close(fd);
			if (ok)
				return;
		} else if (fd >= 0) {
			tr_real.close(fd);
		}
	}
	snprintf(p, sizeof(p), "%.4000s/procs/proc%d.end", tr_tree_dir, tr_tree.part);
	tr_pt_write_file(p, end, k);
}

/* The member's traced life has ended: the last one unifies. end: its end
 * file's content (a lone root that becomes the archive writes none). */
static int members_end(int crash, const char *end, size_t k, uint64_t events, uint32_t nloc, char *line,
		       size_t n)
{
	char p[4200];
	tr_tree.on = 0;   /* once */
	if (tr_getenv("TRACER_LAUNCHER")) {
		/* tracer-run unifies when its whole subtree has ended */
		write_end(end, k);
		register_children();
		leave();
		return 0;
	}
	/* not the counter's lock: a child that is starting takes a part number
	 * while the holder of this one waits for it to register (the lock is
	 * on the procs directory itself: a file less to create) */
	snprintf(p, sizeof(p), "%.4000s/procs", tr_tree_dir);
	int lfd = tr_real.open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	int locked = 0;
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; lfd >= 0 && i < 10000 && !(locked = flock(lfd, LOCK_EX | LOCK_NB) == 0); i++)
		nanosleep(&ms, NULL);
	register_children();
	/* a lone root that stays alone writes no end file: its part becomes
	 * the archive (promote_single); anyone else's, before its live entry
	 * goes (the last member unifies with it) */
	int others = 0;
	if (tr_tree.part == 0 && !crash)
		/* (a child registered just now, not started yet, is one: the
		 * root is not alone, its part must be whole) */
		others = others_exist() || tr_pt_live_others(tr_tree_dir) || count_alive(tr_tree_dir) > 1;
	if (tr_tree.part != 0 || crash || others || !locked)
		write_end(end, k);
	leave();
	int alive = count_alive(tr_tree_dir);
	if (lfd >= 0)
		tr_real.close(lfd);
	if (!locked)
		return 0;
	if (alive > 0) {
		if (tr_tree.creator >= 0)
			return 0;
		return snprintf(line, n, "tracer: archive %s/procs/proc%d.otf2 (this process): %u locations, %llu "
				"events; %s/traces.otf2 of the whole process tree is written when the last of its "
				"%d running processes ends\n", tr_g.shown, tr_tree.part, nloc,
				(unsigned long long)events, tr_g.shown, alive);
	}
	if (promote_single())
		return 0;   /* the usual summary of one process */
	write_end(end, k);   /* (if not written yet: a lone root whose part could not be promoted) */
	double secs = unify(crash);
	if (secs < 0 && !tr_merge_ok)
		return snprintf(line, n, "tracer: warning: bin/tracer-merge not found next to libtracer.so: run "
				"tracer-merge %s to get one archive of the process tree\n", tr_g.shown);
	if (secs < 0)
		return snprintf(line, n, "tracer: error: unifying the process tree in %s failed (see %s)\n",
				tr_g.shown, tr_merge_log);
	if (crash)
		return 0;
	/* tracer-merge's totals: processes locations events bytes */
	char r[256];
	snprintf(p, sizeof(p), "%.4000s/procs/unified", tr_tree_dir);
	if (tr_pt_read_into(p, r, sizeof(r)) <= 0)
		return 0;
	const char *s = r;
	unsigned long long np = tr_pt_num(&s), nl = tr_pt_num(&s), ne = tr_pt_num(&s), nb = tr_pt_num(&s), nk = tr_pt_num(&s);
	char killed[96] = "";
	if (nk)   /* TRACER_DURABLE: parts of killed processes, recovered by tracer-merge */
		snprintf(killed, sizeof(killed), " (%llu killed, recovered up to their last durability tick)", nk);
	return snprintf(line, n, "tracer: archive %s/traces.otf2: %llu process%s%s, %llu locations, %llu events, "
			"%llu bytes (unified in %.3f s)\n", tr_g.shown, np, np == 1 ? "" : "es", killed, nl, ne, nb,
			secs);
}

int tr_tree_end(int crash, uint64_t events, uint32_t nloc, char *line, size_t n)
{
	char b[96];
	if (!tr_tree.on || tr_tree.part < 0 || !tr_tree_dir[0])
		return 0;
	int k = snprintf(b, sizeof(b), "%llu %u\n", (unsigned long long)events, nloc);
	if (tr_tree.exec) {
		write_end(b, (size_t)k);
		return 0;   /* the new image goes on as a member */
	}
	return members_end(crash, b, (size_t)k, events, nloc, line, n);
}

int tr_tree_summary_elsewhere(void)
{
	if (tr_tree.part < 0 || !tr_tree_dir[0] || tr_g.mpi_expected)
		return 0;
	return tr_tree.part > 0 || tr_tree.exec || tr_getenv("TRACER_LAUNCHER") != NULL;
}

void tr_tree_exec_failed(void)
{
	char line[8];
	if (tr_tree.on && tr_tree.exec && tr_tree_dir[0])
		members_end(0, "0 0\n", 4, 0, 0, line, sizeof(line));
}
