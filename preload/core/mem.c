/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem.c - the tracer's own heap: every allocation of libtracer.so comes from
 * mmap, never from the program's allocator.
 *
 * Why: a wrapped call can come from inside the program's allocator
 * (jemalloc, tcmalloc and the program's own malloc take their locks through
 * pthread_mutex_lock/trylock, which we wrap), and a signal handler can land
 * while the thread holds the allocator's lock. Any malloc of ours on such a
 * path waits on a lock its own thread holds. So the tracer's own objects
 * never call malloc & co.: preload/, wrappers/ and sampling/ call
 * tr_malloc & co. (tr_int.h), format/ and the code shared with the tools
 * otf2w_sys.malloc & co., which libtracer.so points here
 * (tests/core/self_calls.py checks every object). Libraries we call (libdw, PAPI, libunwind, libc's
 * own opendir/fopen) keep the program's allocator: they run at start-up and
 * at exit only, never in a wrapped call or a signal handler.
 *
 * Layout: size classes 16 B .. 64 KiB (powers of two) carved from arenas
 * (mmap'ed blocks of growing size, at most TR_MEM_ARENAS of them); larger
 * blocks are mappings of their own whose first page holds a header, the
 * pointer given out is page start + TR_MEM_BIG_OFF (so the header is always
 * in the same page as the pointer: reading it can never fault). tr_free
 * tells our blocks from the program's by the arena ranges (small) and the
 * header's address-keyed magic (big); anything else came from libc (e.g.
 * strdup done by a library for us) and goes to the real free.
 *
 * Locking: one spin lock, never a lock of the program's. A signal handler
 * that allocates while its own thread holds the lock (the lock owner is the
 * thread id) gets a mapping of its own instead of waiting; a free from
 * there is left for later (a leak, never a deadlock). fork: the lock is
 * taken around fork (tr_mem_fork_*), as glibc's malloc does.
 *
 * The close path needs memory when the program may have used all it may
 * get (RLIMIT_AS, overcommit): TR_MEM_RESERVE bytes are mapped at start-up
 * (smaller under an address-space limit) and used only once mmap fails.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tr_int.h"

#define TR_MEM_MIN_SHIFT 4                 /* 16 B */
#define TR_MEM_MAX_SHIFT 16                /* 64 KiB: larger = own mapping */
#define TR_MEM_NCLASS (TR_MEM_MAX_SHIFT - TR_MEM_MIN_SHIFT + 1)
#define TR_MEM_HDR 16                      /* small block header: class, size */
#define TR_MEM_ARENAS 64
#define TR_MEM_ARENA0 (1u << 20)           /* first arena 1 MiB, then doubling up to 64 MiB */
#define TR_MEM_ARENA_MAX (64u << 20)
#define TR_MEM_BIG_OFF 64                  /* big: header at page start, data at +64 */
#define TR_MEM_RESERVE (8u << 20)

struct tr_mem_small {
	uint32_t cls;
	uint32_t pad;
	uint64_t size;   /* bytes asked for (realloc copies that many) */
};

struct tr_mem_big {
	uint64_t magic;  /* tr_mem_key ^ address of the header */
	uint64_t maplen; /* whole mapping */
	uint64_t size;   /* bytes asked for */
};

struct tr_mem_free {
	struct tr_mem_free *next;
};

static struct {
	volatile int lock;
	volatile int owner;                        /* tid holding lock, 0 = none */
	struct tr_mem_free *freelist[TR_MEM_NCLASS];
	uintptr_t lo[TR_MEM_ARENAS], hi[TR_MEM_ARENAS];
	int narenas;
	uintptr_t bump, bump_end;                  /* current arena's free tail */
	uint64_t next_arena;
	/* the start-up reserve (used when mmap fails) */
	uintptr_t res, res_end, res_start;
	struct tr_mem_big *res_free;               /* freed reserve blocks (next in size) */
} M;

/* "tracerme" mixed with an address ASLR places anew in every process */
#define tr_mem_key (0x7472616365726d65ull ^ (uint64_t)(uintptr_t)&M)


/* The calling thread's id, asked once per thread (a traced /bin/true made
 * 400 gettid calls here); a fork child asks again (tr_mem_fork_child). */
static TR_TLS int mem_tid;

static int self_tid(void)
{
	if (tr_unlikely(!mem_tid))
		mem_tid = (int)tr_syscall(SYS_gettid);
	return mem_tid;
}

/* 1 = locked, 0 = the calling thread already holds it (re-entered from a
 * signal handler): the caller must not touch the shared lists. */
static int mem_lock(void)
{
	int me = self_tid();
	if (__atomic_load_n(&M.owner, __ATOMIC_RELAXED) == me)
		return 0;
	for (unsigned spins = 0;; spins++) {
		if (!__atomic_exchange_n(&M.lock, 1, __ATOMIC_ACQUIRE))
			break;
		if (spins > 64)
			sched_yield();
	}
	__atomic_store_n(&M.owner, me, __ATOMIC_RELAXED);
	if (tr_tsan_acquire)
		tr_tsan_acquire(&M);
	return 1;
}

static void mem_unlock(void)
{
	if (tr_tsan_release)
		tr_tsan_release(&M);
	__atomic_store_n(&M.owner, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&M.lock, 0, __ATOMIC_RELEASE);
}

/* flags: MAP_NORESERVE or 0. errno kept when it succeeds, the mapping's when not. */
static void *map_flags(size_t len, int flags)
{
	int saved = errno;
	void *p = (void *)tr_syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	errno = saved;
	return p;
}

static void *map(size_t len)
{
	int saved = errno;
	void *p = map_flags(len, 0);
	errno = saved;
	return p;
}

static size_t page_round(size_t n)
{
	size_t pg = 4096;
	return (n + pg - 1) & ~(pg - 1);
}

static int in_reserve(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	return M.res_start && a >= M.res_start && a < M.res_end;
}

/* From the start-up reserve (lock held): a freed reserve block that is
 * large enough, else the untouched tail. The mapping length is stored in
 * the block's header by the caller. */
static void *from_reserve(size_t len)
{
	for (struct tr_mem_big **pp = &M.res_free; *pp; pp = (struct tr_mem_big **)&(*pp)->size) {
		struct tr_mem_big *b = *pp;
		if (b->maplen >= len) {
			*pp = (struct tr_mem_big *)(uintptr_t)b->size;
			return b;
		}
	}
	if (M.res && M.res_end - M.res >= len) {
		void *p = (void *)M.res;
		M.res += len;
		return p;
	}
	return NULL;
}

/* A block of its own: header in the first page. When mmap fails (address
 * space limit, no memory left), the start-up reserve serves it. */
static void *big_alloc(size_t n)
{
	size_t len = page_round(n + TR_MEM_BIG_OFF);
	if (len < n)
		return NULL;
	uint8_t *base = map(len);
	if (!base && mem_lock()) {
		base = from_reserve(len);
		mem_unlock();
	}
	if (!base)
		return NULL;
	struct tr_mem_big *h = (struct tr_mem_big *)base;
	if (!in_reserve(base) || h->maplen < len)
		h->maplen = len;   /* a recycled reserve block keeps its length */
	h->magic = tr_mem_key ^ (uint64_t)(uintptr_t)base;
	h->size = n;
	return base + TR_MEM_BIG_OFF;
}

static struct tr_mem_big *big_header(void *p)
{
	uintptr_t a = (uintptr_t)p;
	if ((a & 4095) != TR_MEM_BIG_OFF)
		return NULL;
	struct tr_mem_big *h = (struct tr_mem_big *)(a - TR_MEM_BIG_OFF);
	return h->magic == (tr_mem_key ^ (uint64_t)(uintptr_t)h) ? h : NULL;
}

static int in_arena(uintptr_t a)
{
	int n = __atomic_load_n(&M.narenas, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (a >= M.lo[i] && a < M.hi[i])
			return 1;
	return 0;
}

/* Lock held. */
static int new_arena(size_t need)
{
	if (M.narenas >= TR_MEM_ARENAS)
		return -1;
	uint64_t len = M.next_arena ? M.next_arena : TR_MEM_ARENA0;
	while (len < need)
		len *= 2;
	uint8_t *a = map(len);
	if (!a) {
		len = page_round(need);
		a = from_reserve(len);
		if (!a)
			return -1;
	}
	M.lo[M.narenas] = (uintptr_t)a;
	M.hi[M.narenas] = (uintptr_t)a + len;
	__atomic_store_n(&M.narenas, M.narenas + 1, __ATOMIC_RELEASE);
	M.bump = (uintptr_t)a;
	M.bump_end = (uintptr_t)a + len;
	if (M.next_arena < TR_MEM_ARENA_MAX)
		M.next_arena = len * 2 > TR_MEM_ARENA_MAX ? TR_MEM_ARENA_MAX : len * 2;
	return 0;
}

static int size_class(size_t n)
{
	size_t need = n + TR_MEM_HDR;
	int c = 0;
	while (((size_t)1 << (c + TR_MEM_MIN_SHIFT)) < need)
		c++;
	return c;
}

void *tr_mem_alloc(size_t n)
{
	if (n == 0)
		n = 1;
	if (n > ((size_t)1 << TR_MEM_MAX_SHIFT) - TR_MEM_HDR)
		return big_alloc(n);
	int cls = size_class(n);
	size_t bsize = (size_t)1 << (cls + TR_MEM_MIN_SHIFT);
	if (!mem_lock())
		return big_alloc(n);   /* re-entered from a signal handler */
	struct tr_mem_small *h = (struct tr_mem_small *)M.freelist[cls];
	if (h) {
		M.freelist[cls] = M.freelist[cls]->next;
	} else {
		if (M.bump_end - M.bump < bsize && new_arena(bsize)) {
			mem_unlock();
			return NULL;
		}
		h = (struct tr_mem_small *)M.bump;
		M.bump += bsize;
	}
	mem_unlock();
	h->cls = (uint32_t)cls;
	h->size = n;
	return (uint8_t *)h + TR_MEM_HDR;
}

/* 1 if p is ours (then it is freed), 0 if it came from elsewhere. */
int tr_mem_free(void *p)
{
	if (!p)
		return 1;
	uintptr_t a = (uintptr_t)p;
	if (in_arena(a)) {
		struct tr_mem_small *h = (struct tr_mem_small *)(a - TR_MEM_HDR);
		uint32_t cls = h->cls;
		if (cls >= TR_MEM_NCLASS || !mem_lock())
			return 1;   /* corrupt, or re-entered: leave it */
		struct tr_mem_free *f = (struct tr_mem_free *)h;
		f->next = M.freelist[cls];
		M.freelist[cls] = f;
		mem_unlock();
		return 1;
	}
	struct tr_mem_big *b = big_header(p);
	if (b) {
		uint64_t len = b->maplen;
		b->magic = 0;
		if (in_reserve(b)) {
			if (mem_lock()) {   /* back to the reserve's free list */
				b->size = (uint64_t)(uintptr_t)M.res_free;
				M.res_free = b;
				mem_unlock();
			}
		} else {
			int saved = errno;
			tr_syscall(SYS_munmap, b, len);
			errno = saved;
		}
		return 1;
	}
	return 0;
}

/* Usable size of one of our blocks, 0 if not ours. */
static size_t our_size(void *p)
{
	uintptr_t a = (uintptr_t)p;
	if (in_arena(a))
		return ((struct tr_mem_small *)(a - TR_MEM_HDR))->size;
	struct tr_mem_big *b = big_header(p);
	return b ? b->size : 0;
}

/* the table space (tr_mem_space, below) */
static uintptr_t space_lo, space_hi;
static uintptr_t space_next;   /* atomic */
static int space_none;         /* no reservation: an address-space limit, or it failed */

void tr_mem_init(void)
{
	if (M.res)
		return;
	/* the reserve: 8 MiB, less under an address-space limit; one mapping
	 * with the first arena (a system call and a mapping less per process) */
	size_t want = TR_MEM_RESERVE;
	struct rlimit rl;
	int as_limited = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
	if (as_limited)
		space_none = 1;   /* no table reservation either (tr_mem_space) */
	if (as_limited && rl.rlim_cur / 32 < want)
		want = page_round(rl.rlim_cur / 32);
	uint8_t *r = map(TR_MEM_ARENA0 + want);
	if (r) {
		M.lo[0] = M.bump = (uintptr_t)r;
		M.hi[0] = M.bump_end = (uintptr_t)r + TR_MEM_ARENA0;
		M.next_arena = 2 * (uint64_t)TR_MEM_ARENA0;
		__atomic_store_n(&M.narenas, 1, __ATOMIC_RELEASE);
		r += TR_MEM_ARENA0;
	} else {
		r = map(want);
	}
	if (r) {
		M.res = M.res_start = (uintptr_t)r;
		M.res_end = (uintptr_t)r + want;
	}
}

/* ---- address space for tables (tr_real.h) ---------------------------------- */

/* One reservation (made at the first call) that the fixed tables of the
 * core and the wrappers are cut from: the definitions arena (256 MiB),
 * the crash stack, the pthread lock table, the I/O descriptor table. A
 * mapping each cost a system call, a mapping to tear down at exit and
 * page-table pages of their own, in every process. None under an
 * address-space limit (RLIMIT_AS): there each table is mapped alone, as
 * large as it is, and the definitions arena is not taken at all
 * (preload/archive/archive.c). */
#define TR_MEM_SPACE (320u << 20)

void *tr_mem_space(size_t len)
{
	len = page_round(len);
	if (!len)
		return NULL;
	int saved = errno;
	tr_mem_init();   /* (once: it tells an address-space limit) */
	if (!__atomic_load_n(&space_lo, __ATOMIC_ACQUIRE) && !__atomic_load_n(&space_none, __ATOMIC_RELAXED)) {
		void *p = map_flags(TR_MEM_SPACE, MAP_NORESERVE);
		uintptr_t none = 0;
		if (p) {
			if (__atomic_compare_exchange_n(&space_next, &none, (uintptr_t)p, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				space_hi = (uintptr_t)p + TR_MEM_SPACE;
				__atomic_store_n(&space_lo, (uintptr_t)p, __ATOMIC_RELEASE);
			} else {
				tr_syscall(SYS_munmap, p, TR_MEM_SPACE);   /* another thread's won */
			}
		} else {
			__atomic_store_n(&space_none, 1, __ATOMIC_RELAXED);
		}
	}
	uintptr_t a = __atomic_load_n(&space_next, __ATOMIC_ACQUIRE);
	while (a && __atomic_load_n(&space_lo, __ATOMIC_ACQUIRE) && space_hi - a >= len) {
		if (__atomic_compare_exchange_n(&space_next, &a, a + len, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			errno = saved;
			return (void *)a;
		}
	}
	errno = saved;
	/* no reservation (an address-space limit) or not enough left: a mapping of its own */
	return map_flags(len, MAP_NORESERVE);
}

void tr_mem_fork_prepare(void)
{
	mem_lock();
}

void tr_mem_fork_parent(void)
{
	mem_unlock();
}

void tr_mem_fork_child(void)
{
	M.owner = 0;
	M.lock = 0;
	mem_tid = 0;
}

/* ---- the heap's entry points (tr_int.h) ---------------------------------- */

void *tr_malloc(size_t n)
{
	void *p = tr_mem_alloc(n);
	if (!p)
		errno = ENOMEM;
	return p;
}

void *tr_calloc(size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = tr_malloc(n * m);
	if (p)
		memset(p, 0, n * m);   /* recycled blocks are not zero */
	return p;
}

void tr_mem_zero(void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p, e = a + n, pg = 4096;
	uintptr_t lo = (a + pg - 1) & ~(pg - 1), hi = e & ~(pg - 1);
	if (hi <= lo) {
		memset(p, 0, n);
		return;
	}
	memset(p, 0, lo - a);
	memset((void *)hi, 0, e - hi);
	int saved = errno;
	if (tr_syscall(SYS_madvise, lo, hi - lo, MADV_DONTNEED) != 0)
		memset((void *)lo, 0, hi - lo);
	errno = saved;
}

void tr_free(void *p)
{
	if (!tr_mem_free(p))
		free(p)   /* a block of the C library's */;
}

void *tr_realloc(void *p, size_t n)
{
	if (!p)
		return tr_malloc(n);
	size_t old = our_size(p);
	if (!old && !in_arena((uintptr_t)p) && !big_header(p))
		return realloc(p, n);   /* a block from libc */
	if (n == 0) {
		tr_mem_free(p);
		return NULL;
	}
	void *q = tr_malloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, old < n ? old : n);
	tr_mem_free(p);
	return q;
}

void *tr_aligned_alloc(size_t align, size_t n)
{
	if (align <= 16)
		return tr_malloc(n);
	if (align <= TR_MEM_BIG_OFF) {   /* big blocks start at page + 64 */
		void *p = big_alloc(n ? n : 1);
		if (!p)
			errno = ENOMEM;
		return p;
	}
	errno = EINVAL;
	return NULL;
}

int tr_posix_memalign(void **out, size_t align, size_t n)
{
	void *p = tr_aligned_alloc(align, n);
	if (!p)
		return errno;
	*out = p;
	return 0;
}

char *tr_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = tr_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

char *tr_strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *d = tr_malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

