/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How fast pages move between two nodes, and how long the target is held up
 * per call, by the ways numaplaced could move them:
 *   (a) one move_pages call for every page,
 *   (b) the actuator's path (one numa_maps read, lookups, batches of 20-80 ms),
 *   (c) one migrate_pages call for the whole process,
 * plus raw move_pages batches of fixed sizes for reference, and batches of
 * 512 pages of an idle child's memory moved by 1, 2 and 4 threads sharing
 * them (what parallel movers in the daemon would gain), and (b2) and (b4),
 * the actuator's path with two movers (migrate_threads = 2, the default)
 * and with four. (b), (b2), (b4) and the threads move an idle child's
 * memory, as the daemon moves another
 * process's; the others move their own. Each run maps
 * fresh memory, faults it in on node A and moves it to node B, each run
 * starting with another method; medians are printed with ratios to (a).
 *
 *   bench-migrate [PAGES [NODE_A NODE_B [RUNS]]]   (100000 pages, 0 -> 1, 3 runs)
 *
 * Meant for a multi-node machine or guest; with fewer than two nodes with
 * memory it says so and exits 0.
 */
#include "actuate.h"
#include "memory.h"
#include "task.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 15
#define PAGE 4096ul

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* Fresh memory, every page faulted in on @node; the VMA keeps the default
 * policy (the actuator leaves user-bound memory alone). */
static char *map_on_node(unsigned long pages, int node)
{
	unsigned long mask = 1ul << node;
	char *mem =
	    mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return NULL;
	madvise(mem, pages * PAGE, MADV_NOHUGEPAGE);
	if (set_mempolicy(MPOL_BIND, &mask, sizeof(mask) * 8) < 0) {
		perror("set_mempolicy");
		munmap(mem, pages * PAGE);
		return NULL;
	}
	for (unsigned long i = 0; i < pages; i++)
		mem[i * PAGE] = (char)i;
	set_mempolicy(MPOL_DEFAULT, NULL, 0);
	return mem;
}

/* Pages of @mem (in process @pid, 0: this one) on @node, sampled by one
 * lookup of all of them. */
static unsigned long pages_of_on(int pid, char *mem, unsigned long pages, int node)
{
	void **addr = malloc(pages * sizeof(*addr));
	int *status = malloc(pages * sizeof(*status));
	unsigned long n = 0;

	if (!addr || !status) {
		free(addr);
		free(status);
		return 0;
	}
	for (unsigned long i = 0; i < pages; i++)
		addr[i] = mem + i * PAGE;
	if (move_pages(pid, pages, addr, NULL, status, 0) == 0)
		for (unsigned long i = 0; i < pages; i++)
			n += status[i] == node;
	free(addr);
	free(status);
	return n;
}

/* Raw move_pages of @mem to @node in batches of @batch; the longest call in
 * *max_call_ms. */
static double raw_batches(char *mem, unsigned long pages, int node, unsigned long batch,
			  double *max_call_ms)
{
	void **addr = malloc(batch * sizeof(*addr));
	int *nodes = malloc(batch * sizeof(*nodes)), *status = malloc(batch * sizeof(*status));
	double t0 = now_ms();

	*max_call_ms = 0;
	for (unsigned long done = 0; addr && nodes && status && done < pages; done += batch) {
		unsigned long n = pages - done < batch ? pages - done : batch;
		double c0, c;

		for (unsigned long i = 0; i < n; i++) {
			addr[i] = mem + (done + i) * PAGE;
			nodes[i] = node;
		}
		c0 = now_ms();
		if (move_pages(0, n, addr, nodes, status, MPOL_MF_MOVE) < 0)
			perror("move_pages");
		c = now_ms() - c0;
		if (c > *max_call_ms)
			*max_call_ms = c;
	}
	t0 = now_ms() - t0;
	free(addr);
	free(nodes);
	free(status);
	return t0;
}

/* Raw move_pages in batches of @batch shared by @nr threads, each taking
 * the next batch not yet taken: what parallel movers would gain. The
 * memory is another process's, as the daemon's is: movers of their own
 * memory would be in the mm whose TLBs each move flushes. */
struct parallel {
	int pid;
	char *mem;
	unsigned long pages, batch;
	int node;
	atomic_ulong next;
	double max_call_ms[8];
};

struct parallel_worker {
	struct parallel *p;
	unsigned idx;
};

static int parallel_worker(void *arg)
{
	struct parallel_worker *w = arg;
	struct parallel *p = w->p;
	void **addr = malloc(p->batch * sizeof(*addr));
	int *nodes = malloc(p->batch * sizeof(*nodes)), *status = malloc(p->batch * sizeof(*status));

	for (;;) {
		unsigned long done = atomic_fetch_add(&p->next, p->batch), n;
		double c0, c;

		if (done >= p->pages || !addr || !nodes || !status)
			break;
		n = p->pages - done < p->batch ? p->pages - done : p->batch;
		for (unsigned long i = 0; i < n; i++) {
			addr[i] = p->mem + (done + i) * PAGE;
			nodes[i] = p->node;
		}
		c0 = now_ms();
		if (move_pages(p->pid, n, addr, nodes, status, MPOL_MF_MOVE) < 0)
			perror("move_pages");
		c = now_ms() - c0;
		if (c > p->max_call_ms[w->idx])
			p->max_call_ms[w->idx] = c;
	}
	free(addr);
	free(nodes);
	free(status);
	return 0;
}

static double parallel_batches(int pid, char *mem, unsigned long pages, int node,
			       unsigned long batch, unsigned nr, double *max_call_ms)
{
	struct parallel p = {.pid = pid, .mem = mem, .pages = pages, .batch = batch, .node = node};
	struct parallel_worker w[8];
	thrd_t t[8];
	double t0 = now_ms();

	atomic_init(&p.next, 0);
	for (unsigned i = 0; i < nr; i++) {
		w[i] = (struct parallel_worker){.p = &p, .idx = i};
		if (thrd_create(&t[i], parallel_worker, &w[i]) != thrd_success)
			return -1;
	}
	for (unsigned i = 0; i < nr; i++)
		thrd_join(t[i], NULL);
	t0 = now_ms() - t0;
	*max_call_ms = 0;
	for (unsigned i = 0; i < nr; i++)
		if (p.max_call_ms[i] > *max_call_ms)
			*max_call_ms = p.max_call_ms[i];
	return t0;
}

/* A child holding @pages on @node_a, idle until *@hold is closed; its pid,
 * and the memory's address (the same in both: it is mapped after the
 * fork) in *@mem. */
static int child_holding(unsigned long pages, int node_a, char **mem, int *hold)
{
	int ready[2], stay[2];
	pid_t pid;

	if (pipe(ready) || pipe(stay))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *m = map_on_node(pages, node_a), c;

		close(ready[0]);
		close(stay[1]);
		if (write(ready[1], &m, sizeof(m)) != sizeof(m))
			_exit(1);
		_exit(read(stay[0], &c, 1) < 0);
	}
	close(ready[1]);
	close(stay[0]);
	if (pid < 0 || read(ready[0], mem, sizeof(*mem)) != sizeof(*mem) || !*mem) {
		close(ready[0]);
		close(stay[1]);
		return -1;
	}
	close(ready[0]);
	*hold = stay[1];
	return pid;
}

/* The actuator's calls, timed; lookups (no target nodes) apart. */
static double longest_call_ms, longest_lookup_ms, call_ms, lookup_ms;
static mtx_t timing_lock; /* the movers' calls end on several threads */

/* Each move call of the actuator's path: how long it took, its size, and
 * its thread's CPU over it. The CPU leaves out only the sleeps (an RCU
 * grace period, a lock): a wait for other CPUs' TLB flushes spins, and a
 * vCPU the host descheduled is not seen by the guest. A call planned too
 * big shows in its size against the others'. */
#define CALLS_MAX 8192
struct call_time {
	unsigned pages;
	double ms, cpu_ms;
};
static struct call_time calls[CALLS_MAX];
static unsigned nr_calls, nr_calls_lost;

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long timed_move_pages(void *data, int pid, unsigned long count, void **pages,
			     const int *nodes, int *status)
{
	double c0 = thread_cpu_ms(), t0 = now_ms();
	long r = np_actuator_sys_kernel()->move_pages(NULL, pid, count, pages, nodes, status);
	double t = now_ms() - t0, cpu = thread_cpu_ms() - c0;
	double *longest = nodes ? &longest_call_ms : &longest_lookup_ms;

	mtx_lock(&timing_lock);
	*(nodes ? &call_ms : &lookup_ms) += t;
	if (t > *longest)
		*longest = t;
	if (nodes && nr_calls < CALLS_MAX)
		calls[nr_calls++] = (struct call_time){(unsigned)count, t, cpu};
	else if (nodes)
		nr_calls_lost++;
	mtx_unlock(&timing_lock);
	return r;
}

/* The calls' times and sizes: medians, the 90th percentile, and the
 * longest call's size and own CPU. */
static void print_calls(void)
{
	static double ms[CALLS_MAX], sizes[CALLS_MAX];
	unsigned longest = 0, over = 0;

	if (!nr_calls)
		return;
	for (unsigned i = 0; i < nr_calls; i++) {
		ms[i] = calls[i].ms;
		sizes[i] = calls[i].pages;
		if (calls[i].ms > calls[longest].ms)
			longest = i;
		over += calls[i].ms > 25.0;
	}
	qsort(ms, nr_calls, sizeof(*ms), cmp_double);
	qsort(sizes, nr_calls, sizeof(*sizes), cmp_double);
	printf("      calls: ms median %.1f, 90th %.1f, over 25 ms %u of %u; pages median %.0f, "
	       "largest %.0f; the longest %.1f ms: %u pages, %.1f ms of its thread's CPU\n",
	       ms[nr_calls / 2], ms[nr_calls * 9 / 10], over, nr_calls, sizes[nr_calls / 2],
	       sizes[nr_calls - 1], calls[longest].ms, calls[longest].pages,
	       calls[longest].cpu_ms);
	if (nr_calls_lost)
		printf("      (%u more calls not recorded)\n", nr_calls_lost);
	printf("      the calls ended before it (pages/ms):");
	for (unsigned i = longest > 8 ? longest - 8 : 0; i < longest; i++)
		printf(" %u/%.1f", calls[i].pages, calls[i].ms);
	printf("\n");
}

static long timed_migrate_pages(void *data, int pid, const struct np_nodeset *from,
				const struct np_nodeset *to)
{
	double t0 = now_ms();
	long r = np_actuator_sys_kernel()->migrate_pages(NULL, pid, from, to);
	double t = now_ms() - t0;

	if (t > longest_call_ms)
		longest_call_ms = t;
	return r;
}

static int pass_get_affinity(void *data, int tid, struct np_bitmap *cpus)
{
	return np_actuator_sys_kernel()->get_affinity(NULL, tid, cpus);
}

static int pass_set_affinity(void *data, int tid, const struct np_bitmap *cpus)
{
	return np_actuator_sys_kernel()->set_affinity(NULL, tid, cpus);
}

static const struct np_actuator_sys timed_sys = {
    .move_pages = timed_move_pages,
    .migrate_pages = timed_migrate_pages,
    .get_affinity = pass_get_affinity,
    .set_affinity = pass_set_affinity,
};

/* Process @pid (0: this one) as the actuator takes it. */
static int task_of(struct np_ctx *ctx, int pid, struct np_task *task)
{
	char *buf, path[32];
	size_t len;
	struct np_stat st;
	int err;

	if (pid)
		snprintf(path, sizeof(path), "proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "proc/self/stat");
	err = np_ctx_read_file(ctx, path, 4096, &buf, &len);

	if (err)
		return err;
	err = np_stat_parse(buf, len, &st);
	free(buf);
	if (err)
		return err;
	memset(task, 0, sizeof(*task));
	task->pid = st.pid;
	task->start_ticks = st.start_ticks;
	return 0;
}

struct method {
	const char *name;
	double ms[MAX_RUNS], max_call_ms[MAX_RUNS];
	unsigned long moved;
};

int main(int argc, char **argv)
{
	unsigned long pages = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int node_a = argc > 3 ? atoi(argv[2]) : 0, node_b = argc > 3 ? atoi(argv[3]) : 1;
	int runs = argc > 4 ? atoi(argv[4]) : 3;
	struct method m[] = {{.name = "(a) one move_pages call"},
			     {.name = "(b) numaplaced batched path"},
			     {.name = "(c) migrate_pages, whole process"},
			     {.name = "    raw move_pages, batches of 512"},
			     {.name = "    raw move_pages, batches of 4096"},
			     {.name = "    other process, 512s, 1 thread"},
			     {.name = "    other process, 512s, 2 threads"},
			     {.name = "    other process, 512s, 4 threads"},
			     {.name = "(b2) numaplaced path, 2 movers"},
			     {.name = "(b4) numaplaced path, 4 movers"}};
	const unsigned nr_methods = sizeof(m) / sizeof(m[0]);
	struct np_ctx *ctx;
	struct np_task self;
	double base;

	if (numa_available() < 0 || numa_num_configured_nodes() < 2) {
		printf("bench-migrate: fewer than two NUMA nodes here; nothing to measure "
		       "(skipped)\n");
		return 0;
	}
	if (!pages || runs < 1 || runs > MAX_RUNS || node_a == node_b || node_a < 0 || node_b < 0 ||
	    node_a > numa_max_node() || node_b > numa_max_node() || node_a >= 64 || node_b >= 64) {
		fprintf(stderr, "usage: %s [PAGES [NODE_A NODE_B [RUNS<=%d]]]\n", argv[0],
			MAX_RUNS);
		return 2;
	}
	mtx_init(&timing_lock, mtx_plain);
	if (np_ctx_new("/", &ctx) || task_of(ctx, 0, &self)) {
		fprintf(stderr, "bench-migrate: cannot read /proc/self/stat\n");
		return 1;
	}
	printf("moving %lu pages (%.0f MiB) node %d -> %d, %d runs, median ms\n", pages,
	       (double)pages * PAGE / (1 << 20), node_a, node_b, runs);

	for (int run = 0; run < runs; run++) {
		/* Each run starts with another method, so none always follows
		 * the same one (whose freed memory it would reuse). */
		for (unsigned j = 0; j < nr_methods; j++) {
			unsigned k = (j + (unsigned)run) % nr_methods;
			char *mem;
			unsigned long on_a;
			double t0;
			int child = 0, hold = -1;

			/* (b), (b2), (b4) and the threads move another process's
			 * memory, as the daemon does; the others their own. */
			if (k == 1 || k >= 5) {
				child = child_holding(pages, node_a, &mem, &hold);
				if (child < 0)
					mem = NULL;
			} else {
				mem = map_on_node(pages, node_a);
			}
			if (!mem) {
				fprintf(stderr, "bench-migrate: cannot map %lu pages\n", pages);
				return 1;
			}
			on_a = pages_of_on(child, mem, pages, node_a);
			if (on_a < pages * 9 / 10)
				fprintf(stderr, "note: only %lu of %lu pages landed on node %d\n",
					on_a, pages, node_a);
			t0 = now_ms();
			if (k == 0) {
				m[k].ms[run] =
				    raw_batches(mem, pages, node_b, pages, &m[k].max_call_ms[run]);
			} else if (k == 1 || k >= 8) {
				struct np_actuator_params params;
				struct np_actuator *act;
				struct np_stats *stats;
				struct np_move_result res;
				struct np_memory_reader *reader;
				struct np_task_memory tm;
				struct np_act_task at;
				uint64_t bytes_read = 0;
				struct np_task target;
				double read_ms;
				int err;

				np_actuator_params_init(&params);
				params.migrate_rate_mb_s = 0;
				params.allow_migrate_pages = false;
				params.sys = &timed_sys;
				params.movers = k == 9 ? 4 : k == 8 ? 2 : 1;
				longest_call_ms = longest_lookup_ms = call_ms = lookup_ms = 0;
				nr_calls = nr_calls_lost = 0;
				if (np_stats_new(NULL, &stats) ||
				    np_actuator_new_real(ctx, stats, &params, &act) ||
				    np_memory_reader_new(&reader)) {
					fprintf(stderr, "bench-migrate: no actuator\n");
					return 1;
				}
				np_act_task_init(&at);
				/* The daemon's path: one read of numa_maps, then
				 * the move acting on it; both are timed. */
				t0 = now_ms();
				{
					char dir[NP_TASK_DIR_MAX];
					int dirfd = task_of(ctx, child, &target) < 0
							? -ESRCH
							: np_task_dir_open(ctx, &target, dir);

					err = dirfd < 0 ? dirfd
							: np_memory_read(reader, ctx, dirfd, dir,
									 &tm, &bytes_read);
					if (dirfd >= 0)
						close(dirfd);
				}
				read_ms = now_ms() - t0;
				if (err) {
					fprintf(stderr, "bench-migrate: numa_maps: %s\n",
						strerror(-err));
					return 1;
				}
				err = np_actuator_move_pages(act, &at, &target, &tm, node_b, 0, &res);
				m[k].ms[run] = now_ms() - t0;
				np_task_memory_clear(&tm);
				np_memory_reader_free(reader);
				np_act_task_release(&at);
				m[k].max_call_ms[run] = longest_call_ms > longest_lookup_ms
							    ? longest_call_ms
							    : longest_lookup_ms;
				if (err)
					fprintf(stderr, "actuator: %s\n", strerror(-err));
				printf("    %s looked up %lu pages, moved %lu in %u calls, "
				       "%lu left with errors; longest lookup %.1f ms, "
				       "longest move %.1f ms; numa_maps %.1f ms, lookups %.1f ms, "
				       "moves %.1f ms, the rest %.1f ms\n",
				       k == 9 ? "(b4)" : k == 8 ? "(b2)" : "(b)",
				       (unsigned long)res.pages_queried,
				       (unsigned long)res.pages_moved, res.calls,
				       (unsigned long)res.pages_failed, longest_lookup_ms,
				       longest_call_ms, read_ms, lookup_ms, call_ms,
				       m[k].ms[run] - read_ms - lookup_ms - call_ms);
				print_calls();
				np_actuator_free(act);
				np_stats_free(stats);
			} else if (k == 2) {
				struct bitmask *from = numa_allocate_nodemask();
				struct bitmask *to = numa_allocate_nodemask();

				numa_bitmask_setbit(from, (unsigned)node_a);
				numa_bitmask_setbit(to, (unsigned)node_b);
				if (numa_migrate_pages(0, from, to) < 0)
					perror("migrate_pages");
				m[k].ms[run] = now_ms() - t0;
				m[k].max_call_ms[run] = m[k].ms[run];
				numa_bitmask_free(from);
				numa_bitmask_free(to);
			} else if (k <= 4) {
				m[k].ms[run] = raw_batches(mem, pages, node_b, k == 3 ? 512 : 4096,
							   &m[k].max_call_ms[run]);
			} else {
				m[k].ms[run] = parallel_batches(child, mem, pages, node_b, 512,
								k == 5 ? 1 : k == 6 ? 2 : 4,
								&m[k].max_call_ms[run]);
			}
			m[k].moved = pages_of_on(child, mem, pages, node_b);
			if (child > 0) {
				close(hold);
				waitpid(child, NULL, 0);
			} else {
				munmap(mem, pages * PAGE);
			}
		}
	}
	base = median(m[0].ms, runs);
	printf("%-38s %10s %8s %14s %10s\n", "method", "total ms", "ratio", "longest call",
	       "on node B");
	for (unsigned k = 0; k < nr_methods; k++) {
		double t = median(m[k].ms, runs);

		printf("%-38s %10.1f %8.2f %11.1f ms %10lu\n", m[k].name, t,
		       base > 0 ? t / base : 0, median(m[k].max_call_ms, runs), m[k].moved);
	}
	np_ctx_free(ctx);
	return 0;
}
