/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The library context. Everything the library reads from /proc and /sys goes
 * through the root directory held here, so a fixture tree can stand in for the
 * machine. The library never prints: messages go to the log function the
 * program sets (syslog priorities, LOG_ERR .. LOG_DEBUG).
 */
struct np_ctx;

typedef void (*np_log_fn)(void *data, int priority, const char *fmt, va_list args);

/* Create a context reading under @root ("/" or NULL for the live machine).
 * Returns 0 or -errno (the root cannot be opened). */
int np_ctx_new(const char *root, struct np_ctx **out);

/* Free a context; NULL is accepted. */
void np_ctx_free(struct np_ctx *ctx);

/* The root directory, as given (never NULL). */
const char *np_ctx_root(const struct np_ctx *ctx);

/* True when the context reads the running machine ("/"), so live-only
 * sources (libproc2, syscalls on pids) may be used. */
bool np_ctx_is_live(const struct np_ctx *ctx);

/* Route library messages to @fn; messages above @max_priority are dropped.
 * With no function set, messages are discarded. */
void np_ctx_set_log_fn(struct np_ctx *ctx, np_log_fn fn, void *data);
void np_ctx_set_log_priority(struct np_ctx *ctx, int max_priority);
int np_ctx_get_log_priority(const struct np_ctx *ctx);

/* Log through the context (used by the library and the program alike). */
void np_log(const struct np_ctx *ctx, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Opening files under the root. /proc and /sys hold regular files and
 * directories where the daemon reads; anything else there means the tree is
 * not the kernel's (a fixture someone else can write, or a hostile one), and
 * is refused rather than waited on or followed:
 *  - the last component is never followed: a symbolic link is -ELOOP;
 *  - files are opened O_NONBLOCK, so a FIFO never blocks the open, and then
 *    anything but a regular file is refused: a directory -EISDIR, a FIFO,
 *    device or socket -EBADFD (with O_DIRECTORY, a non-directory -ENOTDIR);
 *  - under a root other than "/", no symbolic link is followed anywhere on
 *    the path (-ELOOP) and the path cannot leave the root (-EXDEV), through
 *    openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), or, on kernels before
 *    5.6, a walk of the path one directory at a time. The live /proc has
 *    links of its own on the way (/proc/self), made by the kernel, and those
 *    are followed.
 * A refusal is logged (LOG_WARNING, one format for all: rate-limited as one
 * cause) naming the path and what was found there.
 */

/* open(2) of @path relative to the root ("proc/1/stat"; a leading '/' is
 * ignored) for reading; @flags is O_RDONLY, optionally with O_DIRECTORY.
 * Returns an fd or -errno. */
int np_ctx_open(const struct np_ctx *ctx, const char *path, int flags);

/* The same for @path under @dirfd, a directory np_ctx_open() gave for @dir
 * (its path under the root, which messages name). */
int np_ctx_open_at(const struct np_ctx *ctx, int dirfd, const char *dir, const char *path,
		   int flags);

/* Read a whole file under the root into a malloc'd, NUL-terminated buffer.
 * *len excludes the terminator. Returns 0 or -errno; a file larger than
 * @max_len gives -EFBIG (logged with the path, like a refusal). */
int np_ctx_read_file(const struct np_ctx *ctx, const char *path, size_t max_len, char **buf,
		     size_t *len);

/* The same for @path under @dirfd, as np_ctx_open_at(). */
int np_ctx_read_file_at(const struct np_ctx *ctx, int dirfd, const char *dir, const char *path,
			size_t max_len, char **buf, size_t *len);

/* True for the errors of a file that is not what the kernel puts there
 * (refused by np_ctx_open, or too large to read): the one task it belongs
 * to is skipped, the cycle goes on. */
bool np_is_odd_file_error(int err);

/* Open a file the user named (a configuration, a trace) for reading: links
 * are followed, as /etc ones often are, but the end must be a regular file
 * (-EISDIR, -EBADFD otherwise), and a FIFO is refused, not waited on. The
 * one exception is /dev/null, the usual empty file. Returns an fd or -errno. */
int np_open_regular(const char *path);

/* Check that @fd, opened for reading, is a regular file: 0, -EISDIR or
 * -EBADFD (FIFO, device, socket), or -errno of fstat. */
int np_fd_check_regular(int fd);

/* strerror(-@err), with words for what np_ctx_open() refuses: -EBADFD reads
 * "not a regular file", -ELOOP "a symbolic link, not followed", -EXDEV
 * "leads outside the root". */
const char *np_file_strerror(int err);

/* Read a whole already-open fd the same way (does not close it). */
int np_read_fd(int fd, size_t max_len, char **buf, size_t *len);

/* Line @lineno (1-based) of @buf, for a message that quotes a bad line:
 * its start, and in *@line_len its length up to the newline. A @lineno
 * past the end gives what is left of the buffer, perhaps nothing. */
const char *np_nth_line(const char *buf, size_t len, unsigned lineno, int *line_len);

/* True for the errors a task that exited or exec'd between two reads gives:
 * such a task is dropped quietly. */
bool np_is_vanished_error(int err);

/* True for -EACCES and -EPERM (either sign): the kernel refused for want of
 * privilege, and the task is still there. Counted and said, never taken for
 * a task that vanished. */
bool np_is_permission_error(int err);
