/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opening files under a root: what /proc and /sys never hold where we read
 * (FIFOs, devices, links, directories, huge files) is refused at once with a
 * message naming the path. The odd files are made at test time: git cannot
 * hold a FIFO. */
#include "check.h"
#include "context.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

static char last_msg[4096];

__attribute__((format(printf, 3, 0)))
static void keep_last(void *data, int priority, const char *fmt, va_list args)
{
	(void)data;
	(void)priority;
	vsnprintf(last_msg, sizeof(last_msg), fmt, args);
}

static void put(const char *root, const char *path, const char *text)
{
	char full[4096];
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s", root, path);
	f = fopen(full, "w");
	if (!f) {
		perror(full);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void run(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "%s: failed\n", cmd);
		exit(2);
	}
}

/* ROOT/proc/{1..5} and a file outside the root. */
static void build_tree(const char *root)
{
	char cmd[8192], path[4096];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p proc/1 proc/2 proc/3 proc/5/numa_maps proc/6 sys && "
		 "echo secret >outside && mkfifo proc/2/stat && ln -s ../../outside proc/3/stat && "
		 "ln -s 1 proc/4 && ln -s /etc proc/6/etc",
		 root);
	run(cmd);
	put(root, "proc/1/stat", "1 (init) S\n");
	snprintf(path, sizeof(path), "%s/proc/6/null", root);
	/* Only root may make a device: without it, that check is skipped. */
	if (mknod(path, S_IFCHR | 0600, makedev(1, 3)) != 0 && errno != EPERM)
		perror(path);
}

/* One refusal: the error, and a message naming the path and the kind. */
static void check_refused(struct np_ctx *ctx, const char *path, int flags, int want,
			  const char *words)
{
	int fd;

	last_msg[0] = '\0';
	fd = np_ctx_open(ctx, path, flags);
	CHECK_INT(fd, want);
	if (fd >= 0)
		close(fd);
	if (!strstr(last_msg, path) || !strstr(last_msg, words)) {
		fprintf(stderr, "%s: message \"%s\" lacks \"%s\"\n", path, last_msg, words);
		CHECK(0);
	}
}

static void check_tree(const char *root)
{
	char dev[4096];
	struct stat st;
	struct np_ctx *ctx;
	char *buf;
	size_t len;
	int fd;

	CHECK_INT(np_ctx_new(root, &ctx), 0);
	np_ctx_set_log_fn(ctx, keep_last, NULL);
	np_ctx_set_log_priority(ctx, LOG_DEBUG);

	CHECK_INT(np_ctx_read_file(ctx, "proc/1/stat", 4096, &buf, &len), 0);
	free(buf);
	/* Without O_NONBLOCK this open would wait for a writer forever. */
	check_refused(ctx, "proc/2/stat", O_RDONLY, -EBADFD, "a FIFO");
	check_refused(ctx, "proc/3/stat", O_RDONLY, -ELOOP, "symbolic link");
	check_refused(ctx, "proc/4/stat", O_RDONLY, -ELOOP, "symbolic link");
	check_refused(ctx, "proc/4", O_RDONLY | O_DIRECTORY, -ELOOP, "symbolic link");
	check_refused(ctx, "proc/6/etc/passwd", O_RDONLY, -ELOOP, "symbolic link");
	check_refused(ctx, "proc/5/numa_maps", O_RDONLY, -EISDIR, "a directory");
	check_refused(ctx, "proc/1/stat", O_RDONLY | O_DIRECTORY, -ENOTDIR, "ot a directory");
	check_refused(ctx, "proc/../../outside", O_RDONLY, -EXDEV, "outside the root");
	snprintf(dev, sizeof(dev), "%s/proc/6/null", root);
	if (stat(dev, &st) == 0) /* never opened, so it cannot act on the open */
		check_refused(ctx, "proc/6/null", O_RDONLY, -EBADFD, "a character device");
	/* Too large: refused whole, with the limit. */
	last_msg[0] = '\0';
	CHECK_INT(np_ctx_read_file(ctx, "proc/1/stat", 4, &buf, &len), -EFBIG);
	CHECK(strstr(last_msg, "proc/1/stat: larger than 4 bytes") != NULL);
	/* Through a directory already open: the same rules, the same names. */
	fd = np_ctx_open(ctx, "proc/2", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	if (fd >= 0) {
		last_msg[0] = '\0';
		CHECK_INT(np_ctx_read_file_at(ctx, fd, "proc/2", "stat", 4096, &buf, &len),
			  -EBADFD);
		CHECK(strstr(last_msg, "/proc/2/stat: a FIFO") != NULL);
		CHECK_INT(np_ctx_open_at(ctx, fd, "proc/2", "../1/stat", O_RDONLY), -EXDEV);
		close(fd);
	}
	np_ctx_free(ctx);
}

/* The live machine's own links on the way are the kernel's, and followed;
 * a link as the last component is not. */
static void test_live(void)
{
	struct np_ctx *ctx;
	char *buf;
	size_t len;

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	CHECK_INT(np_ctx_read_file(ctx, "proc/self/stat", 4096, &buf, &len), 0);
	free(buf);
	CHECK_INT(np_ctx_open(ctx, "proc/self", O_RDONLY | O_DIRECTORY), -ELOOP);
	CHECK_INT(np_ctx_open(ctx, "proc/self/task", O_RDONLY), -EISDIR);
	np_ctx_free(ctx);
}

/* Files the user names: links followed, the end a regular file (or
 * /dev/null); a FIFO refused at once. */
static void test_open_regular(const char *root)
{
	char fifo[4096], link[4096], dir[4096];
	int fd;

	snprintf(fifo, sizeof(fifo), "%s/proc/2/stat", root);
	snprintf(link, sizeof(link), "%s/proc/3/stat", root);
	snprintf(dir, sizeof(dir), "%s/proc/5/numa_maps", root);
	CHECK_INT(np_open_regular(fifo), -EBADFD);
	CHECK_INT(np_open_regular(dir), -EISDIR);
	fd = np_open_regular(link);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	fd = np_open_regular("/dev/null");
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_STR(np_file_strerror(-EBADFD), "not a regular file");
	CHECK(np_is_odd_file_error(-EISDIR) && np_is_odd_file_error(-EFBIG) &&
	      np_is_odd_file_error(-ELOOP) && !np_is_odd_file_error(-ENOENT));
}

/* The same refusals on a kernel without openat2: a filter makes it answer
 * ENOSYS, as kernels before 5.6 do, in a child. */
static void test_without_openat2(const char *root)
{
	struct sock_filter insns[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(insns) / sizeof(insns[0]), .filter = insns};
	int status = -1; /* not an exit, should waitpid fail */
	pid_t child;

	fflush(NULL);
	child = fork();
	if (child == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
			perror("seccomp");
			_exit(77);
		}
		CHECK(syscall(SYS_openat2, AT_FDCWD, ".", NULL, 0) < 0 && errno == ENOSYS);
		check_tree(root);
		fflush(NULL);
		_exit(check_failures ? 1 : 0);
	}
	CHECK(child > 0 && waitpid(child, &status, 0) == child);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		printf("no seccomp: the walk without openat2 is not checked\n");
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	char root[] = "/tmp/np-context-XXXXXX", cmd[4200];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	build_tree(root);
	check_tree(root);
	test_live();
	test_open_regular(root);
	test_without_openat2(root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	run(cmd);
	return check_done();
}
