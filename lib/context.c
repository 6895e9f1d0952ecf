/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "context.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
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

/* What a file is, for a message saying why it was refused. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link, not followed";
	return "not a regular file";
}

/* The error for a file of @mode where a regular file (or, @want_dir, a
 * directory) was asked for; 0 when it is one. */
static int kind_error(mode_t mode, bool want_dir)
{
	if (want_dir ? S_ISDIR(mode) : S_ISREG(mode))
		return 0;
	if (S_ISLNK(mode))
		return -ELOOP;
	if (want_dir)
		return -ENOTDIR;
	return S_ISDIR(mode) ? -EISDIR : -EBADFD;
}

/* @dir/@path under the root, as messages name it: "/proc/1/stat" on the
 * live machine, "ROOT/proc/1/stat" under a fixture root. */
static void message_path(const struct np_ctx *ctx, const char *dir, const char *path, char *buf,
			 size_t size)
{
	const char *root = ctx->live ? "" : ctx->root;
	int root_len = (int)strlen(root);

	while (root_len > 0 && root[root_len - 1] == '/')
		root_len--;
	while (dir && *dir == '/')
		dir++;
	snprintf(buf, size, "%.*s/%s%s%s", root_len, root, dir ? dir : "", dir && *dir ? "/" : "",
		 path);
}

static void log_refusal(const struct np_ctx *ctx, const char *dir, const char *path,
			const char *why)
{
	char full[PATH_MAX];

	message_path(ctx, dir, path, full, sizeof(full));
	np_log(ctx, LOG_WARNING, "%s: %s; not read", full, why);
}

/* RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS by hand, for kernels without
 * openat2: one directory at a time, each opened without following it,
 * ".." refused. Holding each directory's fd, a rename meanwhile cannot
 * send the walk elsewhere. */
static int open_walk(int dirfd, const char *path, int flags)
{
	char name[NAME_MAX + 1];
	int cur = dirfd, ret;

	for (;;) {
		size_t n = strcspn(path, "/");
		const char *next = path + n;
		int fd;

		while (*next == '/')
			next++;
		if (n > NAME_MAX) {
			ret = -ENAMETOOLONG;
			break;
		}
		memcpy(name, n ? path : ".", n ? n : 1);
		name[n ? n : 1] = '\0';
		if (strcmp(name, "..") == 0) {
			ret = -EXDEV;
			break;
		}
		if (!*next) {
			ret = openat(cur, name, flags | O_NOFOLLOW);
			if (ret < 0)
				ret = -errno;
			break;
		}
		fd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			struct stat st;

			ret = -errno;
			/* O_PATH | O_NOFOLLOW opens a link itself: O_DIRECTORY
			 * then says ENOTDIR, which is really a link. */
			if (ret == -ENOTDIR && fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				ret = -ELOOP;
			break;
		}
		if (cur != dirfd)
			close(cur);
		cur = fd;
		path = next;
	}
	if (cur != dirfd)
		close(cur);
	return ret;
}

/* @path under @dirfd, no link followed, nothing outside @dirfd. */
static int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
	    .flags = (__u64)flags,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
	};

	if (!*path)
		path = ".";
	for (int tries = 0; tries < 8; tries++) {
		long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

		if (fd >= 0)
			return (int)fd;
		/* EAGAIN: a rename raced with the lookup; ENOSYS: before 5.6. */
		if (errno == ENOSYS)
			break;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
	return open_walk(dirfd, path, flags);
}

int np_ctx_open_at(const struct np_ctx *ctx, int dirfd, const char *dir, const char *path,
		   int flags)
{
	int want_dir = flags & O_DIRECTORY;
	int oflags = O_RDONLY | want_dir | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
	struct stat st, before;
	int fd;

	while (*path == '/')
		path++;
	if (ctx->live) {
		/* The kernel's own tree: no FIFO or device where we read, but a
		 * last component is still not followed. */
		fd = openat(dirfd, *path ? path : ".", oflags);
		if (fd < 0)
			fd = -errno;
		/* O_DIRECTORY | O_NOFOLLOW says ENOTDIR for a link. */
		if (fd == -ENOTDIR && fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			fd = -ELOOP;
	} else {
		/* Someone else's tree: look at what is there before opening it
		 * for reading, so a device is never opened, then check that the
		 * open found the same file. */
		fd = open_beneath(dirfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			int probe = fd;

			fd = fstat(probe, &before) < 0 ? -errno : 0;
			close(probe);
			if (!fd && (fd = kind_error(before.st_mode, want_dir)) < 0) {
				log_refusal(ctx, dir, path,
					    want_dir && fd == -ENOTDIR ? "not a directory"
								       : file_kind(before.st_mode));
				return fd;
			}
			if (!fd)
				fd = open_beneath(dirfd, path, oflags);
			if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != before.st_dev ||
					st.st_ino != before.st_ino)) {
				close(fd);
				log_refusal(ctx, dir, path, "replaced while it was opened");
				return -EBADFD;
			}
		}
	}
	if (fd >= 0 && !want_dir) {
		if (fstat(fd, &st) < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (!S_ISREG(st.st_mode)) {
			close(fd);
			log_refusal(ctx, dir, path, file_kind(st.st_mode));
			return kind_error(st.st_mode, false);
		}
	}
	if (fd < 0 && np_is_odd_file_error(fd))
		log_refusal(ctx, dir, path, np_file_strerror(fd));
	return fd;
}

int np_ctx_open(const struct np_ctx *ctx, const char *path, int flags)
{
	return np_ctx_open_at(ctx, ctx->root_fd, NULL, path, flags);
}

int np_fd_check_regular(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return kind_error(st.st_mode, false);
}

int np_open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	int err;

	if (fd < 0)
		return -errno;
	err = np_fd_check_regular(fd);
	/* "-c /dev/null" is the usual way to say "no settings": it reads as
	 * an empty file and never blocks. */
	if (err == -EBADFD && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
	    st.st_rdev == makedev(1, 3))
		err = 0;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

bool np_is_odd_file_error(int err)
{
	if (err < 0)
		err = -err;
	return err == ELOOP || err == EXDEV || err == EBADFD || err == EISDIR || err == ENOTDIR ||
	       err == EFBIG || err == ENXIO;
}

const char *np_file_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EBADFD:
		return "not a regular file";
	case ELOOP:
		return "a symbolic link, not followed";
	case EXDEV:
		return "leads outside the root";
	case ENXIO:
		return "a socket or a device, not a regular file";
	default:
		return strerror(err);
	}
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

int np_ctx_read_file_at(const struct np_ctx *ctx, int dirfd, const char *dir, const char *path,
			size_t max_len, char **buf, size_t *len)
{
	int fd = np_ctx_open_at(ctx, dirfd, dir, path, O_RDONLY);
	int err;

	if (fd < 0)
		return fd;
	err = np_read_fd(fd, max_len, buf, len);
	close(fd);
	if (err == -EFBIG) {
		char why[64];

		snprintf(why, sizeof(why), "larger than %zu bytes", max_len);
		log_refusal(ctx, dir, path, why);
	}
	return err;
}

int np_ctx_read_file(const struct np_ctx *ctx, const char *path, size_t max_len, char **buf,
		     size_t *len)
{
	return np_ctx_read_file_at(ctx, ctx->root_fd, NULL, path, max_len, buf, len);
}

const char *np_nth_line(const char *buf, size_t len, unsigned lineno, int *line_len)
{
	const char *p = buf, *end = buf + len, *nl;

	for (unsigned i = 1; i < lineno && (nl = memchr(p, '\n', (size_t)(end - p))); i++)
		p = nl + 1;
	nl = memchr(p, '\n', (size_t)(end - p));
	*line_len = (int)((nl ? nl : end) - p);
	return p;
}

bool np_is_vanished_error(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOENT || err == ESRCH || err == EINVAL;
}

bool np_is_permission_error(int err)
{
	if (err < 0)
		err = -err;
	return err == EACCES || err == EPERM;
}
