/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct np_filter {
	int *pids; /* sorted */
	size_t nr_pids;
	int self_pid; /* the daemon's own pid; 0: none */
	struct np_strv include_comm, exclude_comm;
	struct np_strv include_cgroup, exclude_cgroup;
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void strip_slashes(struct np_strv *paths)
{
	for (size_t i = 0; i < paths->n; i++)
		for (size_t n = strlen(paths->v[i]); n > 1 && paths->v[i][n - 1] == '/'; n--)
			paths->v[i][n - 1] = '\0';
}

void np_filter_free(struct np_filter *filter)
{
	if (!filter)
		return;
	free(filter->pids);
	np_strv_free(&filter->include_comm);
	np_strv_free(&filter->exclude_comm);
	np_strv_free(&filter->include_cgroup);
	np_strv_free(&filter->exclude_cgroup);
	free(filter);
}

int np_filter_new(const struct np_config *cfg, struct np_filter **out)
{
	struct np_filter *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	if (cfg->nr_exclude_pid) {
		f->pids = malloc(cfg->nr_exclude_pid * sizeof(*f->pids));
		if (!f->pids)
			goto nomem;
		memcpy(f->pids, cfg->exclude_pid, cfg->nr_exclude_pid * sizeof(*f->pids));
		f->nr_pids = cfg->nr_exclude_pid;
		qsort(f->pids, f->nr_pids, sizeof(*f->pids), cmp_int);
	}
	if (np_strv_copy(&f->include_comm, &cfg->include_comm) ||
	    np_strv_copy(&f->exclude_comm, &cfg->exclude_comm) ||
	    np_strv_copy(&f->include_cgroup, &cfg->include_cgroup) ||
	    np_strv_copy(&f->exclude_cgroup, &cfg->exclude_cgroup))
		goto nomem;
	/* "/a/b/" names "/a/b" (the config drops the '/' too). */
	strip_slashes(&f->include_cgroup);
	strip_slashes(&f->exclude_cgroup);
	*out = f;
	return 0;
nomem:
	np_filter_free(f);
	return -ENOMEM;
}

void np_filter_set_self(struct np_filter *filter, int pid)
{
	filter->self_pid = pid;
}

bool np_filter_needs_cgroup(const struct np_filter *filter)
{
	return filter->include_cgroup.n || filter->exclude_cgroup.n;
}

static const char *match_glob(const struct np_strv *globs, const char *s, int flags)
{
	for (size_t i = 0; i < globs->n; i++)
		if (fnmatch(globs->v[i], s, flags) == 0)
			return globs->v[i];
	return NULL;
}

/* Whether one of @globs matches @path or a cgroup above it: fnmatch(3)
 * with FNM_PATHNAME, so a wildcard stays within one path component, and a
 * pattern that matches a cgroup covers the cgroups below it ("/" covers
 * all). A pattern without wildcards is a plain path, as it always was. */
static const char *match_cgroup(const struct np_strv *globs, const char *path)
{
	size_t n = strlen(path);
	char small[512], *buf = n < sizeof(small) ? small : malloc(n + 1);
	const char *rule = NULL;

	if (!buf) /* no memory for the ancestors: the cgroup itself only */
		return match_glob(globs, path, FNM_PATHNAME);
	memcpy(buf, path, n + 1);
	for (;;) {
		rule = match_glob(globs, buf, FNM_PATHNAME);
		if (rule || n <= 1)
			break;
		while (n > 1 && buf[n - 1] != '/')
			n--;
		if (n > 1)
			n--;
		buf[n] = '\0';
	}
	if (buf != small)
		free(buf);
	return rule;
}

#define SAY(...) (why ? (void)snprintf(why, len, __VA_ARGS__) : (void)0)

bool np_filter_excludes(const struct np_filter *filter, const struct np_task *task, char *why,
			size_t len)
{
	const char *rule;

	if (filter->self_pid && task->pid == filter->self_pid) {
		SAY("pid %d is this daemon", task->pid);
		return true;
	}
	if (filter->nr_pids &&
	    bsearch(&task->pid, filter->pids, filter->nr_pids, sizeof(int), cmp_int)) {
		SAY("pid %d is in exclude_pid", task->pid);
		return true;
	}
	if ((rule = match_glob(&filter->exclude_comm, task->comm, 0))) {
		SAY("comm \"%s\" matches exclude_comm \"%s\"", task->comm, rule);
		return true;
	}
	if (filter->include_comm.n && !match_glob(&filter->include_comm, task->comm, 0)) {
		SAY("comm \"%s\" matches no include_comm pattern", task->comm);
		return true;
	}
	if (!task->has_details || !np_filter_needs_cgroup(filter))
		return false;
	if (task->cgroup && (rule = match_cgroup(&filter->exclude_cgroup, task->cgroup))) {
		SAY("cgroup %s is under exclude_cgroup %s", task->cgroup, rule);
		return true;
	}
	if (filter->include_cgroup.n &&
	    (!task->cgroup || !match_cgroup(&filter->include_cgroup, task->cgroup))) {
		SAY("cgroup %s is under no include_cgroup",
		    task->cgroup ? task->cgroup : "(unknown)");
		return true;
	}
	return false;
}
