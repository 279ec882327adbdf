/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proctree_files.c - the files of a process tree that its members share
 * (preload/tree/proctree.c is the life of a member): the live entries
 * (DIR/procs/live.*, hard links: tree_files.h), the per-user registry
 * /tmp/.tracer-<uid>, the part counter DIR/procs/tree, the parts' records
 * DIR/procs/parts.tdefs, and the small async-signal-safe helpers both
 * files use (no malloc, no stdio, no lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "tr_int.h"
#include "proctree.h"
#include "proctree_int.h"
#include "tree_files.h"

char tr_reg[64];            /* /tmp/.tracer-<uid> ("" unusable) */
char tr_tree_dir[4096];     /* DIR (absolute) */
char tr_env_dir[4096];
char tr_live_own[96];
int tr_reg_own;

/* ---- small async-signal-safe helpers ---- */

ssize_t tr_pt_read_into(const char *path, char *buf, size_t size)
{
	int fd = tr_real.open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, r;
	if (fd < 0)
		return -1;
	while (n < (ssize_t)size - 1 && (r = tr_real.read(fd, buf + n, size - 1 - (size_t)n)) > 0)
		n += r;
	tr_real.close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* path gets the n bytes of buf at once (temporary file, renamed; excl:
 * linked, never replacing an existing path). */
static int write_file_excl(const char *path, const char *buf, size_t n, int excl)
{
	char tmp[4400];
	snprintf(tmp, sizeof(tmp), "%s.t%d", path, (int)tr_self_pid());
	int fd = tr_real.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int ok = tr_real.write(fd, buf, n) == (ssize_t)n;
	tr_real.close(fd);
	if (!ok || (excl ? link(tmp, path) : tr_real.rename(tmp, path))) {
		tr_real.unlink(tmp);
		return -1;
	}
	if (excl)
		tr_real.unlink(tmp);
	return 0;
}

int tr_pt_write_file(const char *path, const char *buf, size_t n)
{
	return write_file_excl(path, buf, n, 0);
}

unsigned long long tr_pt_num(const char **p)
{
	unsigned long long v = 0;
	while (**p == ' ')
		(*p)++;
	while (**p >= '0' && **p <= '9')
		v = v * 10 + (unsigned long long)(*(*p)++ - '0');
	return v;
}

/* Start time (clock ticks since boot) of pid, 0 if gone (or an MPI
 * launcher's helper daemon: never a member); its state and parent. */
uint64_t tr_pt_proc_start(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], b[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (tr_pt_read_into(path, b, sizeof(b)) <= 0)
		return 0;
	char *p = strrchr(b, ')');   /* the command may hold blanks and ')' */
	char *c = strchr(b, '(');
	if (!p || p[1] != ' ' || !c || c > p)
		return 0;
	*p = 0;
	if (tr_launcher_helper_name(c + 1))
		return 0;
	*p = ')';
	const char *q = p;
	q += 2;
	if (state)
		*state = *q;
	q++;
	/* fields 4 (ppid) .. 22 (starttime) */
	unsigned long long v = 0;
	for (int f = 4; f <= 22; f++) {
		while (*q == ' ')
			q++;
		if (*q == '-')
			q++;
		v = tr_pt_num(&q);
		if (f == 4 && ppid)
			*ppid = (pid_t)v;
	}
	return v;
}

/* Calls fn for every entry of dir (getdents64: no malloc). */
struct tr_dirent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

void tr_pt_each_entry(const char *dir, void (*fn)(const char *name, void *ud), void *ud)
{
	char buf[1024];   /* small: the crash path may run on a small alternate signal stack */
	int fd = tr_real.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		long n = tr_syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (long o = 0; o < n;) {
			struct tr_dirent64 *e = (struct tr_dirent64 *)(buf + o);
			if (e->name[0] != '.')
				fn(e->name, ud);
			o += e->reclen;
		}
	}
	tr_real.close(fd);
}

/* ---- the registry ---- */

static int reg_state;   /* 0 not looked at yet, 1 usable, -1 not */

/* Made (mode 0700) and checked when first needed: a process whose
 * environment names its tree's directory never needs it (tracer-run). */
int tr_pt_reg_usable(void)
{
	struct stat st;
	if (reg_state)
		return reg_state > 0;
	reg_state = -1;
	snprintf(tr_reg, sizeof(tr_reg), "/tmp/.tracer-%u", (unsigned)getuid());
	if (mkdir(tr_reg, 0700) && errno != EEXIST)
		goto bad;
	if (tr_real.lstat(tr_reg, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		goto bad;
	reg_state = 1;
	return 1;
bad:
	tr_reg[0] = 0;
	return 0;
}

/* ---- live entries: DIR/procs/live.<pid>.<start>.<part>.<self>, hard
 * links of a file that is there anyway (tree_files.h: a name, no inode
 * per process, none for a lone process either) ---- */

void tr_pt_live_dir(char *out, size_t n, const char *dir)
{
	snprintf(out, n, "%.4000s/procs", dir);
}

static void live_name(char *out, size_t n, pid_t pid, uint64_t start, int part, int self)
{
	snprintf(out, n, TR_LIVE_PREFIX "%d.%llu.%d.%d", (int)pid, (unsigned long long)start, part, self);
}

/* name, a link of the root's claim, else of the counter, else of the
 * target made for it. */
static int live_link(const char *dir, const char *name)
{
	static const char *const targets[] = { "proc0.claim", "tree", TR_LIVE_TARGET };
	char t[4300], p[4300];
	snprintf(p, sizeof(p), "%.4000s/procs/%s", dir, name);
	for (int i = 0; i < 4; i++) {
		snprintf(t, sizeof(t), "%.4000s/procs/%s", dir, targets[i < 3 ? i : 2]);
		if (link(t, p) == 0 || errno == EEXIST)
			return 0;
		if (errno != ENOENT)
			return -1;
		if (i == 2) {
			int fd = tr_real.open(t, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0)
				return -1;
			tr_real.close(fd);
		}
	}
	return -1;
}

void tr_pt_live_unlink(const char *dir, const char *name)
{
	char p[4300];
	snprintf(p, sizeof(p), "%.4000s/procs/%s", dir, name);
	tr_real.unlink(p);
}

/* pid's entry in dir; self: written by pid itself (0: by its parent, for
 * a child that has not started the tracer yet); reg: with its registry
 * link, for an image whose environment may not name dir */
int tr_pt_live_write(const char *dir, pid_t pid, uint64_t start, int part, int self, int reg)
{
	char name[96], r[128], t[160];
	if (part < 0)
		return -1;
	live_name(name, sizeof(name), pid, start, part, self);
	if (live_link(dir, name))
		return -1;
	if (self && pid == tr_self_pid())
		snprintf(tr_live_own, sizeof(tr_live_own), "%s", name);
	/* the link: not for a process's own entry at its start when its
	 * environment names the directory, nor for an exec whose environment
	 * does (what most processes of a tree are: a file less to make and
	 * remove each) */
	if (!reg || !tr_pt_reg_usable())
		return 0;
	snprintf(r, sizeof(r), "%s/%d", tr_reg, (int)pid);
	snprintf(t, sizeof(t), "%s/%d.t%d", tr_reg, (int)pid, (int)tr_self_pid());
	tr_real.unlink(t);
	if (symlink(dir, t) || tr_real.rename(t, r))
		tr_real.unlink(t);
	else if (pid == tr_self_pid())
		tr_reg_own = 1;
	return 0;
}

/* envp has TRACER_OUTPUT naming dir (as tr_tree_prepare reads it: an
 * absolute path, trailing slashes ignored) */
int tr_pt_env_names(char *const envp[], const char *dir)
{
	static const char key[] = "TRACER_OUTPUT=";
	size_t dl = strlen(dir);
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *v = envp[i];
		if (strncmp(v, key, sizeof(key) - 1))
			continue;
		v += sizeof(key) - 1;   /* (the first one is what getenv sees) */
		size_t l = strlen(v);
		while (l > 1 && v[l - 1] == '/')
			l--;
		return v[0] == '/' && l == dl && !memcmp(v, dir, dl);
	}
	return 0;
}

/* Removes pid's registry link when it points to dir. */
void tr_pt_reg_drop(const char *dir, pid_t pid)
{
	char r[128], d[4200];
	if (!tr_pt_reg_usable())
		return;
	snprintf(r, sizeof(r), "%s/%d", tr_reg, (int)pid);
	ssize_t l = readlink(r, d, sizeof(d) - 1);
	if (l > 0 && (d[l] = 0, !strcmp(d, dir)))
		tr_real.unlink(r);
}

struct live_find {
	pid_t pid;
	uint64_t start;          /* 0: any */
	const char *skip;        /* a name not to take */
	int found;
	struct tr_live_name best;
	void (*other)(const char *name, const struct tr_live_name *e, void *ud);   /* every other entry of pid */
	void *ud;
	const char *dir;
};

static void find_entry(const char *name, void *ud)
{
	struct live_find *f = ud;
	struct tr_live_name e;
	if (tr_live_parse(name, &e) || e.pid != f->pid || (f->skip && !strcmp(name, f->skip)))
		return;
	if (f->other)
		f->other(name, &e, f);
	if (f->start && e.start != f->start)
		return;
	if (!f->found || tr_live_better(&e, &f->best))
		f->best = e;
	f->found = 1;
}

/* The best entry of pid with start time start (0: any) in dir's live
 * entries: 0 and *e, -1 if none. */
int tr_pt_live_find(const char *dir, pid_t pid, uint64_t start, struct tr_live_name *e)
{
	char d[4200];
	struct live_find f = { .pid = pid, .start = start };
	tr_pt_live_dir(d, sizeof(d), dir);
	tr_pt_each_entry(d, find_entry, &f);
	if (!f.found)
		return -1;
	*e = f.best;
	return 0;
}

static void drop_other(const char *name, const struct tr_live_name *e, void *ud)
{
	(void)e;
	tr_pt_live_unlink(((struct live_find *)ud)->dir, name);
}

/* Every entry of pid but keep (this process's own once it wrote it: the
 * pre-exec image's, its parent's registration, a stale one of an earlier
 * process with that pid). */
void tr_pt_live_drop_others(const char *dir, pid_t pid, const char *keep)
{
	char d[4200];
	struct live_find f = { .pid = pid, .skip = keep, .other = drop_other, .dir = dir };
	tr_pt_live_dir(d, sizeof(d), dir);
	tr_pt_each_entry(d, find_entry, &f);
}

static void count_other(const char *name, void *ud)
{
	struct tr_live_name e;
	if (tr_live_parse(name, &e) == 0 && strcmp(name, tr_live_own))
		++*(int *)ud;
}

int tr_pt_live_others(const char *dir)
{
	char d[4200];
	int n = 0;
	tr_pt_live_dir(d, sizeof(d), dir);
	tr_pt_each_entry(d, count_other, &n);
	return n;
}

/* The best entries of two processes in one scan of dir's live entries. */
struct find2 {
	pid_t pid[2];
	uint64_t start[2];
	int found[2];
	struct tr_live_name best[2];
};

static void find2_entry(const char *name, void *ud)
{
	struct find2 *f = ud;
	struct tr_live_name e;
	if (tr_live_parse(name, &e))
		return;
	for (int i = 0; i < 2; i++)
		if (e.pid == f->pid[i] && e.start == f->start[i] && (!f->found[i] || tr_live_better(&e, &f->best[i]))) {
			f->best[i] = e;
			f->found[i] = 1;
		}
}

static int find_in(const char *dir, struct find2 *f)
{
	char d[4200];
	f->found[0] = f->found[1] = 0;
	tr_pt_live_dir(d, sizeof(d), dir);
	tr_pt_each_entry(d, find2_entry, f);
	return f->found[0] || f->found[1] ? 0 : -1;
}

/* pid's tree through its registry link: dir filled, 0 or -1. */
static int reg_dir(pid_t pid, char *dir, size_t n)
{
	char r[128];
	if (!tr_pt_reg_usable())
		return -1;
	snprintf(r, sizeof(r), "%s/%d", tr_reg, (int)pid);
	ssize_t l = readlink(r, dir, n - 1);
	if (l <= 0)
		return -1;
	dir[l] = 0;
	return 0;
}

int tr_pt_lookup(pid_t self, uint64_t sstart, pid_t parent, uint64_t pstart, char *dir, size_t n, int *by_parent)
{
	struct find2 f = { { self, parent }, { sstart, pstart }, { 0, 0 }, { { 0 } } };
	*by_parent = 0;
	if (!sstart)
		f.pid[0] = 0;
	if (!pstart)
		f.pid[1] = 0;
	/* the directory the environment names first (no registry links then),
	 * both processes in one scan; its own entry first (exec'd by a member,
	 * or registered by its parent), then its parent's */
	if (tr_env_dir[0] && find_in(tr_env_dir, &f) == 0) {
		snprintf(dir, n, "%s", tr_env_dir);
		int k = f.found[0] ? 0 : 1;
		*by_parent = k == 1 || !f.best[0].self;
		tr_reg_own |= k == 0;   /* (its entry may have a registry link: dropped at the end) */
		return f.best[k].part;
	}
	/* then through the registry: its own pid, its parent's, its own again
	 * (the parent may have registered it and ended in between) */
	static const int order[] = { 0, 1, 0 };
	for (int i = 0; i < 3; i++) {
		int k = order[i];
		if (!f.pid[k] || reg_dir(f.pid[k], dir, n) || find_in(dir, &f) || !f.found[k])
			continue;
		*by_parent = k == 1 || !f.best[0].self;
		tr_reg_own |= k == 0;
		return f.best[k].part;
	}
	return -1;
}

/* Next part number of the tree in dir (the counter file, under its flock;
 * no file or an empty one: 1, part 0 is the root's, which makes no file). */
int tr_pt_take_part(const char *dir)
{
	char p[4200], b[32];
	snprintf(p, sizeof(p), "%.4000s/procs/tree", dir);
	int fd = tr_real.open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	flock(fd, LOCK_EX);
	ssize_t n = tr_real.pread(fd, b, sizeof(b) - 1, 0);
	b[n > 0 ? n : 0] = 0;
	const char *s = b;
	int part = b[0] ? (int)tr_pt_num(&s) : 1;
	int w = snprintf(b, sizeof(b), "%010d\n", part + 1);
	if (tr_real.pwrite(fd, b, (size_t)w, 0) != w)
		part = -1;
	tr_real.close(fd);   /* releases the lock */
	return part;
}

int tr_tree_put_record(char kind, const void *buf, size_t n)
{
	char p[4200], h[80];
	if (!tr_tree_dir[0] || tr_tree.part < 0) {
		errno = ENOENT;
		return -1;
	}
	snprintf(p, sizeof(p), "%.4000s/procs/" TR_PARTS_TDEFS, tr_tree_dir);
	int hn = snprintf(h, sizeof(h), TR_PARTS_MAGIC "%d %c %zu\n", tr_tree.part, kind, n);
	int fd = tr_real.open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	/* one write: appends of other processes never come between its parts */
	struct iovec v[3] = { { h, (size_t)hn }, { (void *)buf, n }, { "\n", 1 } };
	long w = tr_syscall(SYS_writev, fd, v, 3);
	int e = errno;
	tr_real.close(fd);
	if (w == (long)((size_t)hn + n + 1))
		return 0;
	errno = w < 0 ? e : ENOSPC;
	return -1;
}

/* tr_pt_each_entry callback: removes ud/name. */
void tr_pt_unlink_entry(const char *name, void *ud)
{
	char p[4400];
	snprintf(p, sizeof(p), "%.4000s/%s", (const char *)ud, name);
	tr_real.unlink(p);
}

static void unlink_live(const char *name, void *ud)
{
	struct tr_live_name e;
	if (tr_live_parse(name, &e) == 0 || !strcmp(name, TR_LIVE_TARGET))
		tr_pt_unlink_entry(name, ud);
}

/* The live entries of DIR/procs (the tree has ended). */
void tr_pt_live_clean(void)
{
	char p[4200];
	tr_pt_live_dir(p, sizeof(p), tr_tree_dir);
	tr_pt_each_entry(p, unlink_live, p);
}

