/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_site.c - where the locks live, for naming them: each lock whose
 * address lies in a file mapping (a static or global mutex of the program
 * or of a library) becomes a location property of the process's master
 * location,
 *
 *     TRACER::LOCK_SITE::<lock id> = "0x<offset> <path>"
 *
 * (offset: from the address where the object's file offset 0 is mapped,
 * i.e. its virtual address in the file minus that of its first segment)
 * read from /proc/self/maps once, at MPI_Finalize (for the unified
 * definitions) and at the end (the locks first seen since). tools/ turn
 * the file offset into the symbol offline (libdw, the separate debug
 * information too), as perf report does: nothing is resolved in the
 * process. A lock on the heap or a stack has no site (its address is in
 * TRACER::LOCK_ADDRESS); one made by pthread_mutex_init,
 * pthread_rwlock_init or pthread_spin_init (interposed here: the caller's
 * return address noted by the lock's address, pthread_lock.c) gets
 *
 *     TRACER::LOCK_INIT::<lock id> = "0x<offset> <path>"
 *
 * with the offset of that return address in its object: where the program
 * made the lock (the function that initialised it, its line), which the
 * tools resolve as above. Never on a hot path; no lock another thread may
 * hold (the file is read with the real open/read, one descriptor for the
 * read only).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pthread_wrap.h"

/* An object's mappings: from its first (file offset 0, the base) to its
 * last, with the anonymous mapping right after it (the part of .bss
 * beyond the file's last page). */
struct pth_map {
	uintptr_t lo, hi;
	uintptr_t base;    /* the address of file offset 0 */
	const char *path;  /* in the maps text */
};

/* /proc/self/maps, whole, NUL-terminated (tr_free it), or NULL. */
static char *pth_read_maps(void)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = tr_malloc(cap);
	int fd = tr_real.open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (!buf || fd < 0) {
		if (fd >= 0)
			tr_real.close(fd);
		tr_free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - n < 4096) {
			char *nb = tr_realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = tr_real.read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	tr_real.close(fd);
	buf[n] = '\0';
	return buf;
}

/* The objects of the maps text (cut into lines in place), in address
 * order (the kernel's). *n their number; NULL when none. */
static struct pth_map *pth_objects(char *text, size_t *n)
{
	size_t cap = 0, k = 0;
	struct pth_map *v = NULL;
	int open = 0;   /* v[k - 1] is the object of the line before */

	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		unsigned long long lo, hi, off;
		int at = 0;
		/* start-end perms offset dev inode [path] */
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s%n", &lo, &hi, &off, &at) != 3 || !at) {
			open = 0;
			continue;
		}
		const char *path = line + at + strspn(line + at, " ");
		if (*path != '/') {
			if (open && !*path && v[k - 1].hi == lo)
				v[k - 1].hi = (uintptr_t)hi;   /* its .bss */
			open = 0;
			continue;
		}
		if (open && !strcmp(v[k - 1].path, path) && lo >= v[k - 1].hi) {
			v[k - 1].hi = (uintptr_t)hi;
			continue;
		}
		if (k == cap) {
			struct pth_map *nv = tr_realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[k++] = (struct pth_map){ (uintptr_t)lo, (uintptr_t)hi, (uintptr_t)(lo - off), path };
		open = 1;
	}
	*n = k;
	return v;
}

static const struct pth_map *pth_map_of(const struct pth_map *v, size_t n, uintptr_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a < v[mid].lo)
			hi = mid;
		else if (a >= v[mid].hi)
			lo = mid + 1;
		else
			return &v[mid];
	}
	return NULL;
}

static uint32_t pth_sites_done;   /* lock ids below it have been looked at */

void tr_pth_lock_sites(void)
{
	uint32_t count = tr_pth_lock_count();
	size_t n = 0;

	if (pth_sites_done >= count)
		return;
	char *text = pth_read_maps();
	struct pth_map *maps = text ? pth_objects(text, &n) : NULL;
	for (uint32_t id = pth_sites_done; id < count && maps; id++) {
		uintptr_t a = tr_pth_lock_address(id), at = a;
		const char *kind = "SITE";
		const struct pth_map *m = a ? pth_map_of(maps, n, a) : NULL;
		if (!m && a && (at = tr_pth_init_pc(a)) != 0) {
			kind = "INIT";   /* on the heap or a stack: where it was made */
			m = pth_map_of(maps, n, at);
		}
		if (!m)
			continue;
		char name[48], *value;
		snprintf(name, sizeof name, "TRACER::LOCK_%s::%" PRIu32, kind, id);
		size_t len = strlen(m->path) + 24;
		if (!(value = tr_malloc(len)))
			break;
		snprintf(value, len, "0x%" PRIxPTR " %s", at - m->base, m->path);
		tr_def_location_property(tr_location_id(0), name, value);
		tr_free(value);
	}
	pth_sites_done = count;
	tr_free(maps);
	tr_free(text);
}

void tr_pth_lock_sites_reset(void)
{
	pth_sites_done = 0;
}

/* ---- the init calls: where a lock was made ----
 * Nothing recorded (an init is no synchronisation): the caller's return
 * address is noted for the lock's address, then the real call. A call made
 * while the real functions are being resolved (dlsym's allocator making
 * its locks, single-threaded) does what the default attributes do, the
 * all-zero state of the static initialisers (other attributes: EAGAIN,
 * which POSIX allows). */
#define PTH_INIT_BODY(fn, lock, attr_default, ...)                                                  \
	if (tr_unlikely(!real_##fn)) {                                                               \
		if (tr_pth_resolving) {                                                              \
			if (!(attr_default))                                                         \
				return EAGAIN;                                                       \
			memset((void *)(lock), 0, sizeof(*(lock)));                                  \
			return 0;                                                                    \
		}                                                                                    \
		PTH_INIT(fn);                                                                        \
	}                                                                                            \
	tr_pth_init_note((uintptr_t)(lock), (uintptr_t)__builtin_return_address(0));                 \
	return real_##fn(__VA_ARGS__)

TR_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	PTH_INIT_BODY(pthread_mutex_init, m, !a, m, a);
}

TR_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
	PTH_INIT_BODY(pthread_rwlock_init, l, !a, l, a);
}

TR_EXPORT int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
	PTH_INIT_BODY(pthread_spin_init, l, 1, l, pshared);
}
