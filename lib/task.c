/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "task.h"
#include "config.h"
#include "procevents.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <libproc2/pids.h>
#include <libproc2/stat.h>

/* Far above any real stat (~400 bytes), status (~1.5 KiB) or cgroup file. */
#define SMALL_FILE (256u * 1024)
/* The last stat field the daemon needs (processor). */
#define STAT_LAST_FIELD 39

/* ---- pure parsers ---- */

/* A decimal integer filling [s, s + len) exactly; an optional '-' gives a
 * negative value, kept in *neg and the magnitude in *v. */
static int parse_decimal(const char *s, size_t len, bool *neg, uint64_t *v)
{
	uint64_t val = 0;
	size_t i = 0;

	*neg = len > 0 && s[0] == '-';
	if (*neg)
		i++;
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned digit = (unsigned)(s[i] - '0');

		if (digit > 9 || val > (UINT64_MAX - digit) / 10)
			return -EINVAL;
		val = val * 10 + digit;
	}
	if (*neg && val > (uint64_t)INT64_MAX + 1)
		return -EINVAL;
	*v = val;
	return 0;
}

static int parse_unsigned(const char *s, size_t len, uint64_t max, uint64_t *v)
{
	bool neg;

	if (parse_decimal(s, len, &neg, v) || neg || *v > max)
		return -EINVAL;
	return 0;
}

/* Store field @field of a stat line (already known to be an integer, except
 * the state) into @out. */
static int stat_store(struct np_stat *out, unsigned field, const char *tok, size_t len)
{
	uint64_t v;
	bool neg;

	if (field == 3) {
		if (len != 1 || tok[0] <= ' ' || tok[0] > '~')
			return -EINVAL;
		out->state = tok[0];
		return 0;
	}
	switch (field) {
	case 4:
		if (parse_unsigned(tok, len, INT_MAX, &v))
			return -EINVAL;
		out->ppid = (int)v;
		return 0;
	case 9:
		if (parse_unsigned(tok, len, ULONG_MAX, &v))
			return -EINVAL;
		out->flags = (unsigned long)v;
		return 0;
	case 14:
		return parse_unsigned(tok, len, UINT64_MAX, &out->utime);
	case 15:
		return parse_unsigned(tok, len, UINT64_MAX, &out->stime);
	case 16:
	case 17:
		/* Signed in proc(5): a negative one (never seen) reads as 0. */
		if (parse_decimal(tok, len, &neg, &v))
			return -EINVAL;
		*(field == 16 ? &out->cutime : &out->cstime) = neg ? 0 : v;
		return 0;
	case 20:
		/* Each thread holds a pid: more than there can be is no count. */
		if (parse_unsigned(tok, len, NP_CONFIG_PID_MAX, &v))
			return -EINVAL;
		out->nr_threads = (long)v;
		return 0;
	case 22:
		return parse_unsigned(tok, len, UINT64_MAX, &out->start_ticks);
	case 24:
		return parse_unsigned(tok, len, UINT64_MAX, &out->rss_pages);
	case 39:
		if (parse_unsigned(tok, len, INT_MAX, &v))
			return -EINVAL;
		out->processor = (int)v;
		return 0;
	default:
		/* Not kept, but a field that is no number means this is not a
		 * stat line at all. */
		return parse_decimal(tok, len, &neg, &v);
	}
}

int np_stat_parse(const char *buf, size_t len, struct np_stat *out)
{
	const char *end = buf + len, *open, *close, *p;
	uint64_t pid;
	size_t comm_len;

	memset(out, 0, sizeof(*out));
	out->bad_field = 1;
	if (len == 0)
		return -EINVAL; /* and buf may be NULL */
	open = memchr(buf, '(', len);
	if (!open || open - buf < 2 || open[-1] != ' ' ||
	    parse_unsigned(buf, (size_t)(open - buf - 1), INT_MAX, &pid) || pid == 0)
		return -EINVAL;
	out->pid = (int)pid;
	/* The comm is whatever the task chose (prctl(PR_SET_NAME) takes any
	 * bytes but NUL), ')' and newlines included; only the last ')' is
	 * sure to be the kernel's. */
	out->bad_field = 2;
	close = memrchr(open + 1, ')', (size_t)(end - open - 1));
	if (!close)
		return -EINVAL;
	comm_len = (size_t)(close - open - 1);
	if (comm_len >= NP_COMM_MAX)
		comm_len = NP_COMM_MAX - 1;
	memcpy(out->comm, open + 1, comm_len);
	out->comm[comm_len] = '\0';

	p = close + 1;
	for (unsigned field = 3; field <= STAT_LAST_FIELD; field++) {
		const char *tok;

		out->bad_field = field;
		if (p >= end || *p != ' ')
			return -EINVAL;
		tok = ++p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (stat_store(out, field, tok, (size_t)(p - tok)))
			return -EINVAL;
	}
	out->bad_field = 0;
	return 0;
}

/* "  1234 kB" */
static int parse_kb(const char *s, size_t len, uint64_t *bytes)
{
	const char *end = s + len, *digits;
	uint64_t kb;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	digits = s;
	while (s < end && *s >= '0' && *s <= '9')
		s++;
	if (end - s != 3 || memcmp(s, " kB", 3) != 0 ||
	    parse_unsigned(digits, (size_t)(s - digits), UINT64_MAX / 1024, &kb))
		return -EINVAL;
	*bytes = kb * 1024;
	return 0;
}

static int status_store(struct np_status *out, const char *key, size_t key_len, const char *val,
			size_t val_len)
{
	uint64_t v;

#define KEY_IS(name) (key_len == sizeof(name) - 1 && memcmp(key, name, key_len) == 0)
	if (KEY_IS("VmRSS"))
		return parse_kb(val, val_len, &out->vm_rss_bytes);
	while (val_len && (*val == ' ' || *val == '\t')) {
		val++;
		val_len--;
	}
	if (KEY_IS("Threads")) {
		if (parse_unsigned(val, val_len, INT_MAX, &v))
			return -EINVAL;
		out->threads = (int)v;
	} else if (KEY_IS("Cpus_allowed_list")) {
		if (np_bitmap_parse_list(&out->cpus_allowed, val, val_len))
			return -EINVAL;
		out->has_cpus_allowed = true;
	} else if (KEY_IS("Mems_allowed_list")) {
		if (np_nodeset_parse_list(&out->mems_allowed, val, val_len))
			return -EINVAL;
		out->has_mems_allowed = true;
	}
#undef KEY_IS
	return 0;
}

int np_status_parse(const char *buf, size_t len, struct np_status *out)
{
	const char *p = buf, *end = buf + len;
	unsigned lineno = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(line_end - p));

		lineno++;
		if (colon && status_store(out, p, (size_t)(colon - p), colon + 1,
					  (size_t)(line_end - colon - 1))) {
			out->bad_line = lineno;
			return -EINVAL;
		}
		p = line_end + 1;
	}
	return 0;
}

int np_status_tgid(const char *buf, size_t len)
{
	static const char key[] = "Tgid:";
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if ((size_t)(line_end - p) >= sizeof(key) - 1 && !memcmp(p, key, sizeof(key) - 1)) {
			const char *val = p + sizeof(key) - 1;
			uint64_t v;

			while (val < line_end && (*val == ' ' || *val == '\t'))
				val++;
			if (parse_unsigned(val, (size_t)(line_end - val), INT_MAX, &v) || !v)
				return -EINVAL;
			return (int)v;
		}
		p = line_end + 1;
	}
	return -EINVAL;
}

/* "cpu3 4705 356 584 3699 23 23 0 0 0 0": user nice system idle iowait irq
 * softirq steal guest guest_nice. Guest time is already inside user and
 * nice, so it is not added again. */
static int cpu_line_parse(const char *p, const char *end, struct np_cpu_ticks *out)
{
	uint64_t v[8] = {0};
	unsigned n = 0;
	const char *tok;

	tok = p;
	while (p < end && *p != ' ')
		p++;
	/* The load table is indexed by CPU number: one no CPU mask can hold
	 * is refused rather than sized for. */
	if (parse_unsigned(tok, (size_t)(p - tok), NP_MAX_CPUS - 1, &v[0]))
		return -EINVAL;
	out->cpu = (int)v[0];
	v[0] = 0;
	while (n < 8 && (tok = np_next_field(&p, end))) {
		if (parse_unsigned(tok, (size_t)(p - tok), UINT64_MAX / 16, &v[n++]))
			return -EINVAL;
	}
	if (n < 4)
		return -EINVAL;
	out->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	out->total = out->busy + v[3] + v[4];
	return 0;
}

int np_cpu_ticks_parse(const char *buf, size_t len, struct np_cpu_ticks **out, unsigned *nr,
		       unsigned *bad_line)
{
	const char *p = buf, *end = buf + len;
	struct np_cpu_ticks *cpus = NULL;
	unsigned n = 0, cap = 0, lineno = 0;

	*bad_line = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		lineno++;
		if (line_end - p > 3 && memcmp(p, "cpu", 3) == 0 && p[3] != ' ') {
			if (n == cap) {
				struct np_cpu_ticks *bigger;

				cap = cap ? cap * 2 : 64;
				bigger = realloc(cpus, cap * sizeof(*cpus));
				if (!bigger) {
					free(cpus);
					return -ENOMEM;
				}
				cpus = bigger;
			}
			if (cpu_line_parse(p + 3, line_end, &cpus[n])) {
				free(cpus);
				*bad_line = lineno;
				return -EINVAL;
			}
			n++;
		}
		p = line_end + 1;
	}
	*out = cpus;
	*nr = n;
	return 0;
}

int np_uptime_parse(const char *buf, size_t len, uint64_t *ms)
{
	const char *p = buf, *end = buf + len, *digits = buf;
	uint64_t secs, frac = 0, scale = 1000;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	if (parse_unsigned(digits, (size_t)(p - digits), UINT64_MAX / 1000 - 1, &secs))
		return -EINVAL;
	if (p < end && *p == '.') {
		for (p++; p < end && *p >= '0' && *p <= '9'; p++) {
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (p < end && *p != ' ' && *p != '\n')
		return -EINVAL;
	*ms = secs * 1000 + frac;
	return 0;
}

/* ---- reading one task ---- */

/* The root for messages: "" for the live machine, so paths read /proc/... */
static const char *root_prefix(const struct np_ctx *ctx)
{
	return np_ctx_is_live(ctx) ? "" : np_ctx_root(ctx);
}

/* Read @name under the directory @dirfd (@what under the root); a
 * zero-byte read means the task is a zombie being reaped or gone, so it
 * reads as vanished (-ESRCH). */
static int read_at(struct np_ctx *ctx, int dirfd, const char *what, const char *name, char **buf,
		   size_t *len)
{
	int err = np_ctx_read_file_at(ctx, dirfd, what, name, SMALL_FILE, buf, len);

	if (!err && *len == 0) {
		free(*buf);
		return -ESRCH;
	}
	return err;
}

/* Read and parse "stat" under @dirfd. -ESRCH for a vanished task, -EINVAL
 * (logged, naming @what) for a malformed line. */
static int read_stat_at(struct np_ctx *ctx, int dirfd, const char *what, struct np_stat *st)
{
	char *buf;
	size_t len;
	int err = read_at(ctx, dirfd, what, "stat", &buf, &len);

	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	err = np_stat_parse(buf, len, st);
	if (err) {
		int line_len;
		const char *line = np_nth_line(buf, len, 1, &line_len);

		np_log(ctx, LOG_ERR, "%s/%s/stat: field %u is bad or missing: \"%.*s\"",
		       root_prefix(ctx), what, st->bad_field, line_len, line);
	}
	free(buf);
	return err;
}

static int open_task_dir(struct np_ctx *ctx, int pid, char *what, size_t what_size)
{
	int fd;

	snprintf(what, what_size, "proc/%d", pid);
	fd = np_ctx_open(ctx, what, O_RDONLY | O_DIRECTORY);
	if (fd < 0 && np_is_vanished_error(fd))
		return -ESRCH;
	return fd;
}

int np_task_dir_open(struct np_ctx *ctx, const struct np_task *task, char dir[NP_TASK_DIR_MAX])
{
	struct np_stat st;
	int dirfd = open_task_dir(ctx, task->pid, dir, NP_TASK_DIR_MAX);
	int err;

	if (dirfd < 0)
		return dirfd;
	/* Opened first, checked second: the stat read through the fd is the
	 * process the fd holds. */
	err = read_stat_at(ctx, dirfd, dir, &st);
	if (!err && (st.pid != task->pid || st.start_ticks != task->start_ticks))
		err = -ESRCH;
	if (err) {
		close(dirfd);
		return err;
	}
	return dirfd;
}

int np_task_verify(struct np_ctx *ctx, const struct np_task *task)
{
	char dir[NP_TASK_DIR_MAX];
	int dirfd = np_task_dir_open(ctx, task, dir);

	if (dirfd < 0)
		return dirfd;
	close(dirfd);
	return 0;
}

/* Read and parse "status" under @dirfd into @status. -ESRCH for a vanished
 * task, -EINVAL (logged, naming @what and the line) for a bad value. */
static int status_read_at(struct np_ctx *ctx, int dirfd, const char *what,
			  struct np_status *status)
{
	char *buf;
	size_t len;
	int err = read_at(ctx, dirfd, what, "status", &buf, &len);

	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	err = np_status_parse(buf, len, status);
	if (err) {
		int line_len;
		const char *line = np_nth_line(buf, len, status->bad_line, &line_len);

		np_log(ctx, LOG_ERR, "%s/%s/status:%u: bad value: \"%.*s\"", root_prefix(ctx), what,
		       status->bad_line, line_len, line);
	}
	free(buf);
	return err;
}

static int status_read(struct np_ctx *ctx, int dirfd, const char *what, struct np_task *task)
{
	struct np_status *status = malloc(sizeof(*status));
	int err;

	if (!status)
		return -ENOMEM;
	err = status_read_at(ctx, dirfd, what, status);
	if (!err) {
		task->cpus_allowed = status->cpus_allowed;
		task->mems_allowed = status->mems_allowed;
		task->rss_bytes = status->vm_rss_bytes;
	}
	free(status);
	return err;
}

/* Whether thread @tid (its directory @tidfd) may run on other CPUs than
 * its process's main thread. On the live machine one sched_getaffinity
 * call; under a fixture root, the thread's own status file. A thread that
 * left meanwhile, or a fixture without the file, reads as the same mask. */
static int thread_mask_differs(struct np_ctx *ctx, int tidfd, const char *tid_what, int tid,
			       const struct np_task *task, bool *differs)
{
	struct np_status *status;
	int err;

	*differs = false;
	if (np_bitmap_empty(&task->cpus_allowed)) /* the main thread's is not known */
		return 0;
	status = malloc(sizeof(*status));
	if (!status)
		return -ENOMEM;
	if (np_ctx_is_live(ctx)) {
		memset(&status->cpus_allowed, 0, sizeof(status->cpus_allowed));
		err = sched_getaffinity(tid, sizeof(status->cpus_allowed.w),
					(cpu_set_t *)status->cpus_allowed.w)
			  ? -errno
			  : 0;
		status->has_cpus_allowed = !err;
	} else {
		err = status_read_at(ctx, tidfd, tid_what, status);
	}
	if (!err && status->has_cpus_allowed)
		*differs = !np_bitmap_equal(&status->cpus_allowed, &task->cpus_allowed);
	free(status);
	return err == -ESRCH ? 0 : err;
}

/* The unified hierarchy's "0::/path" line; none on a v1-only system. */
static int cgroup_read(struct np_ctx *ctx, int dirfd, const char *what, struct np_task *task)
{
	char *buf, *line, *save = NULL;
	size_t len;
	int err = read_at(ctx, dirfd, what, "cgroup", &buf, &len);

	if (err == -ENOENT && faccessat(dirfd, "stat", R_OK, 0) == 0)
		return 0; /* a kernel without cgroups */
	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3) == 0) {
			task->cgroup = strdup(line + 3);
			if (!task->cgroup)
				err = -ENOMEM;
			break;
		}
	}
	free(buf);
	return err;
}

/* The nearest cgroup up the task's path that has the file @name (without
 * the cpuset controller a cgroup has no cpuset files and its parent's
 * apply), read into *buf; *buf is NULL when none has it (no cgroup v2, no
 * cpuset controller). Only -ENOMEM is an error: an unreadable file is the
 * same as none. */
static int nearest_cgroup_file(struct np_ctx *ctx, const char *cgroup, const char *name,
			       char **buf)
{
	size_t n = strlen(cgroup), len;
	char *path = malloc(n + strlen(name) + 32);
	int err;

	*buf = NULL;
	if (!path)
		return -ENOMEM;
	for (;;) {
		while (n > 1 && cgroup[n - 1] == '/')
			n--;
		sprintf(path, "sys/fs/cgroup%.*s/%s", n == 1 ? 0 : (int)n, cgroup, name);
		err = np_ctx_read_file(ctx, path, 1u << 16, buf, &len);
		if (!err || err == -ENOMEM || n <= 1)
			break;
		while (n > 1 && cgroup[n - 1] != '/')
			n--;
	}
	free(path);
	if (err)
		*buf = NULL;
	return err == -ENOMEM ? err : 0;
}

/* The CPUs and nodes its cgroup's cpuset gives it. An odd file is the same
 * as none: the bound is then unknown, not empty. */
static int cpuset_read(struct np_ctx *ctx, struct np_task *task)
{
	char *buf;
	int err = nearest_cgroup_file(ctx, task->cgroup, "cpuset.cpus.effective", &buf);

	if (!err && buf &&
	    np_bitmap_parse_list(&task->cpuset_cpus, buf, strcspn(buf, "\n")) < 0)
		np_bitmap_zero(&task->cpuset_cpus);
	free(buf);
	if (!err)
		err = nearest_cgroup_file(ctx, task->cgroup, "cpuset.mems.effective", &buf);
	if (!err && buf &&
	    np_nodeset_parse_list(&task->cpuset_mems, buf, strcspn(buf, "\n")) < 0)
		np_nodeset_zero(&task->cpuset_mems);
	free(buf);
	return err;
}

int np_task_cpus_now(struct np_ctx *ctx, int pid, struct np_bitmap *out)
{
	struct np_status *status;
	char what[32];
	int dirfd, err;

	if (np_ctx_is_live(ctx)) {
		/* The bitmap's words are a cpu_set_t, as thread_mask_differs
		 * uses them. */
		np_bitmap_zero(out);
		if (sched_getaffinity(pid, sizeof(out->w), (cpu_set_t *)out->w))
			return errno == ESRCH ? -ESRCH : -errno;
		return 0;
	}
	dirfd = open_task_dir(ctx, pid, what, sizeof(what));
	if (dirfd < 0)
		return dirfd;
	status = malloc(sizeof(*status));
	err = status ? status_read_at(ctx, dirfd, what, status) : -ENOMEM;
	close(dirfd);
	if (!err)
		*out = status->cpus_allowed;
	free(status);
	return err;
}

bool np_task_may_use_node(const struct np_task *task, int id)
{
	if (id < 0 || id >= NP_MAX_NODES)
		return false;
	/* Without CONFIG_CPUSETS status has no Mems_allowed line, and there
	 * is no limit; without a cgroup v2 cpuset, none either. */
	return (np_nodeset_empty(&task->mems_allowed) ||
		np_nodeset_test(&task->mems_allowed, (unsigned)id)) &&
	       (np_nodeset_empty(&task->cpuset_mems) ||
		np_nodeset_test(&task->cpuset_mems, (unsigned)id));
}

static int compare_threads(const void *a, const void *b)
{
	const struct np_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

int np_schedstat_parse(const char *buf, size_t len, uint64_t *run_ns, uint64_t *wait_ns)
{
	const char *p = buf, *end = buf + len;
	uint64_t v[3];

	if (len && buf[len - 1] == '\n')
		end--;
	for (unsigned i = 0; i < 3; i++) {
		const char *field = np_next_field(&p, end);

		if (!field || !np_parse_u64(field, p, &v[i]))
			return -EINVAL;
	}
	if (np_next_field(&p, end))
		return -EINVAL;
	*run_ns = v[0];
	*wait_ns = v[1];
	return 0;
}

/* A thread's wait for a CPU so far, from "schedstat" under @dirfd, into
 * *@wait_ns: 1, or 0 when it cannot be had: no such file (a kernel
 * without CONFIG_SCHED_INFO), one that shows no run time for a thread
 * that ran (a kernel that keeps the file but not the counts: before 5.14,
 * without CONFIG_SCHEDSTATS and delay accounting), or a line not as the
 * kernel writes it (logged, naming the file). -ESRCH: the thread is gone.
 * The wait is then not counted for the task, and the rest of its read
 * stands. */
static int read_wait_at(struct np_ctx *ctx, int dirfd, const char *what, uint64_t ran_ticks,
			uint64_t *wait_ns)
{
	uint64_t run_ns;
	char *buf;
	size_t len;
	int err = read_at(ctx, dirfd, what, "schedstat", &buf, &len);

	if (err)
		return err == -ESRCH || (np_is_vanished_error(err) && err != -ENOENT) ? -ESRCH : 0;
	err = np_schedstat_parse(buf, len, &run_ns, wait_ns);
	if (err) {
		int line_len;
		const char *line = np_nth_line(buf, len, 1, &line_len);

		np_log(ctx, LOG_WARNING,
		       "%s/%s/schedstat: line 1 is not three counts: \"%.*s\"; its task's wait "
		       "for a CPU is not counted",
		       root_prefix(ctx), what, line_len, line);
	}
	free(buf);
	return !err && (run_ns || !ran_ticks);
}

/* Each thread's last CPU, CPU time and wait for a CPU; threads that exit
 * meanwhile are skipped. */
static int threads_read(struct np_ctx *ctx, int dirfd, const char *what, bool waits,
			struct np_task *task)
{
	int taskfd = np_ctx_open_at(ctx, dirfd, what, "task", O_RDONLY | O_DIRECTORY);
	char task_what[NP_TASK_DIR_MAX + 8];
	unsigned cap = 0;
	struct dirent *de;
	DIR *dir;
	int err = 0;

	if (taskfd < 0)
		return np_is_vanished_error(taskfd) ? -ESRCH : taskfd;
	task->has_wait = waits;
	snprintf(task_what, sizeof(task_what), "%s/task", what);
	dir = fdopendir(taskfd);
	if (!dir) {
		close(taskfd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		char tid_what[320];
		struct np_stat st;
		uint64_t wait_ns = 0;
		int tidfd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		tidfd = np_ctx_open_at(ctx, taskfd, task_what, de->d_name, O_RDONLY | O_DIRECTORY);
		if (tidfd < 0 && np_is_odd_file_error(tidfd)) {
			err = tidfd; /* logged */
			break;
		}
		if (tidfd < 0)
			continue; /* exited meanwhile */
		snprintf(tid_what, sizeof(tid_what), "%s/task/%s", what, de->d_name);
		err = read_stat_at(ctx, tidfd, tid_what, &st);
		if (!err && !task->thread_masks_differ)
			err = thread_mask_differs(ctx, tidfd, tid_what, st.pid, task,
						  &task->thread_masks_differ);
		if (!err && task->has_wait) {
			int got = read_wait_at(ctx, tidfd, tid_what, st.utime + st.stime, &wait_ns);

			if (got < 0)
				err = got; /* gone: skipped, as when its stat is */
			else
				task->has_wait = got;
		}
		close(tidfd);
		if (err == -ESRCH) {
			err = 0;
			continue;
		}
		if (err)
			break;
		if (task->nr_thread_samples == cap) {
			struct np_thread *bigger;

			cap = cap ? cap * 2 : 8;
			bigger = realloc(task->threads, cap * sizeof(*bigger));
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			task->threads = bigger;
		}
		task->threads[task->nr_thread_samples++] = (struct np_thread){
		    .tid = st.pid,
		    .last_cpu = st.processor,
		    .cpu_ticks = st.utime + st.stime,
		    .wait_ns = wait_ns,
		};
	}
	closedir(dir);
	if (!err && task->nr_thread_samples == 0)
		err = -ESRCH; /* even the main thread is gone */
	if (!err)
		qsort(task->threads, task->nr_thread_samples, sizeof(*task->threads),
		      compare_threads);
	return err;
}

int np_task_read_details(struct np_ctx *ctx, struct np_task *task)
{
	return np_task_read_details_of(ctx, task, true);
}

int np_task_read_details_of(struct np_ctx *ctx, struct np_task *task, bool waits)
{
	char what[NP_TASK_DIR_MAX];
	int dirfd, err;

	np_task_clear(task);
	/* Everything below is read through this one directory: if the pid is
	 * reused meanwhile, the old directory stops answering rather than
	 * showing the new process. */
	dirfd = np_task_dir_open(ctx, task, what);
	if (dirfd < 0)
		return dirfd;
	err = status_read(ctx, dirfd, what, task);
	if (!err)
		err = cgroup_read(ctx, dirfd, what, task);
	if (!err && task->cgroup && task->cgroup[0] == '/')
		err = cpuset_read(ctx, task);
	if (!err)
		err = threads_read(ctx, dirfd, what, waits, task);
	close(dirfd);
	if (err) {
		np_task_clear(task);
		return err;
	}
	task->has_details = true;
	return 0;
}

int np_task_id_compare(int pid_a, uint64_t start_a, int pid_b, uint64_t start_b)
{
	if (pid_a != pid_b)
		return pid_a < pid_b ? -1 : 1;
	if (start_a != start_b)
		return start_a < start_b ? -1 : 1;
	return 0;
}

void np_task_move(struct np_task *dst, struct np_task *src)
{
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

/* What np_task_clear frees: enough for a task about to be overwritten. */
static void task_free_details(struct np_task *task)
{
	free(task->cgroup);
	free(task->threads);
	task->cgroup = NULL;
	task->threads = NULL;
}

void np_task_clear(struct np_task *task)
{
	task_free_details(task);
	task->nr_thread_samples = 0;
	task->has_wait = false;
	task->thread_masks_differ = false;
	task->has_details = false;
	np_bitmap_zero(&task->cpus_allowed);
	np_bitmap_zero(&task->cpuset_cpus);
	np_nodeset_zero(&task->cpuset_mems);
	np_nodeset_zero(&task->mems_allowed);
}

void np_task_list_reset(struct np_task_list *list)
{
	/* The slots are overwritten whole by the next scan: only what they
	 * own is freed, their 2 KiB of masks are not zeroed twice. */
	for (unsigned i = 0; i < list->nr; i++)
		task_free_details(&list->tasks[i]);
	list->nr = 0;
}

void np_task_list_clear(struct np_task_list *list)
{
	for (unsigned i = 0; i < list->nr; i++)
		np_task_clear(&list->tasks[i]);
	free(list->tasks);
	memset(list, 0, sizeof(*list));
}

/* ---- the source: our parser, and libproc2 where ours cannot read ---- */

/*
 * Two readers, one result. libproc2 only ever reads the real /proc, and it
 * is what procps trusts to walk it; on the live machine it reads what our
 * own reads cannot (read_live); under any other root (a fixture tree) we
 * walk root/proc with np_stat_parse alone. Both fill a struct np_stat per
 * process and share everything after that (add_task), and details always
 * use our parser.
 */
struct np_task_source {
	struct np_ctx *ctx;
	bool live; /* the real /proc: libproc2 may read it */
	/* Made at its first use: most scans never need it, and making it
	 * costs a start 15-20 ms of CPU in the test guest. */
	struct pids_info *pids;
	bool named_by_libproc2; /* np_task_source_read_named_by_libproc2 */
	struct stat_info *stat;
	long page_size;
	unsigned ticks_per_s;
	/* Per-CPU counters of the previous node load call, by CPU number. */
	struct np_cpu_ticks *prev_cpus;
	unsigned nr_prev_cpus;
	struct np_bitmap cpus_seen; /* the CPUs of that call */
	/* The last scan's tasks (struct src_entry, below), and who says which
	 * of them need not be read again. */
	struct src_entry *last;
	unsigned nr_last, last_cap;
	/* The array the next scan fills, swapped with last after it: at
	 * 10,000 tasks a fresh one each scan is a megabyte to fault in. */
	struct src_entry *next;
	unsigned next_cap;
	np_task_keep_fn keep;
	void *keep_data;
	/* With the process connector: the processes that changed since the
	 * last scan (unsorted, repeats allowed), and when /proc was listed. */
	struct np_proc_events *events;
	uint64_t resync_ms;
	bool must_list; /* events were lost, or too many wait */
	bool listed;	/* src->last comes from a listing */
	uint64_t listed_at_ms;
	struct heard_task *changed;
	unsigned nr_changed, changed_cap;
	/* Processes new to the scans, named by events and not read yet, by
	 * pid; each read once delay_ms have passed since it was first heard
	 * of. */
	struct heard_task *pending;
	unsigned nr_pending;
	uint64_t delay_ms;
	/* The last scan's uptime, and CLOCK_MONOTONIC's time then (the
	 * clock of the events' stamps). */
	uint64_t last_scan_ms;
	uint64_t last_scan_mono_ns;
};

/* A process an event named: since when, on the uptime clock. For a new
 * one, that is its birth (the fork event's stamp), or for one whose fork
 * no event told, the first event that named it: a process that lives
 * less than the first read's wait is never read. */
struct heard_task {
	int pid;
	uint64_t heard_ms;
};

static enum pids_item pids_items[] = {
    PIDS_ID_PID,     PIDS_CMD,	PIDS_STATE,	PIDS_FLAGS, PIDS_TICS_ALL,
    PIDS_TICS_BEGAN, PIDS_NLWP, PIDS_PROCESSOR, PIDS_RSS,   PIDS_ID_TGID,
    PIDS_ID_PPID,    PIDS_TICS_ALL_C,
};
enum {
	I_PID,
	I_CMD,
	I_STATE,
	I_FLAGS,
	I_TICS,
	I_BEGAN,
	I_NLWP,
	I_PROCESSOR,
	I_RSS,
	I_TGID,
	I_PPID,
	I_TICS_C
};

int np_task_source_new(struct np_ctx *ctx, struct np_task_source **out)
{
	struct np_task_source *src = calloc(1, sizeof(*src));
	long hz = sysconf(_SC_CLK_TCK);

	if (!src)
		return -ENOMEM;
	src->ctx = ctx;
	src->page_size = sysconf(_SC_PAGESIZE);
	src->ticks_per_s = hz > 0 ? (unsigned)hz : 100;
	src->live = np_ctx_is_live(ctx);
	if (src->live) {
		/* libproc2's errno is taken whatever its sign. */
		int err = procps_stat_new(&src->stat);

		if (err) {
			np_log(ctx, LOG_ERR, "libproc2: cannot read /proc: %s", strerror(abs(err)));
			np_task_source_free(src);
			return -abs(err);
		}
	}
	*out = src;
	return 0;
}

void np_task_source_free(struct np_task_source *src)
{
	if (!src)
		return;
	if (src->pids)
		procps_pids_unref(&src->pids);
	if (src->stat)
		procps_stat_unref(&src->stat);
	free(src->prev_cpus);
	free(src->last);
	free(src->next);
	free(src->changed);
	free(src->pending);
	np_proc_events_close(src->events);
	free(src);
}

static int add_task(struct np_task_source *src, struct np_task_list *list, const struct np_stat *st)
{
	/* USER_HZ ticks to ms without overflowing on absurd start times. */
	uint64_t start_ms = st->start_ticks / src->ticks_per_s * 1000 +
			    st->start_ticks % src->ticks_per_s * 1000 / src->ticks_per_s;
	struct np_task *task;

	if (list->nr == list->cap) {
		unsigned cap = list->cap ? list->cap * 2 : 256;
		struct np_task *bigger = realloc(list->tasks, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		list->tasks = bigger;
		list->cap = cap;
	}
	task = &list->tasks[list->nr++];
	/* The slot's last two KiB are masks, read only with details: at
	 * 10,000 tasks, zeroing them at every scan was a third of an idle
	 * daemon's time. */
	memset(task, 0, offsetof(struct np_task, cpus_allowed));
	task->pid = st->pid;
	task->start_ticks = st->start_ticks;
	task->ppid = st->ppid;
	memcpy(task->comm, st->comm, sizeof(task->comm));
	task->state = st->state;
	task->flags = st->flags;
	task->kthread = st->flags & NP_PF_KTHREAD;
	task->cpu_ticks = st->utime + st->stime;
	task->child_cpu_ticks = st->cutime + st->cstime;
	task->nr_threads = st->nr_threads > 0 ? (unsigned)st->nr_threads : 0;
	task->last_cpu = st->processor;
	task->rss_bytes = st->rss_pages * (uint64_t)src->page_size;
	task->age_ms = list->uptime_ms > start_ms ? list->uptime_ms - start_ms : 0;
	return 0;
}

/*
 * What the source keeps of the last scan, one entry per task listed, by
 * pid: the stat it read and the inode of its /proc entry. A pid whose entry
 * has another inode is another process (or the same one's dentry, evicted
 * and made again): it is read again either way.
 */
struct src_entry {
	uint64_t ino;
	bool changed;	 /* an event said so: read it, whatever the callback says */
	bool kept;	 /* the last record stands in for this scan's */
	bool unchanged;	 /* kept, and known not to have changed */
	bool valid;	 /* read (or kept); false: vanished, or unreadable */
	bool identified; /* its thread group checked (status read) */
	struct np_stat st;
};

static int compare_entries(const void *a, const void *b)
{
	const struct src_entry *x = a, *y = b;

	return (x->st.pid > y->st.pid) - (x->st.pid < y->st.pid);
}

/* The entry of @pid in @v (sorted by pid), or NULL. */
static struct src_entry *entry_of(struct src_entry *v, unsigned nr, int pid)
{
	unsigned lo = 0, hi = nr;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (v[mid].st.pid < pid)
			lo = mid + 1;
		else if (v[mid].st.pid > pid)
			hi = mid;
		else
			return &v[mid];
	}
	return NULL;
}

/* Every process directory of root/proc into a fresh array sorted by pid,
 * each entry with its inode and nothing read yet. */
static int list_proc(struct np_task_source *src, struct src_entry **out, unsigned *nr_out)
{
	int procfd = np_ctx_open(src->ctx, "proc", O_RDONLY | O_DIRECTORY);
	struct src_entry *v = src->next;
	unsigned nr = 0, cap = src->next_cap;
	struct dirent *de;
	bool sorted = true;
	DIR *dir;

	if (procfd < 0) {
		np_log(src->ctx, LOG_ERR, "%s/proc: %s", root_prefix(src->ctx), strerror(-procfd));
		return procfd;
	}
	dir = fdopendir(procfd);
	if (!dir) {
		int err = -errno;

		close(procfd);
		return err;
	}
	for (;;) {
		unsigned long pid;
		char *end;

		/* A listing cut short would make every task after the cut look
		 * gone, and its state (the masks to give back) be let go. */
		errno = 0;
		de = readdir(dir);
		if (!de) {
			int err = errno ? -errno : 0;

			if (!err)
				break;
			np_log(src->ctx, LOG_ERR, "%s/proc: %s", root_prefix(src->ctx),
			       strerror(-err));
			closedir(dir);
			return err;
		}

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		errno = 0;
		pid = strtoul(de->d_name, &end, 10);
		if (*end || errno || pid > INT_MAX)
			continue;
		if (nr == cap) {
			unsigned bigger_cap = cap ? cap * 2 : 512;
			struct src_entry *bigger = realloc(v, bigger_cap * sizeof(*bigger));

			if (!bigger) {
				closedir(dir);
				return -ENOMEM;
			}
			v = src->next = bigger;
			cap = src->next_cap = bigger_cap;
		}
		v[nr] = (struct src_entry){.ino = de->d_ino};
		v[nr].st.pid = (int)pid;
		sorted = sorted && (nr == 0 || v[nr - 1].st.pid < (int)pid);
		nr++;
	}
	closedir(dir);
	/* /proc lists pids in ascending order, so this is usually skipped. */
	if (!sorted)
		qsort(v, nr, sizeof(*v), compare_entries);
	*out = v;
	*nr_out = nr;
	return 0;
}

/* Whether the task under @dirfd leads thread group @pid, by its status
 * (read through the same directory: the same task, whatever happens to
 * the pid since): 0, -ESRCH for a thread (its Tgid is another's; or no
 * Tgid line) or a task gone, or another error of the read. */
static int leads_group_at(struct np_ctx *ctx, int dirfd, const char *what, int pid)
{
	char *buf;
	size_t len;
	int err = read_at(ctx, dirfd, what, "status", &buf, &len);

	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	err = np_status_tgid(buf, len) == pid ? 0 : -ESRCH;
	free(buf);
	return err;
}

/* Read one task's stat with our own parser: every stat under a fixture
 * root; on the live machine a process listed or known, or one only events
 * named (read_live), and a comm that libproc2 would have changed. With
 * @ino (a listing's inode, not 0 or 1), a directory of another inode gives
 * -ESTALE: a thread that took the pid since the listing, or the same
 * process, its dentry evicted and made again (procfs numbers its inodes
 * afresh): libproc2 tells which. With @leader, its status must name it
 * the leader of its thread group (leads_group_at): a thread's id opens
 * under /proc as well, only readdir leaves threads out. */
static int read_tree_one(struct np_task_source *src, int pid, uint64_t ino, bool leader,
			 struct np_stat *st)
{
	char what[32];
	int dirfd = open_task_dir(src->ctx, pid, what, sizeof(what));
	struct stat sb;
	int err = 0;

	if (dirfd < 0)
		return dirfd;
	if (ino > 1 && (fstat(dirfd, &sb) || (uint64_t)sb.st_ino != ino)) {
		close(dirfd);
		return -ESTALE;
	}
	if (leader)
		err = leads_group_at(src->ctx, dirfd, what, pid);
	if (!err)
		err = read_stat_at(src->ctx, dirfd, what, st);
	close(dirfd);
	if (!err && st->pid != pid)
		err = -ESRCH; /* not the process listed under that name */
	return err;
}

/* Sort out one read's error: a task that vanished or whose files are odd
 * or malformed (logged) is left out; anything else ends the scan. */
static int read_result(struct np_task_source *src, struct np_task_list *list, struct src_entry *e,
		       int err)
{
	e->valid = err == 0;
	if (err == -ESRCH) {
		list->nr_vanished++;
		return 0;
	}
	if (!err || err == -EINVAL || np_is_odd_file_error(err))
		return 0;
	np_log(src->ctx, LOG_ERR, "%s/proc/%d: %s", root_prefix(src->ctx), e->st.pid,
	       strerror(-err));
	return err;
}

static int read_tree(struct np_task_source *src, struct np_task_list *list, struct src_entry *v,
		     unsigned nr)
{
	int err = 0;

	for (unsigned i = 0; i < nr && !err; i++)
		if (!v[i].kept)
			err = read_result(src, list, &v[i],
					  read_tree_one(src, v[i].st.pid, 0, false, &v[i].st));
	return err;
}

/*
 * libproc2 turns control bytes in a comm into '.' and bytes above 0x7e into
 * '?', which would make one process look different to the two sources
 * (and "a.b" and "a\nb" look alike). Such names are rare, so those tasks get
 * their comm re-read with np_stat_parse, as the fixture source does.
 */
static int refine_comm(struct np_task_source *src, struct np_stat *st)
{
	struct np_stat exact;
	int err;

	if (!strpbrk(st->comm, ".?"))
		return 0;
	err = read_tree_one(src, st->pid, 0, false, &exact);
	if (np_is_permission_error(err))
		return 0; /* what libproc2 could read and we may not: its comm */
	if (err)
		return err;
	if (exact.start_ticks != st->start_ticks)
		return -ESRCH; /* exec'd or replaced: the next scan sees it */
	memcpy(st->comm, exact.comm, sizeof(st->comm));
	return 0;
}

/* libproc2 reads at most this many pids in one select (FILL_ID_MAX). */
#define SELECT_MAX 255

/* One select of the pids in @pids (all of them entries of @v). */
static int read_libproc2_some(struct np_task_source *src, struct np_task_list *list,
			      struct src_entry *v, unsigned nr, unsigned *pids, unsigned nr_pids)
{
	struct pids_fetch *fetch;
	unsigned found = 0;
	int err = 0;

	if (!src->pids) {
		/* Whatever its sign, as above. */
		err = -abs(procps_pids_new(&src->pids, pids_items,
					   (int)(sizeof(pids_items) / sizeof(pids_items[0]))));
		if (err) {
			src->pids = NULL;
			np_log(src->ctx, LOG_ERR, "libproc2: cannot read /proc: %s", strerror(-err));
			return err;
		}
	}
	errno = 0;
	fetch = procps_pids_select(src->pids, pids, (int)nr_pids, PIDS_SELECT_PID);
	if (!fetch) {
		err = errno ? -errno : -EIO;
		np_log(src->ctx, LOG_ERR, "libproc2: cannot read /proc: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < fetch->counts->total && !err; i++) {
		struct pids_stack *s = fetch->stacks[i];
		const char *cmd = PIDS_VAL(I_CMD, str, s, src->pids);
		struct np_stat st = {
		    .pid = PIDS_VAL(I_PID, s_int, s, src->pids),
		    .state = PIDS_VAL(I_STATE, s_ch, s, src->pids),
		    .flags = PIDS_VAL(I_FLAGS, ul_int, s, src->pids),
		    .utime = PIDS_VAL(I_TICS, ull_int, s, src->pids),
		    .nr_threads = PIDS_VAL(I_NLWP, s_int, s, src->pids),
		    .start_ticks = PIDS_VAL(I_BEGAN, ull_int, s, src->pids),
		    .rss_pages = PIDS_VAL(I_RSS, ul_int, s, src->pids),
		    .processor = PIDS_VAL(I_PROCESSOR, s_int, s, src->pids),
		    .ppid = PIDS_VAL(I_PPID, s_int, s, src->pids),
		};
		unsigned long long all_c = PIDS_VAL(I_TICS_C, ull_int, s, src->pids);

		/* Its own and its children's together: the children's is the
		 * difference (cstime goes in the one field). */
		st.cutime = all_c > st.utime ? all_c - st.utime : 0;
		struct src_entry *e = entry_of(v, nr, st.pid);

		if (!e || e->kept || e->valid)
			continue; /* not asked for: cannot happen */
		/* A pid listed or named, a thread's since: its stat
		 * opens all the same (only readdir hides threads). */
		if (PIDS_VAL(I_TGID, s_int, s, src->pids) != st.pid)
			continue;
		snprintf(st.comm, sizeof(st.comm), "%s", cmd ? cmd : "");
		found++;
		e->identified = true;
		err = refine_comm(src, &st);
		if (!err)
			e->st = st;
		err = read_result(src, list, e, err);
	}
	/* The pids it did not find have gone since the listing. */
	if (!err && found < nr_pids)
		list->nr_vanished += nr_pids - found;
	return err;
}

/* The live machine's reads (see np_task_source in task.h): one stat read of
 * ours for a process this scan's listing named (under the inode it listed)
 * or one whose last record has its start time; in a scan without a
 * listing, a process new to the source that only an event named, or
 * another one under a pid the source knew, is read with its status too
 * (read_tree_one's @leader); libproc2 for the rest: a listed pid whose directory
 * is not the inode listed, and one our read was refused (hidepid, a
 * security module: what libproc2 cannot read either, it leaves out, as if
 * gone). Any other error of ours ends the scan, as a failed libproc2
 * select does. */
static int read_live(struct np_task_source *src, struct np_task_list *list, struct src_entry *v,
		     unsigned nr)
{
	unsigned pids[SELECT_MAX], n = 0, old = 0;
	int err = 0;

	for (unsigned i = 0; i < nr && !err; i++) {
		const struct np_stat *last = NULL;
		struct np_stat st;
		bool refused = false;
		int r;

		if (v[i].kept)
			continue;
		while (old < src->nr_last && src->last[old].st.pid < v[i].st.pid)
			old++;
		if (old < src->nr_last && src->last[old].st.pid == v[i].st.pid)
			last = &src->last[old].st;
		if (list->listed_proc || last) {
			r = read_tree_one(src, v[i].st.pid, list->listed_proc ? v[i].ino : 0, false, &st);
			if (r && r != -ESTALE && !np_is_permission_error(r)) {
				err = read_result(src, list, &v[i], r);
				continue;
			}
			if (!r && (list->listed_proc || st.start_ticks == last->start_ticks)) {
				v[i].st = st;
				err = read_result(src, list, &v[i], 0);
				continue;
			}
			refused = r != 0; /* another inode, or a read refused */
		}
		/* Named by events alone: a process new to the source, or
		 * another one under a pid it knew, or a thread that took the
		 * pid since (its status tells). */
		if (!list->listed_proc && !refused && !src->named_by_libproc2) {
			r = read_tree_one(src, v[i].st.pid, 0, true, &st);
			if (!np_is_permission_error(r)) {
				if (!r) {
					v[i].st = st;
					v[i].identified = true;
				}
				err = read_result(src, list, &v[i], r);
				continue;
			}
		}
		pids[n++] = (unsigned)v[i].st.pid;
		if (n == SELECT_MAX) {
			err = read_libproc2_some(src, list, v, nr, pids, n);
			n = 0;
		}
	}
	if (!err && n)
		err = read_libproc2_some(src, list, v, nr, pids, n);
	return err;
}

static int uptime_read(struct np_ctx *ctx, uint64_t *ms)
{
	char *buf;
	size_t len;
	int err = np_ctx_read_file(ctx, "proc/uptime", 4096, &buf, &len);

	if (err) {
		np_log(ctx, LOG_ERR, "%s/proc/uptime: %s", root_prefix(ctx), strerror(-err));
		return err;
	}
	err = np_uptime_parse(buf, len, ms);
	if (err)
		np_log(ctx, LOG_ERR, "%s/proc/uptime: not an uptime: \"%.*s\"", root_prefix(ctx),
		       (int)strcspn(buf, "\n"), buf);
	free(buf);
	return err;
}

/* More processes changed between two scans than this: list /proc instead. */
#define CHANGED_MAX 65536

/* Whether the last scan listed @pid. */
static bool listed_last(struct np_task_source *src, int pid)
{
	return entry_of(src->last, src->nr_last, pid) != NULL;
}

/* Past this many processes named since the last scan, an exit is not
 * looked for among them: the exited one's read fails, as it would have. */
#define DROP_SEARCH_MAX 4096

/* A process no scan listed, whose main thread exited before its first
 * read: nothing is left to read (a leader that exits before its other
 * threads leaves a process; the next listing finds it). Named processes
 * are unsorted between scans; pending ones sorted by pid. */
static void drop_unlisted(struct np_task_source *src, int pid)
{
	unsigned lo = 0, hi = src->nr_pending;

	if (src->nr_changed <= DROP_SEARCH_MAX)
		for (unsigned c = src->nr_changed; c-- > 0;)
			if (src->changed[c].pid == pid)
				src->changed[c] = src->changed[--src->nr_changed];
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (src->pending[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < src->nr_pending && src->pending[lo].pid == pid) {
		memmove(&src->pending[lo], &src->pending[lo + 1],
			(src->nr_pending - lo - 1) * sizeof(*src->pending));
		src->nr_pending--;
	}
}

/* CLOCK_MONOTONIC, the clock the connector stamps its messages with. */
static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When an event stamped @time_ns was, on the uptime clock: the last
 * scan's uptime, plus the time since then, if it came after it (one that
 * waited in the socket since before is taken as of the scan: at least as
 * old). The stamp is trusted no further than the clock now. */
static uint64_t heard_at(const struct np_task_source *src, uint64_t time_ns)
{
	uint64_t now_ns;

	if (time_ns <= src->last_scan_mono_ns || !src->last_scan_mono_ns)
		return src->last_scan_ms;
	now_ns = monotonic_ns();
	if (time_ns > now_ns)
		time_ns = now_ns;
	return src->last_scan_ms + (time_ns - src->last_scan_mono_ns) / 1000000;
}

/* Whether a process heard of has waited long enough for its first read
 * at @now_ms. */
static bool waited(const struct np_task_source *src, const struct heard_task *t, uint64_t now_ms)
{
	return now_ms >= t->heard_ms && now_ms - t->heard_ms >= src->delay_ms;
}

static void on_event(void *data, const struct np_proc_event *ev)
{
	struct np_task_source *src = data;

	if (ev->kind != NP_PROC_CHANGED || src->must_list)
		return;
	if (ev->exited && !listed_last(src, ev->tgid)) {
		drop_unlisted(src, ev->tgid);
		return;
	}
	if (src->nr_changed == src->changed_cap) {
		unsigned cap = src->changed_cap ? src->changed_cap * 2 : 256;
		struct heard_task *bigger =
		    cap <= CHANGED_MAX ? realloc(src->changed, cap * sizeof(*bigger)) : NULL;

		if (!bigger) {
			src->must_list = true; /* a listing sees them all */
			src->nr_changed = 0;
			return;
		}
		src->changed = bigger;
		src->changed_cap = cap;
	}
	src->changed[src->nr_changed++] = (struct heard_task){ev->tgid, heard_at(src, ev->time_ns)};
}

void np_task_source_use_events(struct np_task_source *src, struct np_proc_events *events,
			       uint64_t resync_ms)
{
	if (src->events != events)
		np_proc_events_close(src->events);
	src->events = events;
	src->resync_ms = resync_ms;
	src->must_list = true;
	src->nr_changed = 0;
}

void np_task_source_set_resync(struct np_task_source *src, uint64_t resync_ms)
{
	src->resync_ms = resync_ms;
	src->must_list = true;
	src->nr_changed = 0;
}

int np_task_source_events_fd(const struct np_task_source *src)
{
	return src->events ? np_proc_events_fd(src->events) : -1;
}

/* Take the events waiting: np_proc_events_drain's result. Lost events or
 * a failed socket make the next scan list /proc (@more_lists: so do events
 * left waiting, for a scan that cannot wait for them). */
static int drain_events(struct np_task_source *src, bool more_lists)
{
	int err = src->events ? np_proc_events_drain(src->events, on_event, src) : 0;

	if (err < 0 || (err == 1 && more_lists)) {
		src->must_list = true;
		src->nr_changed = 0;
	}
	return err;
}

int np_task_source_take_events(struct np_task_source *src)
{
	int err = drain_events(src, false);

	/* More waiting: 1, the caller takes them again soon. Lost: a scan
	 * lists. */
	return err == -ENOBUFS ? 0 : err;
}

void np_task_source_read_named_by_libproc2(struct np_task_source *src, bool on)
{
	src->named_by_libproc2 = on;
}

void np_task_source_stop_events(struct np_task_source *src)
{
	np_proc_events_close(src->events);
	src->events = NULL;
	src->must_list = true;
	src->nr_changed = 0;
}

static int compare_heard(const void *a, const void *b)
{
	int x = ((const struct heard_task *)a)->pid, y = ((const struct heard_task *)b)->pid;

	return (x > y) - (x < y);
}

/* The pids named by events since the last scan, in order (none may have been
 * named yet, and then there is no array to sort). */
static void sort_changed(struct np_task_source *src)
{
	if (src->nr_changed)
		qsort(src->changed, src->nr_changed, sizeof(*src->changed), compare_heard);
}

void np_task_source_set_first_read_delay(struct np_task_source *src, uint64_t delay_ms)
{
	src->delay_ms = delay_ms;
}

/* Of the pids named since the last scan (sorted), those new to the scans
 * wait in src->pending; those that waited long enough join the named ones
 * (left sorted, repeats allowed). -ENOMEM (no memory, or too many to keep
 * track of): nothing is changed. */
static int defer_new(struct np_task_source *src, uint64_t now_ms)
{
	unsigned kept = 0, nr_new = 0, p = 0, n = 0, nr = 0;
	struct heard_task *merged;

	for (unsigned c = 0; c < src->nr_changed; c++)
		nr_new += !listed_last(src, src->changed[c].pid);
	if (!nr_new && !src->nr_pending)
		return 0;
	if (src->nr_changed + src->nr_pending > CHANGED_MAX)
		return -ENOMEM;
	/* The due ones join the named ones: room for all of them. */
	if (src->nr_changed + src->nr_pending > src->changed_cap) {
		unsigned cap = src->nr_changed + src->nr_pending;
		struct heard_task *bigger = realloc(src->changed, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		src->changed = bigger;
		src->changed_cap = cap;
	}
	merged = malloc(((size_t)src->nr_pending + nr_new + 1) * sizeof(*merged));
	if (!merged)
		return -ENOMEM;
	/* The pending ones and the new ones, merged by pid: a pid heard of
	 * again keeps the time it was first heard of. */
	while (p < src->nr_pending || n < src->nr_changed) {
		struct heard_task m;

		if (n < src->nr_changed && listed_last(src, src->changed[n].pid)) {
			src->changed[kept++] = src->changed[n++];
			continue;
		}
		if (p < src->nr_pending &&
		    (n == src->nr_changed || src->pending[p].pid <= src->changed[n].pid))
			m = src->pending[p++];
		else
			m = src->changed[n];
		for (; n < src->nr_changed && src->changed[n].pid == m.pid; n++)
			if (src->changed[n].heard_ms < m.heard_ms)
				m.heard_ms = src->changed[n].heard_ms;
		merged[nr++] = m;
	}
	/* Those due are named now; the others wait. */
	src->nr_changed = kept;
	src->nr_pending = 0;
	for (unsigned i = 0; i < nr; i++) {
		if (waited(src, &merged[i], now_ms))
			src->changed[src->nr_changed++] = merged[i];
		else
			merged[src->nr_pending++] = merged[i];
	}
	free(src->pending);
	src->pending = merged;
	sort_changed(src);
	return 0;
}

/* The last scan's processes and those that changed since, sorted by pid,
 * as a listing of /proc would give them (the changed ones marked). */
static int list_from_events(struct np_task_source *src, struct src_entry **out, unsigned *nr_out)
{
	unsigned nr = 0, old = 0, c = 0;
	struct src_entry *v;

	sort_changed(src);
	if (src->nr_last + src->nr_changed + 1 > src->next_cap) {
		unsigned cap = src->nr_last + src->nr_changed + 1;

		cap += cap / 4;
		v = realloc(src->next, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		src->next = v;
		src->next_cap = cap;
	}
	v = src->next;
	while (old < src->nr_last || c < src->nr_changed) {
		int pid = old < src->nr_last ? src->last[old].st.pid : INT_MAX;
		bool changed = c < src->nr_changed && src->changed[c].pid <= pid;

		if (changed)
			pid = src->changed[c].pid;
		v[nr] = (struct src_entry){.changed = changed};
		v[nr].st.pid = pid;
		if (old < src->nr_last && src->last[old].st.pid == pid)
			v[nr].ino = src->last[old++].ino;
		while (c < src->nr_changed && src->changed[c].pid == pid)
			c++;
		nr++;
	}
	src->nr_changed = 0;
	*out = v;
	*nr_out = nr;
	return 0;
}

/* This scan's processes: from a listing of /proc, or from the last scan's
 * and the events since. */
static int list_tasks(struct np_task_source *src, struct np_task_list *list, struct src_entry **v,
		      unsigned *nr)
{
	int err;

	/* Events left in the socket, or lost, or a socket that failed: the
	 * listing sees every process all the same. */
	drain_events(src, true);
	list->listed_proc = !(src->events && src->listed && !src->must_list &&
			      list->uptime_ms - src->listed_at_ms < src->resync_ms);
	/* New processes wait; with no room to keep track of them, a listing
	 * reads them all. */
	if (!list->listed_proc && src->delay_ms) {
		sort_changed(src);
		list->listed_proc = defer_new(src, list->uptime_ms) != 0;
	}
	if (!list->listed_proc)
		return list_from_events(src, v, nr);
	/* The listing lists the young ones too; until it succeeds, one is
	 * owed. */
	src->nr_pending = 0;
	src->must_list = true;
	err = list_proc(src, v, nr);
	if (!err) {
		/* The processes named since the last scan are listed, but an
		 * exec or a rename keeps pid and inode: they are read. */
		sort_changed(src);
		for (unsigned c = 0; c < src->nr_changed; c++) {
			struct src_entry *e = entry_of(*v, *nr, src->changed[c].pid);

			if (e)
				e->changed = true;
		}
		src->must_list = false;
		src->listed_at_ms = list->uptime_ms;
	}
	src->nr_changed = 0;
	return err;
}

void np_task_source_set_keep(struct np_task_source *src, np_task_keep_fn keep, void *data)
{
	src->keep = keep;
	src->keep_data = data;
}

/* Which listed tasks keep the last scan's record. */
static void mark_kept(struct np_task_source *src, struct src_entry *v, unsigned nr)
{
	unsigned old = 0;

	if (!src->keep)
		return;
	for (unsigned i = 0; i < nr; i++) {
		const struct src_entry *last;
		enum np_task_keep keep;

		while (old < src->nr_last && src->last[old].st.pid < v[i].st.pid)
			old++;
		if (old == src->nr_last)
			break;
		last = &src->last[old];
		/* Inode 1 is what the kernel lists for an entry it could not
		 * instantiate: no identity to go by (0 is a process the events
		 * named, which no event has said anything of since). A zombie
		 * may be reaped without an event: read, to see it go. */
		if (v[i].changed || last->st.pid != v[i].st.pid || last->ino != v[i].ino ||
		    v[i].ino == 1 || last->st.state == 'Z' || last->st.state == 'X' ||
		    (keep = src->keep(src->keep_data, last->st.pid, last->st.start_ticks)) ==
			NP_TASK_READ)
			continue;
		v[i].st = last->st;
		v[i].kept = v[i].valid = true;
		v[i].unchanged = keep == NP_TASK_KEEP_UNCHANGED;
	}
}

int np_task_source_scan(struct np_task_source *src, struct np_task_list *list)
{
	struct src_entry *v = NULL;
	unsigned nr = 0, kept = 0;
	uint64_t mono_ns = 0;
	int err;

	np_task_list_reset(list);
	list->nr_vanished = 0;
	list->nr_kept = 0;
	list->nr_unchanged = 0;
	list->ticks_per_s = src->ticks_per_s;
	err = uptime_read(src->ctx, &list->uptime_ms);
	if (!err) {
		mono_ns = monotonic_ns();
		err = list_tasks(src, list, &v, &nr);
	}
	if (err)
		return err;
	mark_kept(src, v, nr);
	err = src->live ? read_live(src, list, v, nr) : read_tree(src, list, v, nr);
	/* Left in pid order, without the tasks that could not be read. */
	for (unsigned i = 0; i < nr && !err; i++) {
		if (!v[i].valid)
			continue;
		err = add_task(src, list, &v[i].st);
		if (!err) {
			list->tasks[list->nr - 1].stat_kept = v[i].kept && !v[i].unchanged;
			list->tasks[list->nr - 1].stat_unchanged = v[i].unchanged;
			list->tasks[list->nr - 1].stat_identified = v[i].identified;
			list->nr_kept += v[i].kept && !v[i].unchanged;
			list->nr_unchanged += v[i].unchanged;
			v[kept++] = v[i];
		}
	}
	if (err) {
		list->nr = 0;
		list->nr_kept = 0;
		list->nr_unchanged = 0;
		src->must_list = true; /* the events it took are in no list */
		return err;
	}
	src->next = src->last;
	src->last = v;
	{
		unsigned cap = src->next_cap;

		src->next_cap = src->last_cap;
		src->last_cap = cap;
	}
	src->nr_last = kept;
	src->listed = true;
	src->last_scan_ms = list->uptime_ms;
	src->last_scan_mono_ns = mono_ns;
	return 0;
}

/* A scan is owed (@why, for process @pid): true, said in @owed if asked. */
static bool owe(struct np_scan_owed *owed, const char *why, int pid)
{
	if (owed)
		*owed = (struct np_scan_owed){why, pid};
	return true;
}

bool np_task_source_owes_scan(struct np_task_source *src, uint64_t since_scan_ms,
			      struct np_scan_owed *owed)
{
	uint64_t now;

	if (!src->events)
		return owe(owed, "no process events", 0);
	if (!src->listed || src->must_list)
		return owe(owed, "a listing of /proc", 0);
	/* More waiting than one drain takes: a scan would list /proc. */
	if (drain_events(src, false) == 1 || src->must_list)
		return owe(owed, "events lost or left waiting", 0);
	now = src->last_scan_ms + since_scan_ms;
	if (now - src->listed_at_ms >= src->resync_ms)
		return owe(owed, "the periodic listing of /proc", 0);
	for (unsigned c = 0; c < src->nr_changed; c++) {
		if (listed_last(src, src->changed[c].pid))
			return owe(owed, "a process changed", src->changed[c].pid);
		if (waited(src, &src->changed[c], now))
			return owe(owed, "a new process's first read", src->changed[c].pid);
	}
	for (unsigned p = 0; p < src->nr_pending; p++)
		if (waited(src, &src->pending[p], now))
			return owe(owed, "a new process's first read", src->pending[p].pid);
	return false;
}

/* ---- node load ---- */

static int cpu_ticks_libproc2(struct np_task_source *src, struct np_cpu_ticks **out, unsigned *nr)
{
	enum stat_item items[] = {
	    STAT_TIC_ID,     STAT_TIC_USER, STAT_TIC_NICE,    STAT_TIC_SYSTEM, STAT_TIC_IDLE,
	    STAT_TIC_IOWAIT, STAT_TIC_IRQ,  STAT_TIC_SOFTIRQ, STAT_TIC_STOLEN,
	};
	struct stat_reaped *reaped;
	struct np_cpu_ticks *cpus;

	errno = 0;
	reaped = procps_stat_reap(src->stat, STAT_REAP_CPUS_ONLY, items,
				  (int)(sizeof(items) / sizeof(items[0])));
	if (!reaped) {
		int err = errno ? -errno : -EIO;

		np_log(src->ctx, LOG_ERR, "libproc2: cannot read /proc/stat: %s", strerror(-err));
		return err;
	}
	cpus = calloc((size_t)reaped->cpus->total + 1, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (int i = 0; i < reaped->cpus->total; i++) {
		struct stat_stack *s = reaped->cpus->stacks[i];
#define TIC(n) ((uint64_t)STAT_VAL(n, ull_int, s, src->stat))
		cpus[i].cpu = STAT_VAL(0, s_int, s, src->stat);
		cpus[i].busy = TIC(1) + TIC(2) + TIC(3) + TIC(6) + TIC(7) + TIC(8);
		cpus[i].total = cpus[i].busy + TIC(4) + TIC(5);
#undef TIC
	}
	*out = cpus;
	*nr = (unsigned)reaped->cpus->total;
	return 0;
}

static int cpu_ticks_tree(struct np_task_source *src, struct np_cpu_ticks **out, unsigned *nr)
{
	char *buf;
	size_t len;
	unsigned bad_line;
	int err = np_ctx_read_file(src->ctx, "proc/stat", 16u << 20, &buf, &len);

	if (err) {
		np_log(src->ctx, LOG_ERR, "%s/proc/stat: %s", root_prefix(src->ctx),
		       strerror(-err));
		return err;
	}
	err = np_cpu_ticks_parse(buf, len, out, nr, &bad_line);
	if (err == -EINVAL) {
		int line_len;
		const char *line = np_nth_line(buf, len, bad_line, &line_len);

		np_log(src->ctx, LOG_ERR, "%s/proc/stat:%u: bad CPU line: \"%.*s\"",
		       root_prefix(src->ctx), bad_line, line_len, line);
	}
	free(buf);
	return err;
}

/*
 * Per-CPU counters summed by our own topology rather than libproc2's
 * STAT_REAP_NUMA_NODES_TOO: that one maps CPUs to nodes through libnuma,
 * loaded at run time, and numbers its results by node id, while the policy
 * needs the nodes exactly as np_topology_read saw them; and the fixture
 * source has to do the summing itself anyway. Deltas are taken per CPU, so
 * a CPU going offline or coming back does not distort its node.
 */
int np_task_source_node_load(struct np_task_source *src, const struct np_topology *topo,
			     double *busy)
{
	struct np_cpu_ticks *cpus = NULL;
	uint64_t *busy_ticks, *total_ticks;
	unsigned nr = 0, max_cpu = 0;
	int err;

	err = src->stat ? cpu_ticks_libproc2(src, &cpus, &nr) : cpu_ticks_tree(src, &cpus, &nr);
	if (err)
		return err;
	busy_ticks = calloc(topo->nr_nodes + 1, sizeof(*busy_ticks));
	total_ticks = calloc(topo->nr_nodes + 1, sizeof(*total_ticks));
	for (unsigned i = 0; i < nr; i++)
		if ((unsigned)cpus[i].cpu > max_cpu)
			max_cpu = (unsigned)cpus[i].cpu;
	if (max_cpu >= src->nr_prev_cpus) {
		struct np_cpu_ticks *bigger =
		    realloc(src->prev_cpus, (max_cpu + 1) * sizeof(*bigger));

		if (bigger) {
			memset(bigger + src->nr_prev_cpus, 0,
			       (max_cpu + 1 - src->nr_prev_cpus) * sizeof(*bigger));
			src->prev_cpus = bigger;
			src->nr_prev_cpus = max_cpu + 1;
		}
	}
	if (!busy_ticks || !total_ticks || max_cpu >= src->nr_prev_cpus) {
		err = -ENOMEM;
		goto out;
	}
	np_bitmap_zero(&src->cpus_seen);
	for (unsigned i = 0; i < nr; i++) {
		struct np_cpu_ticks *prev = &src->prev_cpus[cpus[i].cpu];
		int idx = np_topology_index(topo, np_topology_cpu_node(topo, cpus[i].cpu));

		if ((unsigned)cpus[i].cpu < NP_MAX_CPUS)
			np_bitmap_set(&src->cpus_seen, (unsigned)cpus[i].cpu);

		/* Counters never go back; if they seem to, skip one round. */
		if (idx >= 0 && cpus[i].busy >= prev->busy && cpus[i].total >= prev->total) {
			busy_ticks[idx] += cpus[i].busy - prev->busy;
			total_ticks[idx] += cpus[i].total - prev->total;
		}
		*prev = cpus[i];
	}
	for (unsigned n = 0; n < topo->nr_nodes; n++) {
		busy[n] = total_ticks[n] ? (double)busy_ticks[n] / (double)total_ticks[n] : 0.0;
		if (busy[n] > 1.0)
			busy[n] = 1.0;
	}
out:
	free(busy_ticks);
	free(total_ticks);
	free(cpus);
	return err;
}

const struct np_bitmap *np_task_source_cpus_seen(const struct np_task_source *src)
{
	return &src->cpus_seen;
}
