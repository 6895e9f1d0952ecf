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

/* open(2) of @path relative to the root ("proc/1/stat"; a leading '/' is
 * ignored). Returns an fd or -errno. */
int np_ctx_open(const struct np_ctx *ctx, const char *path, int flags);

/* Read a whole file under the root into a malloc'd, NUL-terminated buffer.
 * *len excludes the terminator. Returns 0 or -errno; a file larger than
 * @max_len gives -EFBIG. */
int np_ctx_read_file(const struct np_ctx *ctx, const char *path, size_t max_len, char **buf,
		     size_t *len);

/* Read a whole already-open fd the same way (does not close it). */
int np_read_fd(int fd, size_t max_len, char **buf, size_t *len);

/* True for the errors a task that exited or exec'd between two reads gives:
 * such a task is dropped quietly. */
bool np_is_vanished_error(int err);
