/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt_int.h - what the VT_* API's files share (vt.c has the design and the
 * handles): vt.c (thread access, names, state changes, life cycle, the
 * module) and vt_defs.c (classes, functions, symbols, source locations,
 * counters). Not a public header.
 */
#ifndef TR_VT_INT_H
#define TR_VT_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer.h"
#include "VT.h"

#define VT_STATE_BASE   0x10000000
#define VT_MAX_CLASSES  4096
#define VT_MAX_STATES   16384
#define VT_MAX_SCLS     16384
#define VT_MAX_COUNTERS 1024
#define VT_SYMDEF_SLOTS 8192             /* power of two */
#define VT_NAME_MAX     1024
#define VT_SCL_CACHE    4

struct vt_state {
	uint32_t region;        /* OTF2W_UNDEFINED_REF when the name is empty (not logged) */
	uint32_t cls;           /* class index */
	uint8_t truncated;      /* VT_enterstate: DETAILED-STATES cut the name */
};

struct vt_scl {
	uint32_t def;           /* SourceCodeLocation id */
	int line;
	char *file;
	_Atomic uint64_t cache[VT_SCL_CACHE];   /* (entered << 32 | left) callsites defined */
	_Atomic unsigned next;
};

struct vt_counter {
	uint32_t metric_class;
	int datatype;           /* VT_COUNT_INTEGER / FLOAT / INTEGER64 */
};

struct vt_symslot {
	_Atomic int used;       /* 1 once key/state are valid */
	int key;
	uint32_t state;
};

/* the tables (append-only: filled under vt_lock, published by a release
 * store of the count) and the per-thread state */
extern char *vt_classes[VT_MAX_CLASSES];
extern _Atomic uint32_t vt_nclasses;
extern struct vt_scl vt_scls[VT_MAX_SCLS];
extern _Atomic uint32_t vt_nscls;
extern struct vt_counter vt_counters[VT_MAX_COUNTERS];
extern _Atomic uint32_t vt_ncounters;
extern struct vt_symslot vt_symdefs[VT_SYMDEF_SLOTS];
extern _Atomic int vt_finalized;
extern TR_TLS int vt_thisloc_scl;
extern TR_TLS int vt_off;

void vt_lock_take(void);
void vt_lock_drop(void);
int vt_get(struct tr_thread **out);
int vt_get_args(struct tr_thread **out, int args_ok);
size_t vt_path_append(char *dst, size_t len, size_t cap, const char *src, size_t n);
int vt_class_find(const char *path);
void vt_init_classes(void);
int vt_state_define(const char *path, int truncated);
int vt_scl_check(int scl);

#endif /* TR_VT_INT_H */
