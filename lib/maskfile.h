/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"

/*
 * The saved-masks file: the CPU masks the daemon replaced, kept in its
 * runtime directory so that it can put every one back, also after a crash.
 *
 * The text form is a header line and one line per task:
 *
 *   # numaplaced saved masks v1
 *   PID START_TICKS BEFORE NARROWED
 *
 * with single spaces, decimal numbers and CPU lists in the kernel's list
 * format ("0-3,8"). Every line ends in a newline. The parser takes all of a
 * file or none of it: a task restored to a mask from a damaged line would be
 * worse off than one left narrowed. The formatter refuses what the parser
 * would refuse, so a file that was saved can always be loaded.
 */

/* The first line of the file, without its newline. */
#define NP_MASKFILE_HEADER "# numaplaced saved masks v1"

/* Longest line, newline included. A CPU list is longest for the pattern
 * "0-1,3-4,6-7,...": two numbers for every three CPUs, under 27 KiB for
 * NP_MAX_CPUS; a line holds two of them. */
#define NP_MASKFILE_LINE_MAX (64u * 1024)

/* Most entries in a file. Each one is over 2 KiB in memory (two
 * struct np_bitmap), so the bound also caps what a load allocates. */
#define NP_MASKFILE_ENTRIES_MAX 65536u

/* Largest file np_maskfile_load() reads and np_maskfile_format() writes. */
#define NP_MASKFILE_SIZE_MAX (16u * 1024 * 1024)

struct np_saved_mask {
	int pid;
	uint64_t start_ticks;	   /* with pid, the task's identity (field 22 of /proc/PID/stat) */
	struct np_bitmap before;   /* the mask the task had before the daemon narrowed it */
	struct np_bitmap narrowed; /* the mask the daemon set */
};

/* Format @n entries of @v as the text above into a malloc'd, NUL-terminated
 * buffer (*@len excludes the NUL). Returns 0; -EINVAL when an entry is one
 * the parser would reject (pid out of 1..NP_CONFIG_PID_MAX, an empty mask,
 * a narrowed mask not within before, a (pid, start) pair given twice, more
 * than NP_MASKFILE_ENTRIES_MAX entries); -EFBIG when a line would exceed
 * NP_MASKFILE_LINE_MAX or the text NP_MASKFILE_SIZE_MAX; -ENOMEM. */
int np_maskfile_format(const struct np_saved_mask *v, size_t n, char **out, size_t *len);

/*
 * Parse @len bytes of @buf (pure: no NUL needed, nothing past @len read).
 * On success *@out is a malloc'd array of *@n entries in file order (NULL
 * when there are none) and *@bad_line is 0. Returns -EINVAL, with *@bad_line
 * the 1-based number of the first bad line, for: a first line that is not
 * NP_MASKFILE_HEADER; a line that is not exactly four fields; a pid not in
 * 1..NP_CONFIG_PID_MAX; a start time that is not a decimal fitting 64 bits;
 * a field that is not a CPU list (np_bitmap_parse_list()) or names a CPU at
 * or above NP_MAX_CPUS; an empty mask; a narrowed mask not within before; a
 * (pid, start) pair seen on an earlier line; a line longer than
 * NP_MASKFILE_LINE_MAX; an entry beyond NP_MASKFILE_ENTRIES_MAX; and bytes
 * after the last newline. -ENOMEM (*@bad_line 0). On error *@out is NULL
 * and *@n 0. @bad_line may be NULL.
 */
int np_maskfile_parse(const char *buf, size_t len, struct np_saved_mask **out, size_t *n,
		      unsigned *bad_line);

/*
 * Save @n entries as @name in the directory @dirfd (opened for reading, not
 * O_PATH: it is fsync'd), atomically: the text goes to NAME.tmp, created
 * fresh with mode 0600 (what a crash left under that name is removed first,
 * a directory there is an error, and no link is followed), which is
 * fsync'd and renamed over @name, and then the directory is fsync'd. A
 * reader sees the old file or the new one, before and after a crash. With
 * @n == 0 @name is removed instead (a missing one is fine), and so is a
 * NAME.tmp. On error no NAME.tmp of ours is left behind and @name is as it
 * was, except when only the last fsync fails: the new file is then in place
 * but may not outlive a crash. Returns 0, -EINVAL for a @name that is not a
 * plain file name, np_maskfile_format()'s errors, or the -errno of the call
 * that failed.
 */
int np_maskfile_save(int dirfd, const char *name, const struct np_saved_mask *v, size_t n);

/*
 * Load @name from the directory @dirfd and parse it as np_maskfile_parse()
 * does (same results through @out, @n and @bad_line). A missing file is 0
 * entries. The file is opened without following a link (-ELOOP) and without
 * blocking on a FIFO, and must be a regular file (-EISDIR for a directory,
 * -EBADFD for anything else) of at most NP_MASKFILE_SIZE_MAX bytes (-EFBIG).
 * -EINVAL comes with the bad line, except for a @name that is not a plain
 * file name (*@bad_line 0). Other -errno from open and read.
 */
int np_maskfile_load(int dirfd, const char *name, struct np_saved_mask **out, size_t *n,
		     unsigned *bad_line);
