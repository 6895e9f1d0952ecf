/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What reading a process's figures costs, for the two readers of the task
 * source (lib/task.c): libproc2's select by pid, with the source's items,
 * and one read of /proc/PID/stat parsed by np_stat_parse. Over every
 * process /proc lists now, ROUNDS rounds, each reader in turn: the CPU of
 * selects of them all (255 at a time, libproc2's most), of one select per
 * process, and of the task source's listing scan, which lists /proc and
 * reads each process as the daemon's first cycle does (our reads, each
 * checked against the inode listed); per process, median of the rounds. A
 * select does fixed work per call (mappings, /proc/uptime) and reads each
 * pid's status for its thread group: the daemon's cycles read one or two
 * processes at a time.
 *
 * Then what a look's details cost per thread, without and with each
 * thread's wait for a CPU (its schedstat, read where the daemon places
 * tasks: affinity = unpinned): this process with THREADS idle threads,
 * its details read READS times a round, each kind in turn.
 *
 *   bench-procread [ROUNDS]   (default 7)
 */
#include "context.h"
#include "task.h"

#include <dirent.h>
#include <libproc2/pids.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS 100000

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), compare_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned list_pids(unsigned *pids)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	unsigned n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < MAX_PIDS)
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			pids[n++] = (unsigned)strtoul(de->d_name, NULL, 10);
	closedir(dir);
	return n;
}

#define THREADS 63
#define READS 50

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_end = PTHREAD_COND_INITIALIZER;
static bool idle_over;

static void *idle_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&idle_lock);
	while (!idle_over)
		pthread_cond_wait(&idle_end, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
	return NULL;
}

/* CPU per thread of READS reads of @task's details, with or without the
 * threads' waits; -1 when a read failed. */
static double details_us(struct np_ctx *ctx, struct np_task *task, bool waits)
{
	double t = cpu_us();
	unsigned threads = 0;

	for (int i = 0; i < READS; i++) {
		np_task_clear(task);
		if (np_task_read_details_of(ctx, task, waits) || task->has_wait != waits)
			return -1;
		threads += task->nr_thread_samples;
	}
	return (cpu_us() - t) / (threads ? threads : 1);
}

/* What a look's details cost per thread, without and with the waits. */
static int bench_details(struct np_ctx *ctx, struct np_task_list *list, int rounds)
{
	pthread_t th[THREADS];
	double *plain = calloc((size_t)rounds, sizeof(*plain));
	double *waits = calloc((size_t)rounds, sizeof(*waits));
	struct np_task_source *src = NULL;
	struct np_task *self = NULL;
	unsigned started = 0, threads = 0;
	int err = 1;

	for (; started < THREADS; started++)
		if (pthread_create(&th[started], NULL, idle_main, NULL))
			break;
	if (!plain || !waits || np_task_source_new(ctx, &src) || np_task_source_scan(src, list))
		goto out;
	for (unsigned i = 0; i < list->nr; i++)
		if (list->tasks[i].pid == getpid())
			self = &list->tasks[i];
	if (!self)
		goto out;
	for (int r = 0; r < rounds; r++) {
		plain[r] = details_us(ctx, self, false);
		waits[r] = details_us(ctx, self, true);
		if (plain[r] < 0 || waits[r] < 0)
			goto out;
	}
	threads = self->nr_thread_samples;
	printf("a look's details, %u threads, %d reads a round, CPU per thread, median:\n", threads,
	       READS);
	printf("  without the waits:                 %8.2f us\n", median(plain, rounds));
	printf("  with each thread's schedstat:      %8.2f us\n", median(waits, rounds));
	err = 0;
out:
	if (err)
		fprintf(stderr, "bench-procread: reading this process's details failed\n");
	pthread_mutex_lock(&idle_lock);
	idle_over = true;
	pthread_cond_broadcast(&idle_end);
	pthread_mutex_unlock(&idle_lock);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	np_task_list_clear(list);
	np_task_source_free(src);
	free(plain);
	free(waits);
	return err;
}

/* libproc2's select of @n pids, at most 255 at a time: how many found, or
 * -1 when a select failed. */
static int select_all(struct pids_info *info, unsigned *pids, unsigned n)
{
	int found = 0;

	for (unsigned i = 0; i < n; i += 255) {
		unsigned k = n - i < 255 ? n - i : 255;
		struct pids_fetch *f = procps_pids_select(info, &pids[i], (int)k, PIDS_SELECT_PID);

		if (!f)
			return -1;
		found += f->counts->total;
	}
	return found;
}

int main(int argc, char **argv)
{
	/* The items the task source asks for (lib/task.c). */
	static enum pids_item items[] = {
	    PIDS_ID_PID,     PIDS_CMD,	PIDS_STATE,	PIDS_FLAGS, PIDS_TICS_ALL,
	    PIDS_TICS_BEGAN, PIDS_NLWP, PIDS_PROCESSOR, PIDS_RSS,   PIDS_ID_TGID,
	};
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	unsigned *pids = calloc(MAX_PIDS, sizeof(*pids));
	struct pids_info *info = NULL;
	struct np_ctx *ctx = NULL;
	struct np_task_source *src = NULL;
	struct np_task_list list = {0};
	double *all, *each, *own, t;
	int found_all = 0, found_each = 0;
	unsigned n, scanned = 0;

	all = calloc((size_t)rounds + 1, sizeof(*all));
	each = calloc((size_t)rounds + 1, sizeof(*each));
	own = calloc((size_t)rounds + 1, sizeof(*own));
	if (!pids || !all || !each || !own || rounds < 1) {
		fprintf(stderr, "usage: bench-procread [ROUNDS]\n");
		return 2;
	}
	t = cpu_us();
	if (procps_pids_new(&info, items, (int)(sizeof(items) / sizeof(items[0])))) {
		fprintf(stderr, "bench-procread: libproc2 cannot read /proc\n");
		return 1;
	}
	printf("procps_pids_new: %.0f us of CPU (once)\n", cpu_us() - t);
	/* The task source without a keep callback or events: every scan a
	 * listing that reads every process. */
	if (np_ctx_new("/", &ctx) || np_task_source_new(ctx, &src)) {
		fprintf(stderr, "bench-procread: cannot make a task source\n");
		return 1;
	}
	n = list_pids(pids);
	if (!n) {
		fprintf(stderr, "bench-procread: no process in /proc\n");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		t = cpu_us();
		found_all = select_all(info, pids, n);
		all[r] = (cpu_us() - t) / n;

		t = cpu_us();
		for (unsigned i = 0; i < n && found_each >= 0; i++) {
			int f = select_all(info, &pids[i], 1);

			found_each = i == 0 ? f : f < 0 ? -1 : found_each + f;
		}
		each[r] = (cpu_us() - t) / n;

		t = cpu_us();
		if (np_task_source_scan(src, &list)) {
			fprintf(stderr, "bench-procread: the task source's scan failed\n");
			return 1;
		}
		own[r] = (cpu_us() - t) / (list.nr ? list.nr : 1);
		scanned = list.nr;
		if (found_all < 0 || found_each < 0) {
			fprintf(stderr, "bench-procread: a libproc2 select failed\n");
			return 1;
		}
	}
	printf("%u processes, %d rounds, CPU per process, median:\n", n, rounds);
	printf("  libproc2, selects of all:          %8.1f us (%d found)\n", median(all, rounds),
	       found_all);
	printf("  libproc2, one select each:         %8.1f us (%d found)\n", median(each, rounds),
	       found_each);
	printf("  the task source's listing scan:    %8.1f us (%u read)\n", median(own, rounds),
	       scanned);
	np_task_list_clear(&list);
	np_task_source_free(src);
	if (bench_details(ctx, &list, rounds))
		return 1;
	np_ctx_free(ctx);
	procps_pids_unref(&info);
	free(pids);
	free(all);
	free(each);
	free(own);
	return 0;
}
