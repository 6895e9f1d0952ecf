/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "log.h"
#include "maskfile.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char logged[4096];

/* Open @path with a logger writing to a temporary file; what it wrote goes
 * to logged[]. */
static int open_logged(const char *path)
{
	struct np_logger *log = NULL;
	FILE *f = tmpfile();
	size_t n;
	int fd;

	CHECK(f != NULL);
	CHECK_INT(np_logger_new(f, NP_LOG_FORMAT_JOURNAL, &log), 0);
	fd = np_runtime_dir_open(path, log);
	np_logger_free(log);
	rewind(f);
	n = fread(logged, 1, sizeof(logged) - 1, f);
	logged[n] = '\0';
	fclose(f);
	return fd;
}

int main(void)
{
	char dir[] = "/tmp/np-runtime-XXXXXX", path[256], expect[512];
	struct np_saved_mask e = {.pid = 1, .start_ticks = 2}, *out;
	struct stat st;
	unsigned line;
	size_t n;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/run", dir);

	/* Missing: created 0700, and the masks file works in it. */
	fd = open_logged(path);
	CHECK(fd >= 0);
	CHECK_STR(logged, "");
	CHECK_INT(fstat(fd, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_INT(st.st_mode & 07777, 0700);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	np_bitmap_set(&e.before, 0);
	np_bitmap_set(&e.narrowed, 0);
	CHECK_INT(np_maskfile_save(fd, "masks", &e, 1), 0);
	CHECK_INT(np_maskfile_load(fd, "masks", &out, &n, &line), 0);
	CHECK_INT(n, 1);
	free(out);
	CHECK_INT(np_maskfile_save(fd, "masks", &e, 0), 0);
	close(fd);

	/* There already: opened as it is. */
	fd = open_logged(path);
	CHECK(fd >= 0);
	close(fd);

	/* Writable by others, or someone else's: refused. */
	CHECK_INT(chmod(path, 0777), 0);
	CHECK_INT(open_logged(path), -EPERM);
	snprintf(expect, sizeof(expect),
		 "<3>runtime directory %s: owned by uid %u with mode 0777, but must be owned by "
		 "uid %u and writable by it alone\n",
		 path, (unsigned)geteuid(), (unsigned)geteuid());
	CHECK_STR(logged, expect);
	CHECK_INT(chmod(path, 0700), 0);
	if (geteuid() == 0) {
		CHECK_INT(chown(path, 12345, 12345), 0);
		CHECK_INT(open_logged(path), -EPERM);
		CHECK(strstr(logged, "owned by uid 12345 with mode 0700") != NULL);
	}
	CHECK_INT(rmdir(path), 0);

	/* A file in its place, a missing parent: the message names the path. */
	CHECK_INT(close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)), 0);
	CHECK_INT(open_logged(path), -ENOTDIR);
	snprintf(expect, sizeof(expect), "<3>runtime directory %s: %s\n", path, strerror(ENOTDIR));
	CHECK_STR(logged, expect);
	CHECK_INT(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/missing/run", dir);
	CHECK_INT(open_logged(path), -ENOENT);
	snprintf(expect, sizeof(expect), "<3>runtime directory %s: cannot create it: %s\n", path,
		 strerror(ENOENT));
	CHECK_STR(logged, expect);

	CHECK_INT(rmdir(dir), 0);
	return check_done();
}
