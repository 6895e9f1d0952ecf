/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "context.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

struct np_ctx {
	char *root;
	int root_fd;
	bool live;
	np_log_fn log_fn;
	void *log_data;
	int log_priority;
};

int np_ctx_new(const char *root, struct np_ctx **out)
{
	struct np_ctx *ctx;

	if (!root || !*root)
		root = "/";
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->root = strdup(root);
	if (!ctx->root) {
		free(ctx);
		return -ENOMEM;
	}
	ctx->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx->root_fd < 0) {
		int err = -errno;

		free(ctx->root);
		free(ctx);
		return err;
	}
	ctx->live = strcmp(root, "/") == 0;
	ctx->log_priority = LOG_INFO;
	*out = ctx;
	return 0;
}

void np_ctx_free(struct np_ctx *ctx)
{
	if (!ctx)
		return;
	close(ctx->root_fd);
	free(ctx->root);
	free(ctx);
}

const char *np_ctx_root(const struct np_ctx *ctx)
{
	return ctx->root;
}

bool np_ctx_is_live(const struct np_ctx *ctx)
{
	return ctx->live;
}

void np_ctx_set_log_fn(struct np_ctx *ctx, np_log_fn fn, void *data)
{
	ctx->log_fn = fn;
	ctx->log_data = data;
}

void np_ctx_set_log_priority(struct np_ctx *ctx, int max_priority)
{
	ctx->log_priority = max_priority;
}

int np_ctx_get_log_priority(const struct np_ctx *ctx)
{
	return ctx->log_priority;
}

void np_log(const struct np_ctx *ctx, int priority, const char *fmt, ...)
{
	va_list args;

	if (!ctx || !ctx->log_fn || priority > ctx->log_priority)
		return;
	va_start(args, fmt);
	ctx->log_fn(ctx->log_data, priority, fmt, args);
	va_end(args);
}

int np_ctx_open(const struct np_ctx *ctx, const char *path, int flags)
{
	int fd;

	while (*path == '/')
		path++;
	fd = openat(ctx->root_fd, path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int np_read_fd(int fd, size_t max_len, char **buf, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *data = malloc(cap);

	if (!data)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (cap - used < 2) {
			char *bigger;

			if (cap > max_len) {
				free(data);
				return -EFBIG;
			}
			bigger = realloc(data, cap * 2);
			if (!bigger) {
				free(data);
				return -ENOMEM;
			}
			data = bigger;
			cap *= 2;
		}
		n = read(fd, data + used, cap - used - 1);
		if (n < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			free(data);
			return err;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (used > max_len) {
		free(data);
		return -EFBIG;
	}
	data[used] = '\0';
	*buf = data;
	*len = used;
	return 0;
}

int np_ctx_read_file(const struct np_ctx *ctx, const char *path, size_t max_len, char **buf,
		     size_t *len)
{
	int fd = np_ctx_open(ctx, path, O_RDONLY);
	int err;

	if (fd < 0)
		return fd;
	err = np_read_fd(fd, max_len, buf, len);
	close(fd);
	return err;
}

bool np_is_vanished_error(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOENT || err == ESRCH || err == EACCES || err == EINVAL || err == EPERM;
}
