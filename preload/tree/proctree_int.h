/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proctree_int.h - what the two files of the process tree share
 * (proctree.c: a member's start and end; proctree_files.c: the tree's
 * shared files and the helpers). Every function here is
 * async-signal-safe. Nothing else includes it.
 */
#ifndef TR_PROCTREE_INT_H
#define TR_PROCTREE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "tree_files.h"

extern char tr_reg[64];          /* /tmp/.tracer-<uid> ("" unusable) */
extern char tr_tree_dir[4096];   /* DIR (absolute) */
/* TRACER_OUTPUT when absolute (trailing slashes off), else "": a process
 * started with it finds its tree's live entries there directly. */
extern char tr_env_dir[4096];
extern char tr_live_own[96];     /* this process's own live entry's name, "" none */
/* a registry link of its own pid may exist (it made one, or its own live
 * entry was there at its start: a parent's or a pre-exec image's) */
extern int tr_reg_own;

/* helpers */
ssize_t tr_pt_read_into(const char *path, char *buf, size_t size);
int tr_pt_write_file(const char *path, const char *buf, size_t n);
unsigned long long tr_pt_num(const char **p);
/* Start time (clock ticks since boot) of pid, 0 if gone (or an MPI
 * launcher's helper daemon: never a member); its state and parent. */
uint64_t tr_pt_proc_start(pid_t pid, char *state, pid_t *ppid);
/* fn for every entry of dir but the dot files (getdents64: no malloc). */
void tr_pt_each_entry(const char *dir, void (*fn)(const char *name, void *ud), void *ud);
void tr_pt_unlink_entry(const char *name, void *ud);   /* (a callback: removes ud/name) */

/* the registry and the live entries */
int tr_pt_reg_usable(void);   /* made and checked at the first call; tr_reg */
void tr_pt_reg_drop(const char *dir, pid_t pid);
void tr_pt_live_dir(char *out, size_t n, const char *dir);
int tr_pt_live_write(const char *dir, pid_t pid, uint64_t start, int part, int self, int reg);
int tr_pt_env_names(char *const envp[], const char *dir);
void tr_pt_live_unlink(const char *dir, const char *name);
int tr_pt_live_find(const char *dir, pid_t pid, uint64_t start, struct tr_live_name *e);
void tr_pt_live_drop_others(const char *dir, pid_t pid, const char *keep);
void tr_pt_live_clean(void);
/* Live entries in dir other than this process's own (alive or not). */
int tr_pt_live_others(const char *dir);
/* The tree this process (self, with its start time) belongs to, found by
 * its own live entry or its parent's: the part that entry names, dir
 * filled, *by_parent 1 when the parent is a member (its entry, or one it
 * wrote for this process); -1 if none. */
int tr_pt_lookup(pid_t self, uint64_t sstart, pid_t parent, uint64_t pstart, char *dir, size_t n, int *by_parent);
/* The next part number of the tree in dir (the counter), -1. */
int tr_pt_take_part(const char *dir);

#endif
