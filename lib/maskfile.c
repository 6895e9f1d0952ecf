/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "maskfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "context.h"
#include "task.h"

#define HEADER_LEN (sizeof(NP_MASKFILE_HEADER) - 1)

/* Entry @i is on line @i + 2: the header is line 1 and nothing else may
 * come between entries. */
#define ENTRY_LINE(i) ((unsigned)(i) + 2)

/* What the parser takes. A non-empty narrowed mask within before also
 * means before is not empty. */
static bool entry_valid(const struct np_saved_mask *e)
{
	return e->pid >= 1 && e->pid <= NP_CONFIG_PID_MAX && !np_bitmap_empty(&e->narrowed) &&
	       np_bitmap_subset(&e->narrowed, &e->before);
}

struct entry_key {
	int pid;
	uint64_t start_ticks;
	size_t index;
};

static int compare_keys(const void *a, const void *b)
{
	const struct entry_key *x = a, *y = b;
	int c = np_task_id_compare(x->pid, x->start_ticks, y->pid, y->start_ticks);

	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The first entry, in order, whose (pid, start) an earlier one has, or @n:
 * sorted by identity and then position, each repeat follows the entry it
 * repeats. Returns 0 or -ENOMEM. */
static int first_repeat(const struct np_saved_mask *v, size_t n, size_t *out)
{
	struct entry_key *keys;

	*out = n;
	if (n < 2)
		return 0;
	keys = malloc(n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct entry_key){v[i].pid, v[i].start_ticks, i};
	qsort(keys, n, sizeof(*keys), compare_keys);
	for (size_t i = 1; i < n; i++)
		if (keys[i].pid == keys[i - 1].pid &&
		    keys[i].start_ticks == keys[i - 1].start_ticks && keys[i].index < *out)
			*out = keys[i].index;
	free(keys);
	return 0;
}

/* The line of a valid @e, newline included: written at @buf, which has room
 * for it and a NUL, or with @buf NULL only measured. Returns its length. */
static size_t put_line(const struct np_saved_mask *e, char *buf)
{
	char head[32]; /* at most 7 + 1 + 20 + 1 bytes */
	size_t head_len =
	    (size_t)snprintf(head, sizeof(head), "%d %" PRIu64 " ", e->pid, e->start_ticks);
	size_t before_len = np_bitmap_format_list(&e->before, NULL, 0);
	size_t narrowed_len = np_bitmap_format_list(&e->narrowed, NULL, 0);

	if (buf) {
		memcpy(buf, head, head_len);
		buf += head_len;
		np_bitmap_format_list(&e->before, buf, before_len + 1);
		buf[before_len] = ' ';
		buf += before_len + 1;
		np_bitmap_format_list(&e->narrowed, buf, narrowed_len + 1);
		buf[narrowed_len] = '\n';
	}
	return head_len + before_len + 1 + narrowed_len + 1;
}

int np_maskfile_format(const struct np_saved_mask *v, size_t n, char **out, size_t *len)
{
	size_t total = HEADER_LEN + 1, repeat, used;
	char *buf;
	int err;

	if (n > NP_MASKFILE_ENTRIES_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		size_t line;

		if (!entry_valid(&v[i]))
			return -EINVAL;
		line = put_line(&v[i], NULL);
		if (line > NP_MASKFILE_LINE_MAX)
			return -EFBIG;
		total += line;
		if (total > NP_MASKFILE_SIZE_MAX)
			return -EFBIG;
	}
	err = first_repeat(v, n, &repeat);
	if (err)
		return err;
	if (repeat < n)
		return -EINVAL;
	buf = malloc(total + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, NP_MASKFILE_HEADER "\n", HEADER_LEN + 1);
	used = HEADER_LEN + 1;
	for (size_t i = 0; i < n; i++)
		used += put_line(&v[i], buf + used);
	buf[used] = '\0';
	*out = buf;
	*len = used;
	return 0;
}

/* The field at *@s: up to the next space, which is skipped, or to @end.
 * Returns the field's end. */
static const char *next_field(const char **s, const char *end)
{
	const char *space = memchr(*s, ' ', (size_t)(end - *s));

	*s = space ? space + 1 : end;
	return space ? space : end;
}

/* One line, without its newline. A missing field reads as empty, which no
 * field may be. */
static bool parse_entry(const char *s, const char *end, struct np_saved_mask *e)
{
	const char *field = s, *field_end = next_field(&s, end);
	uint64_t pid;

	if (!np_parse_u64(field, field_end, &pid) || pid < 1 || pid > NP_CONFIG_PID_MAX)
		return false;
	e->pid = (int)pid;
	field = s;
	field_end = next_field(&s, end);
	if (!np_parse_u64(field, field_end, &e->start_ticks))
		return false;
	field = s;
	field_end = next_field(&s, end);
	if (np_bitmap_parse_list(&e->before, field, (size_t)(field_end - field)))
		return false;
	field = s;
	field_end = next_field(&s, end);
	if (field_end != end ||
	    np_bitmap_parse_list(&e->narrowed, field, (size_t)(field_end - field)))
		return false;
	return entry_valid(e);
}

/* Complete lines after the header, counted up to one past the bound. */
static size_t count_entries(const char *p, const char *end)
{
	size_t n = 0;

	while (n <= NP_MASKFILE_ENTRIES_MAX && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		p++;
		n++;
	}
	return n;
}

int np_maskfile_parse(const char *buf, size_t len, struct np_saved_mask **out, size_t *n,
		      unsigned *bad_line)
{
	const char *p, *end;
	struct np_saved_mask *v = NULL;
	size_t nr = 0, cap, repeat;
	unsigned bad = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (bad_line)
		*bad_line = 0;
	if (len < HEADER_LEN + 1 || memcmp(buf, NP_MASKFILE_HEADER, HEADER_LEN) != 0 ||
	    buf[HEADER_LEN] != '\n') {
		if (bad_line)
			*bad_line = 1;
		return -EINVAL;
	}
	p = buf + HEADER_LEN + 1;
	end = buf + len;
	cap = count_entries(p, end);
	if (cap > NP_MASKFILE_ENTRIES_MAX)
		cap = NP_MASKFILE_ENTRIES_MAX;
	/* Zeroed, so that entries compare whole, padding included. */
	if (cap && !(v = calloc(cap, sizeof(*v))))
		return -ENOMEM;
	while (p < end) {
		size_t room = (size_t)(end - p);
		const char *nl =
		    memchr(p, '\n', room < NP_MASKFILE_LINE_MAX ? room : NP_MASKFILE_LINE_MAX);

		/* No newline: a line too long, or the end of the buffer
		 * without one (a write cut short). */
		if (!nl || nr == NP_MASKFILE_ENTRIES_MAX || !parse_entry(p, nl, &v[nr])) {
			bad = ENTRY_LINE(nr);
			break;
		}
		nr++;
		p = nl + 1;
	}
	/* A repeat before the first bad line is the first error. */
	err = first_repeat(v, nr, &repeat);
	if (!err && repeat < nr)
		bad = ENTRY_LINE(repeat);
	if (!err && bad)
		err = -EINVAL;
	if (err) {
		free(v);
		if (bad_line && err == -EINVAL)
			*bad_line = bad;
		return err;
	}
	*out = v;
	*n = nr;
	return 0;
}

/* A name in the directory itself, not a path. */
static bool plain_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static int unlink_if_there(int dirfd, const char *name)
{
	return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* Write @text to a fresh NAME.tmp @tmp and fsync it. Whatever was under
 * that name goes first (a save cut short by a crash leaves one): the file
 * is created, never opened, so no link, FIFO or device is written through. */
static int write_tmp(int dirfd, const char *tmp, const char *text, size_t len)
{
	int fd, err;

	err = unlink_if_there(dirfd, tmp);
	if (err)
		return err;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, text, len);
	/* 0600 whatever the umask took away: the daemon runs without
	 * CAP_DAC_OVERRIDE and must read its file back. */
	if (!err && fchmod(fd, 0600) < 0)
		err = -errno;
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

int np_maskfile_save(int dirfd, const char *name, const struct np_saved_mask *v, size_t n)
{
	char tmp[NAME_MAX + 1];
	char *text;
	size_t len;
	int err;

	if (!plain_name(name))
		return -EINVAL;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (n == 0) {
		err = unlink_if_there(dirfd, name);
		if (!err)
			err = unlink_if_there(dirfd, tmp);
		if (!err && fsync(dirfd) < 0)
			err = -errno;
		return err;
	}
	err = np_maskfile_format(v, n, &text, &len);
	if (err)
		return err;
	err = write_tmp(dirfd, tmp, text, len);
	free(text);
	if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
		err = -errno;
	if (err) {
		unlinkat(dirfd, tmp, 0);
		return err;
	}
	return fsync(dirfd) < 0 ? -errno : 0;
}

int np_maskfile_load(int dirfd, const char *name, struct np_saved_mask **out, size_t *n,
		     unsigned *bad_line)
{
	char *text;
	size_t len;
	int fd, err;

	*out = NULL;
	*n = 0;
	if (bad_line)
		*bad_line = 0;
	if (!plain_name(name))
		return -EINVAL;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = np_fd_check_regular(fd);
	if (!err)
		err = np_read_fd(fd, NP_MASKFILE_SIZE_MAX, &text, &len);
	close(fd);
	if (err)
		return err;
	err = np_maskfile_parse(text, len, out, n, bad_line);
	free(text);
	return err;
}
