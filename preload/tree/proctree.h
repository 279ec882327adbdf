/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proctree.h - one archive for a whole process tree (preload/tree/proctree.c).
 * Included by the core files that name a process's part (archive.c,
 * defs.c, thread.c); tools/tracer-merge defines tr_tree itself.
 */
#ifndef TR_PROCTREE_H
#define TR_PROCTREE_H

#include <stddef.h>
#include <stdint.h>

struct tr_tree {
	int on;             /* this image writes part `part` of a tree archive (DIR/procs) */
	int part;           /* its part number (location ids part << 32 | thread), -1 */
	int creator;        /* part of the image that forked, spawned or exec'd it, -1 */
	int exec;           /* the archive is written because the image execs (not its end) */
	int by_parent;      /* joined through its parent (a member: it is traced) */
	char gname[300];    /* location group name "<program> (pid <pid>)" */
};
extern struct tr_tree tr_tree;

/* Before the directory is chosen (tr_g.mpi_expected known): 1 when this
 * image joins the tree of its parent (or of its pre-exec image) in dir; 0
 * when it starts a tree (part 0); -1 when tree mode is off. */
int tr_tree_prepare(char *dir, size_t n);
/* The directory is claimed: register this image (live file, registry). */
void tr_tree_started(const char *dir);
/* Fork child (the archive of the parent is dropped): a new part. 0 or -1. */
int tr_tree_fork_child(const char *dir);
/* Fork child that execs with nothing recorded: no part of its own. */
void tr_tree_discard(char *const envp[]);
/* The image's real end (not at exec), its part written: the last member
 * of the tree unifies. Writes a summary line into line (0: none). crash:
 * async-signal-safe, the unification runs detached. */
int tr_tree_end(int crash, uint64_t events, uint32_t nloc, char *line, size_t n);
/* At the end, before the part is closed: 1 when this image is the root of
 * a tree that has no other part yet and no launcher that unifies (its part
 * will likely become the archive as it is): its packed definitions
 * (NAME.tdefs), which only a unification reads, may wait until
 * tr_tree_end knows (it writes them through tr_ar_save_tdefs if another
 * part turned up). */
int tr_tree_lone_root(void);
/* A record of this part (kind 'd' packed definitions, 'e' its end) at
 * the end of DIR/procs/parts.tdefs (preload/tree/tree_files.h): one write,
 * async-signal-safe. 0, or -1 (errno). */
int tr_tree_put_record(char kind, const void *buf, size_t n);
/* After tr_tree_end: 1 when the tree's summary counts this image and its
 * own files are not the archive (a part other than the root, an image
 * that goes on in its next one, any member under tracer-run, which prints
 * the run's line): it writes no summary line of its own. */
int tr_tree_summary_elsewhere(void);
/* An exec failed after the part was written: the traced life has ended. */
void tr_tree_exec_failed(void);
/* The process drops its root privileges to uid: registered for uid too. */
void tr_tree_handover(unsigned uid);
/* 1 when pid is an ancestor of this process. */
int tr_tree_is_ancestor(int pid);
/* An MPI launcher's helper daemon (never traced: init.c). */
int tr_launcher_helper_name(const char *name);

#endif
