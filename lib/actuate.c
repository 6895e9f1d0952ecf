/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "actuate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <numa.h>
#include <numaif.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "memory.h"
#include "pace.h"
#include "pageplan.h"

/*
 * Batch sizes, from a 2-node QEMU guest (TCG) moving 100,000 4 KiB pages from
 * node 0 to node 1:
 *   one move_pages call for all pages     2.8 s  (and the task stalls for all of it)
 *   move_pages, batches of 1 page         7.3 s  (syscall and page-table walk per page)
 *   move_pages, batches of 512..4096      2.6..2.7 s
 *   migrate_pages, whole task             2.5 s
 * and on a busier host (tests/bench/bench-migrate, medians of 3, ms total /
 * longest single call):
 *   one move_pages call                   13962 / 13961
 *   this file's path (413 calls)           9958 /   178
 *   migrate_pages, whole process          12284 / 12284
 *   move_pages, batches of 512            11923 /   254
 *   move_pages, batches of 4096           10222 /   828
 * Batches of a few hundred pages lose nothing against one big call, and each
 * call holds the target's mmap lock only briefly: a long migrate_pages has
 * blocked its target for minutes on big machines. At 26 us a page in that
 * guest a 20 ms call is ~770 pages; real hardware moves a page in 1-3 us, so
 * the size adapts to the measured call time from a start of 512
 * (np_call_model_batch); several movers' calls overlap one's fixed cost
 * with the others' copying (struct mover_pool).
 *
 * Looking pages up costs a page-table walk per page of the range: where
 * numa_maps shows every page of a range present and on one node, there is
 * nothing to look up, and the range is moved as it stands.
 *
 * migrate_pages was 4-8% faster in the first series and 23% slower in the
 * second; it cannot be stopped part way, and run with CAP_SYS_NICE it also
 * moves pages shared with other tasks (libc). It is used only when the whole
 * misplaced set fits in one call of the target length at the measured speed:
 * then it saves the page lookups.
 */
#define DEFAULT_BATCH_PAGES 512
/* The block of a transparent huge page on x86-64 (a PMD's reach). A block
 * of another size only makes the calls end at other places. */
#define HUGE_BLOCK_BYTES ((uintptr_t)2 << 20)
#define DEFAULT_BATCH_TARGET_MS 20
/* Pages looked up per status query, at most: a page-table walk without
 * migration is one to two orders cheaper per page than a move, but in a slow
 * guest 16384 lookups still took 140 ms, so their count adapts to the same
 * call time as the moves, from a start of 4096. */
#define QUERY_PAGES NP_BATCH_PAGES_MAX
#define FIRST_QUERY_PAGES 4096
#define DEFAULT_BACKOFF_MIN_MS 1000
#define DEFAULT_BACKOFF_MAX_MS 300000
#define MAPS_MAX (256u << 20)
#define STAT_MAX 4096
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
#define MIB (1024ull * 1024)

/* ---- The kernel's calls ---- */

static long kernel_move_pages(void *data, int pid, unsigned long count, void **pages,
			      const int *nodes, int *status)
{
	/* MPOL_MF_MOVE: pages shared with other tasks stay where they are; one
	 * task's placement should not drag its neighbours' libc along. */
	long r = numa_move_pages(pid, count, pages, nodes, status, MPOL_MF_MOVE);

	return r < 0 ? -errno : r;
}

static struct bitmask *to_nodemask(const struct np_nodeset *set)
{
	struct bitmask *mask = numa_allocate_nodemask();

	if (!mask)
		return NULL;
	np_nodeset_for_each(node, set)
	{
		if ((unsigned)node < mask->size)
			numa_bitmask_setbit(mask, (unsigned)node);
	}
	return mask;
}

static long kernel_migrate_pages(void *data, int pid, const struct np_nodeset *from,
				 const struct np_nodeset *to)
{
	struct bitmask *f = to_nodemask(from), *t = to_nodemask(to);
	long r = -ENOMEM;

	if (f && t) {
		r = numa_migrate_pages(pid, f, t);
		if (r < 0)
			r = -errno;
	}
	if (f)
		numa_bitmask_free(f);
	if (t)
		numa_bitmask_free(t);
	return r;
}

/* The raw calls, with a mask of unsigned longs as the kernel takes it: the
 * full NP_MAX_CPUS bits, whatever cpu_set_t's size in the C library. */
#define LONG_BITS (8 * sizeof(unsigned long))
#define MASK_LONGS (NP_MAX_CPUS / LONG_BITS)

static int kernel_get_affinity(void *data, int tid, struct np_bitmap *cpus)
{
	unsigned long mask[MASK_LONGS] = {0};
	long r = syscall(SYS_sched_getaffinity, tid, sizeof(mask), mask);

	if (r < 0)
		return -errno;
	np_bitmap_zero(cpus);
	/* The kernel fills @r bytes; the rest stays zero. */
	for (unsigned cpu = 0; cpu < NP_MAX_CPUS; cpu++)
		if (mask[cpu / LONG_BITS] >> (cpu % LONG_BITS) & 1)
			np_bitmap_set(cpus, cpu);
	return 0;
}

static int kernel_set_affinity(void *data, int tid, const struct np_bitmap *cpus)
{
	unsigned long mask[MASK_LONGS] = {0};

	np_bitmap_for_each(cpu, cpus)
	{
		mask[(unsigned)cpu / LONG_BITS] |= 1ul << ((unsigned)cpu % LONG_BITS);
	}
	return syscall(SYS_sched_setaffinity, tid, sizeof(mask), mask) < 0 ? -errno : 0;
}

static const struct np_actuator_sys kernel_sys = {
    .move_pages = kernel_move_pages,
    .migrate_pages = kernel_migrate_pages,
    .get_affinity = kernel_get_affinity,
    .set_affinity = kernel_set_affinity,
};

const struct np_actuator_sys *np_actuator_sys_kernel(void)
{
	return &kernel_sys;
}

static uint64_t monotonic_ns(void *data)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* ---- Affinity narrowing ---- */

enum np_narrow np_affinity_narrow(const struct np_bitmap *current,
				  const struct np_bitmap *node_cpus, struct np_bitmap *out)
{
	np_bitmap_and(out, current, node_cpus);
	if (np_bitmap_empty(out))
		return NP_NARROW_EMPTY;
	return np_bitmap_equal(out, current) ? NP_NARROW_UNCHANGED : NP_NARROW_CHANGED;
}

/* ---- The actuator ---- */

/* The call sizes a move adapts to the measured call time. */
struct move_model {
	unsigned batch_pages; /* pages a move call */
	unsigned query_pages; /* pages a lookup */
	uint64_t ns_per_page; /* measured move cost; 0 until a move was timed */
	struct np_call_model calls;
};

/* What one move works with while its calls run: its scratch and model,
 * touched by no other move. Mover 0 (the moving thread, or the first
 * helper) has status and nodes; each other one a pair of its own. */
struct lane {
	void **pages; /* QUERY_PAGES each: scratch for one lookup */
	int *status;
	int *nodes;
	int *mover_status[NP_MOVERS_MAX];
	int *mover_nodes[NP_MOVERS_MAX];
	struct move_model model;
	struct move_job *job; /* the move on it; NULL: free */
};

struct np_actuator {
	struct np_ctx *ctx;
	struct np_stats *stats;
	bool dry;
	const struct np_actuator_sys *sys;
	bool (*should_stop)(void *data);
	void *stop_data;
	np_clock_fn clock;
	void *clock_data;
	uint64_t batch_target_ns, backoff_min_ns, backoff_max_ns;
	bool allow_migrate_pages;
	/* What the moves learnt, handed to each move at its start and taken
	 * back at its end (by the caller's thread, both). */
	struct move_model model;
	/* Taken by the calls of the moves in flight and set by a reload,
	 * from several threads. */
	mtx_t rate_lock;
	struct np_token_bucket rate;

	/* Movers: calls in flight at once on one task's pages, on free
	 * CPUs; a move gets more while other threads keep the CPUs busy
	 * (np_movers_for_load over the load np_actuator_set_load last
	 * took: one measured while no move of ours ran). */
	unsigned movers;
	double others_busy;
	unsigned cpus;
	bool moved_since_load; /* a move ran since the last set_load */
	/* Moves of different tasks at once, each on a lane of its own. */
	unsigned moves;
	struct lane lanes[NP_MOVES_MAX];

	struct np_action_record *records;
	unsigned nr_records, cap_records;
	uint64_t records_dropped;

	/* An eventfd the moves in flight on threads of their own
	 * (np_actuator_move_start) write when their last call is made. */
	int job_fd;
};

void np_actuator_params_init(struct np_actuator_params *params)
{
	memset(params, 0, sizeof(*params));
	params->batch_target_ms = DEFAULT_BATCH_TARGET_MS;
	params->batch_pages = DEFAULT_BATCH_PAGES;
	params->backoff_min_ms = DEFAULT_BACKOFF_MIN_MS;
	params->backoff_max_ms = DEFAULT_BACKOFF_MAX_MS;
	params->allow_migrate_pages = true;
}

static uint64_t now(const struct np_actuator *act)
{
	return act->clock(act->clock_data);
}

/* The scratch of @lane for @movers movers, made on its first use: a lane
 * but the first is needed only when moves overlap. Returns 0 or -ENOMEM
 * (what was made stays, for the next try). */
static int lane_ready(struct lane *lane, unsigned movers)
{
	if (!lane->pages)
		lane->pages = malloc(QUERY_PAGES * sizeof(*lane->pages));
	if (!lane->status)
		lane->status = malloc(QUERY_PAGES * sizeof(*lane->status));
	if (!lane->nodes)
		lane->nodes = malloc(QUERY_PAGES * sizeof(*lane->nodes));
	if (!lane->pages || !lane->status || !lane->nodes)
		return -ENOMEM;
	/* Set once: a reload may come here while a move runs on the lane. */
	if (!lane->mover_status[0]) {
		lane->mover_status[0] = lane->status;
		lane->mover_nodes[0] = lane->nodes;
	}
	for (unsigned i = 1; i < movers; i++) {
		if (!lane->mover_status[i])
			lane->mover_status[i] = malloc(QUERY_PAGES * sizeof(int));
		if (!lane->mover_nodes[i])
			lane->mover_nodes[i] = malloc(QUERY_PAGES * sizeof(int));
		if (!lane->mover_status[i] || !lane->mover_nodes[i])
			return -ENOMEM;
	}
	return 0;
}

static void lane_free(struct lane *lane)
{
	free(lane->pages);
	free(lane->status);
	free(lane->nodes);
	for (unsigned i = 1; i < NP_MOVERS_MAX; i++) {
		free(lane->mover_status[i]);
		free(lane->mover_nodes[i]);
	}
	memset(lane, 0, sizeof(*lane));
}

static int actuator_new(struct np_ctx *ctx, struct np_stats *stats,
			const struct np_actuator_params *params, bool dry, struct np_actuator **out)
{
	struct np_actuator_params defaults;
	struct np_actuator *act;

	if (!params) {
		np_actuator_params_init(&defaults);
		params = &defaults;
	}
	act = calloc(1, sizeof(*act));
	if (!act)
		return -ENOMEM;
	act->ctx = ctx;
	act->stats = stats;
	act->dry = dry;
	act->sys = params->sys ? params->sys : &kernel_sys;
	act->clock = params->clock ? params->clock : monotonic_ns;
	act->clock_data = params->clock ? params->clock_data : NULL;
	act->should_stop = params->should_stop;
	act->stop_data = params->stop_data;
	act->batch_target_ns =
	    (params->batch_target_ms ? params->batch_target_ms : DEFAULT_BATCH_TARGET_MS) *
	    NS_PER_MS;
	act->model.batch_pages = params->batch_pages ? params->batch_pages : DEFAULT_BATCH_PAGES;
	if (act->model.batch_pages > NP_BATCH_PAGES_MAX)
		act->model.batch_pages = NP_BATCH_PAGES_MAX;
	act->model.query_pages = FIRST_QUERY_PAGES;
	act->backoff_min_ns =
	    (params->backoff_min_ms ? params->backoff_min_ms : DEFAULT_BACKOFF_MIN_MS) * NS_PER_MS;
	act->backoff_max_ns =
	    (params->backoff_max_ms ? params->backoff_max_ms : DEFAULT_BACKOFF_MAX_MS) * NS_PER_MS;
	act->allow_migrate_pages = params->allow_migrate_pages;
	act->job_fd = -1;
	if (mtx_init(&act->rate_lock, mtx_plain) != thrd_success) {
		free(act);
		return -ENOMEM;
	}
	np_actuator_set_rate(act, params->migrate_rate_mb_s);
	np_actuator_set_moves(act, params->moves);
	/* The first lane's scratch now: a daemon that cannot have it should
	 * say so at its start, not at its first move. */
	if (np_actuator_set_movers(act, params->movers) < 0 ||
	    lane_ready(&act->lanes[0], act->movers) < 0) {
		np_actuator_free(act);
		return -ENOMEM;
	}
	/* A dry run's moves are records, made at once. */
	if (!dry) {
		act->job_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (act->job_fd < 0) {
			int err = -errno;

			np_actuator_free(act);
			return err;
		}
	}
	*out = act;
	return 0;
}

int np_actuator_set_movers(struct np_actuator *act, unsigned movers)
{
	/* A dry run's calls only record: one at a time. */
	if (!movers || act->dry)
		movers = 1;
	if (movers > NP_MOVERS_MAX)
		movers = NP_MOVERS_MAX;
	/* The lanes made so far get theirs now: a reload that asks for more
	 * than memory allows keeps the number before. */
	for (unsigned i = 0; i < NP_MOVES_MAX; i++)
		if (act->lanes[i].pages && lane_ready(&act->lanes[i], movers) < 0)
			return -ENOMEM;
	act->movers = movers;
	return 0;
}

void np_actuator_set_load(struct np_actuator *act, double others_busy, unsigned cpus)
{
	bool moving = false;

	for (unsigned i = 0; i < NP_MOVES_MAX; i++)
		moving |= act->lanes[i].job != NULL;
	/* While our movers ran, the others got less of the CPUs than they
	 * wanted: such a reading would make the next move's movers fewer
	 * for the very load they added. The last one without them stands. */
	if (!act->moved_since_load || !act->cpus) {
		act->others_busy = others_busy;
		act->cpus = cpus;
	}
	act->moved_since_load = moving;
}

void np_actuator_set_moves(struct np_actuator *act, unsigned moves)
{
	/* A dry run's moves are records, made at once. */
	if (!moves || act->dry)
		moves = 1;
	act->moves = moves < NP_MOVES_MAX ? moves : NP_MOVES_MAX;
}

void np_actuator_set_rate(struct np_actuator *act, uint64_t migrate_rate_mb_s)
{
	uint64_t rate = migrate_rate_mb_s > UINT64_MAX / MIB ? 0 : migrate_rate_mb_s * MIB;

	/* A burst of one second's worth: a tick can spend what the quiet
	 * seconds before it saved, no more. */
	mtx_lock(&act->rate_lock);
	np_token_bucket_init(&act->rate, rate, rate, now(act));
	mtx_unlock(&act->rate_lock);
}

static uint64_t rate_take(struct np_actuator *act, uint64_t want)
{
	uint64_t granted;

	mtx_lock(&act->rate_lock);
	granted = np_token_bucket_take(&act->rate, want, now(act));
	mtx_unlock(&act->rate_lock);
	return granted;
}

static void rate_refund(struct np_actuator *act, uint64_t bytes)
{
	mtx_lock(&act->rate_lock);
	np_token_bucket_refund(&act->rate, bytes);
	mtx_unlock(&act->rate_lock);
}

int np_actuator_new_real(struct np_ctx *ctx, struct np_stats *stats,
			 const struct np_actuator_params *params, struct np_actuator **out)
{
	if (!np_ctx_is_live(ctx))
		return -EOPNOTSUPP;
	return actuator_new(ctx, stats, params, false, out);
}

int np_actuator_new_dry(struct np_ctx *ctx, struct np_stats *stats,
			const struct np_actuator_params *params, struct np_actuator **out)
{
	return actuator_new(ctx, stats, params, true, out);
}

static void job_free(struct move_job *job);

void np_actuator_free(struct np_actuator *act)
{
	if (!act)
		return;
	/* The moves still in flight end at their next batch: nothing is left
	 * to account them to. */
	for (unsigned i = 0; i < NP_MOVES_MAX; i++) {
		job_free(act->lanes[i].job);
		lane_free(&act->lanes[i]);
	}
	if (act->job_fd >= 0)
		close(act->job_fd);
	mtx_destroy(&act->rate_lock);
	free(act->records);
	free(act);
}

bool np_actuator_is_dry(const struct np_actuator *act)
{
	return act->dry;
}

const struct np_action_record *np_actuator_records(const struct np_actuator *act, unsigned *nr)
{
	*nr = act->nr_records;
	return act->records;
}

void np_actuator_clear_records(struct np_actuator *act)
{
	act->nr_records = 0;
	act->records_dropped = 0;
}

/* Log a dry-run record, and keep it while there is room: a daemon that
 * never reads them must not grow without bound. */
static void keep_record(struct np_actuator *act, const struct np_action_record *rec)
{
	char line[256];

	np_action_record_format(rec, line, sizeof(line));
	np_log(act->ctx, LOG_INFO, "dry run: %s", line);
	if (act->nr_records == act->cap_records) {
		unsigned cap = act->cap_records ? act->cap_records * 2 : 16;
		struct np_action_record *bigger;

		if (act->cap_records >= NP_ACTUATOR_RECORDS_MAX) {
			act->records_dropped++;
			return;
		}
		bigger = realloc(act->records, cap * sizeof(*bigger));
		if (!bigger) {
			act->records_dropped++;
			return;
		}
		act->records = bigger;
		act->cap_records = cap;
	}
	act->records[act->nr_records++] = *rec;
}

uint64_t np_actuator_records_dropped(const struct np_actuator *act)
{
	return act->records_dropped;
}

size_t np_action_record_format(const struct np_action_record *rec, char *buf, size_t size)
{
	char cpus[256];

	if (rec->kind == NP_RECORD_PAGES)
		return (size_t)snprintf(
		    buf, size, "pid %d: move %" PRIu64 " pages (%.1f MiB) node %d -> %d", rec->pid,
		    rec->pages, (double)rec->bytes / MIB, rec->from, rec->to);
	np_bitmap_format_list(&rec->cpus, cpus, sizeof(cpus));
	return (size_t)snprintf(buf, size, "pid %d: thread %d affinity -> %s", rec->pid, rec->tid,
				cpus);
}

/* ---- Identity ---- */

/* The task's directory for the length of one action, opened and checked
 * to be its (np_task_dir_open): every file the action reads is read
 * through it, so none belongs to a process that took the pid over. */
struct task_dir {
	int fd;
	char path[NP_TASK_DIR_MAX];
};

/* Start time and flags of a thread, from task/TID/stat under the task's
 * directory: a thread id is reused like a pid, and under that directory
 * only the task's own threads are found. A vanished thread is -ESRCH. */
static int read_thread_identity(struct np_actuator *act, const struct task_dir *td, int tid,
				uint64_t *start_ticks, unsigned long *flags)
{
	char path[64], *buf;
	size_t len;
	struct np_stat st;
	int err;

	snprintf(path, sizeof(path), "task/%d/stat", tid);
	err = np_ctx_read_file_at(act->ctx, td->fd, td->path, path, STAT_MAX, &buf, &len);
	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	err = np_stat_parse(buf, len, &st);
	if (err)
		np_log(act->ctx, LOG_ERR, "%s/%s/%s: malformed: \"%.*s\"", np_ctx_root(act->ctx),
		       td->path, path, (int)strcspn(buf, "\n"), buf);
	free(buf);
	if (err)
		return err;
	*start_ticks = st.start_ticks;
	if (flags)
		*flags = st.flags;
	return 0;
}

static bool pidfd_exited(int pidfd)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};

	/* A pidfd becomes readable when its process exits. */
	return pidfd >= 0 && poll(&pfd, 1, 0) > 0;
}

void np_act_task_init(struct np_act_task *at)
{
	*at = (struct np_act_task){.pidfd = -1};
}

void np_act_task_release(struct np_act_task *at)
{
	if (at->pidfd >= 0)
		close(at->pidfd);
	np_act_task_init(at);
}

/* Start tracking @task: a pidfd, opened before the start time is checked
 * (action_begin), so that it holds this process and no later one. */
static int track(struct np_actuator *act, struct np_act_task *at, const struct np_task *task)
{
	if (at->tracked)
		return 0;
	if (np_ctx_is_live(act->ctx)) {
		long fd = syscall(SYS_pidfd_open, task->pid, 0);

		if (fd < 0 && errno != ENOSYS)
			return errno == ESRCH ? -ESRCH : -errno;
		at->pidfd = (int)fd;
	}
	at->tracked = true;
	return 0;
}

/* Checks before an action: still the same process (its directory opened
 * and its start time read through it, its pidfd not yet readable), not
 * backing off. On 0, @td is open; action_end() closes it. Returns 0 or
 * -errno (counted). */
static int action_begin(struct np_actuator *act, struct np_act_task *at, const struct np_task *task,
			struct task_dir *td)
{
	int err = track(act, at, task);

	td->fd = -1;
	if (!err && np_backoff_waiting(&at->backoff, now(act))) {
		np_stats_add_skip(act->stats, NP_REASON_BACKOFF);
		return -EAGAIN;
	}
	if (!err) {
		td->fd = np_task_dir_open(act->ctx, task, td->path);
		err = td->fd < 0 ? td->fd : 0;
	}
	if (!err && pidfd_exited(at->pidfd))
		err = -ESRCH;
	if (err) {
		if (td->fd >= 0)
			close(td->fd);
		td->fd = -1;
		np_act_task_release(at);
	}
	if (err == -ESRCH)
		np_stats_add_skip(act->stats, NP_REASON_VANISHED);
	return err;
}

/* PF_EXITING (include/linux/sched.h): set first thing in do_exit(). */
#define PF_EXITING_FLAG 0x00000004u

/* Whether @t has exited or is on its way out. Its pidfd reports the exit
 * only at the end of it: before that, a task that has already let go of its
 * memory makes move_pages(2) fail with EINVAL. */
static bool task_leaving(struct np_actuator *act, const struct np_act_task *at,
			 const struct np_task *task, const struct task_dir *td)
{
	uint64_t start;
	unsigned long flags;

	if (pidfd_exited(at->pidfd))
		return true;
	switch (read_thread_identity(act, td, task->pid, &start, &flags)) {
	case 0:
		return start != task->start_ticks || (flags & PF_EXITING_FLAG);
	case -ESRCH:
		return true;
	default:
		return false;
	}
}

/* After an action: a process that exited meanwhile may have passed its pid
 * on, so the action is a failure whatever the calls said, and a call that
 * failed because the process was going away failed for that reason.
 * Closes @td. */
static int action_end(struct np_actuator *act, struct np_act_task *at, const struct np_task *task,
		      struct task_dir *td, int err, bool failed, enum np_stat_call kind)
{
	if (err ? err != -ESRCH && task_leaving(act, at, task, td) : pidfd_exited(at->pidfd))
		err = -ESRCH;
	close(td->fd);
	td->fd = -1;
	if (err) {
		np_stats_add_failure(act->stats, kind, err);
		failed = true;
	}
	if (err == -ESRCH) {
		np_act_task_release(at);
		return err;
	}
	if (failed)
		np_backoff_failed(&at->backoff, now(act), act->backoff_min_ns, act->backoff_max_ns);
	else
		np_backoff_succeeded(&at->backoff);
	return err;
}

/* ---- Finding the pages ---- */

struct candidate {
	uint64_t start, end, page_bytes;
	uint64_t misplaced; /* pages numa_maps counted off the target; UINT64_MAX: unknown */
	int dense_src;	    /* every page present and on this node; -1: look them up */
	int target;	    /* where its pages go */
};

struct collect {
	int target;
	struct candidate *c;
	unsigned nr;
	uint64_t misplaced_bytes;
	uint64_t sparse_bytes;
	uint64_t *src_pages; /* NP_MAX_NODES: misplaced pages per source node */
	uint64_t *src_bytes;
};

static const struct np_vma_range *find_range(const struct np_vma_range *ranges, unsigned nr,
					     uint64_t start)
{
	unsigned lo = 0, hi = nr;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (ranges[mid].start == start)
			return &ranges[mid];
		if (ranges[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One movable VMA of the tick's read: a candidate when pages are off the
 * target. */
static void collect_vma(struct collect *col, const struct np_task_memory *mem,
			const struct np_memory_vma *vma, const struct np_vma_range *range)
{
	const struct np_nm_node_pages *nodes = &mem->pages[vma->first];
	uint64_t misplaced = 0, span;
	int dense_src = -1;

	for (unsigned i = 0; i < vma->nr_nodes; i++) {
		if (nodes[i].node != col->target && nodes[i].pages) {
			misplaced += nodes[i].pages;
			dense_src = dense_src == -1 ? nodes[i].node : -2;
		}
	}
	if (!misplaced || !range)
		return; /* in place, or unmapped since the read */
	/* Looking up pages costs per page of the range, present or not: a
	 * mostly empty reservation (a JVM heap, sanitizer shadow, terabytes
	 * with a few pages touched) would take minutes to walk. Past 16
	 * lookups per present page, and 256 MiB, it is left alone. */
	span = (range->end - range->start) / vma->page_bytes;
	if (span > 16 * vma->present + 65536) {
		col->sparse_bytes += misplaced * vma->page_bytes;
		return;
	}
	for (unsigned i = 0; i < vma->nr_nodes; i++) {
		int node = nodes[i].node;

		if (node == col->target || node < 0 || node >= NP_MAX_NODES)
			continue;
		col->src_pages[node] += nodes[i].pages;
		col->src_bytes[node] += nodes[i].pages * vma->page_bytes;
	}
	/* Every page of the range present and all on one other node: the
	 * lookup would only say so page by page. */
	if (dense_src < 0 || dense_src >= NP_MAX_NODES || misplaced != span)
		dense_src = -1;
	col->c[col->nr++] = (struct candidate){range->start,	 range->end, vma->page_bytes,
					       misplaced,	 dense_src,  col->target};
	col->misplaced_bytes += misplaced * vma->page_bytes;
}

/* The parts of @mem's movable VMAs that @nr areas (sorted, apart) cover,
 * each a candidate toward its area's node: which pages are off it, only
 * a lookup says. The VMAs are in address order too: one walk over both,
 * at most one piece per VMA and per area more than their count. */
static void collect_areas(struct collect *col, const struct np_task_memory *mem,
			  const struct np_vma_range *ranges, unsigned nr_ranges,
			  const struct np_move_area *areas, unsigned nr)
{
	unsigned first = 0;

	for (unsigned v = 0; v < mem->nr_vmas; v++) {
		const struct np_memory_vma *vma = &mem->vmas[v];
		const struct np_vma_range *range = find_range(ranges, nr_ranges, vma->start);

		if (!range)
			continue; /* unmapped since the read */
		/* Areas wholly before this VMA are behind every later one. */
		while (first < nr && areas[first].end <= range->start)
			first++;
		for (unsigned a = first; a < nr && areas[a].start < range->end; a++) {
			uint64_t start = areas[a].start > range->start ? areas[a].start : range->start;
			uint64_t end = areas[a].end < range->end ? areas[a].end : range->end;

			/* Whole pages of the VMA only. */
			start = (start + vma->page_bytes - 1) / vma->page_bytes * vma->page_bytes;
			end = end / vma->page_bytes * vma->page_bytes;
			if (start >= end)
				continue;
			col->c[col->nr++] = (struct candidate){
			    start, end, vma->page_bytes, UINT64_MAX, -1, areas[a].node};
			col->misplaced_bytes += end - start;
		}
	}
}

/* The movable VMAs of @mem holding pages off @target (or, with @areas,
 * their parts those cover), with their ranges from maps under the task's
 * directory. */
static int collect_candidates(struct np_actuator *act, const struct task_dir *td,
			      const struct np_task_memory *mem, int target,
			      const struct np_move_area *areas, unsigned nr_areas,
			      struct collect *col)
{
	char *buf;
	size_t len;
	struct np_vma_range *ranges = NULL;
	unsigned nr = 0, line = 0;
	int err;

	memset(col, 0, sizeof(*col));
	col->target = target;
	col->src_pages = calloc(NP_MAX_NODES, sizeof(*col->src_pages));
	col->src_bytes = calloc(NP_MAX_NODES, sizeof(*col->src_bytes));
	/* An area cut by VMAs is one candidate per piece: each piece starts
	 * an area or a VMA. */
	col->c = calloc((size_t)mem->nr_vmas + nr_areas + 1, sizeof(*col->c));
	if (!col->src_pages || !col->src_bytes || !col->c)
		return -ENOMEM;
	err = np_ctx_read_file_at(act->ctx, td->fd, td->path, "maps", MAPS_MAX, &buf, &len);
	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	err = np_maps_parse(buf, len, &ranges, &nr, &line);
	if (err == -EINVAL)
		np_log(act->ctx, LOG_ERR, "%s/%s/maps:%u: expected \"start-end ...\"",
		       np_ctx_root(act->ctx), td->path, line);
	free(buf);
	if (err)
		return err;
	if (areas)
		collect_areas(col, mem, ranges, nr, areas, nr_areas);
	else
		for (unsigned v = 0; v < mem->nr_vmas; v++)
			collect_vma(col, mem, &mem->vmas[v],
				    find_range(ranges, nr, mem->vmas[v].start));
	free(ranges);
	return 0;
}

static void collect_free(struct collect *col)
{
	free(col->c);
	free(col->src_pages);
	free(col->src_bytes);
}

/* ---- Moving ---- */

struct move_state {
	struct np_actuator *act;
	struct lane *lane; /* its scratch and model */
	int pid, pidfd; /* pidfd: polled between batches, -1 for none */
	uint64_t start_ticks;
	int target;
	uint64_t budget; /* bytes left under max_bytes; UINT64_MAX: none */
	struct np_move_result *res;
	bool stop;
	/* A call's -EBUSY page was found on the destination after it: one
	 * of the other pages of a huge page the call moved whole, for the
	 * first of its pages in the call. From then on a call
	 * ends inside a huge page's block only where the rate or the budget
	 * cuts it (huge_block_end). */
	bool huge_seen;
	uint64_t pending; /* budget the calls in flight may use */
	struct mover_pool *pool; /* NULL: calls made by the moving thread */
	/* Pages of the chunk's calls left in place with -EFAULT or -EBUSY,
	 * to be looked at again once every call of the chunk is made
	 * (retry_failed): each page's address, its source and destination,
	 * and the status it failed with. */
	struct again {
		void *page;
		int src, dst, status;
	} *again;
	unsigned nr_again, again_cap;
	bool last_try; /* the chunk's second try: failures are final */
};

/* Keep page @i of batch @b, answered @status, for retry_failed: a
 * -EFAULT or -EBUSY while movers make calls side by side, on the first
 * try. False (counted as failed at once) for any other status, a move by
 * one thread (its calls come one after another: no call of its own was
 * moving the page), the second try, or no memory to keep it. */
static bool defer_failure(struct move_state *ms, const struct np_page_plan *plan,
			  const struct np_page_batch *b, unsigned i, int status)
{
	if (!ms->pool || ms->last_try || (status != -EFAULT && status != -EBUSY))
		return false;
	if (ms->nr_again == ms->again_cap) {
		unsigned cap = ms->again_cap ? ms->again_cap * 2 : plan->nr_pages;
		struct again *bigger = realloc(ms->again, cap * sizeof(*bigger));

		if (!bigger)
			return false;
		ms->again = bigger;
		ms->again_cap = cap;
	}
	ms->again[ms->nr_again++] = (struct again){plan->pages[b->first + i],
						   plan->src[b->first + i], b->dst, status};
	return true;
}

/* Account one move_pages batch: pages now on their destination count as
 * moved from their source. A page reported -EBUSY may belong to a huge page
 * the call moved whole for another of its pages, so those are looked up
 * once more (a lookup,
 * not a retry) into @recheck, the call's nodes, free once it is made.
 * Returns the bytes moved. */
static uint64_t account_batch(struct move_state *ms, const struct np_page_plan *plan,
			      const struct np_page_batch *b, int *status, int *recheck,
			      uint64_t page_bytes, long not_moved)
{
	struct np_actuator *act = ms->act;
	uint64_t moved = 0;
	unsigned busy = 0;

	for (unsigned i = 0; i < b->count; i++)
		if (status[i] == -EBUSY)
			ms->lane->pages[busy++] = plan->pages[b->first + i];
	if (busy) {
		if (act->sys->move_pages(act->sys->data, ms->pid, busy, ms->lane->pages, NULL,
					 recheck) >= 0) {
			for (unsigned i = 0, j = 0; i < b->count; i++)
				if (status[i] == -EBUSY && recheck[j++] == b->dst) {
					status[i] = b->dst;
					ms->huge_seen = true;
				}
		}
	}
	for (unsigned i = 0; i < b->count;) {
		int src = plan->src[b->first + i];
		unsigned run = 0;

		/* Runs of one source node, to keep the matrix updates few. */
		while (i < b->count && plan->src[b->first + i] == src && status[i] == b->dst) {
			run++;
			i++;
		}
		if (run) {
			np_stats_add_migrated(act->stats, src, b->dst, run, run * page_bytes);
			moved += run * page_bytes;
			ms->res->pages_moved += run;
			continue;
		}
		/* Not on the destination: an error per page, or left behind by a
		 * transient failure the kernel counted in its positive return
		 * (after its own retries), which we file under EAGAIN. One that
		 * may have met another call's move is tried again at the
		 * chunk's end (retry_failed). */
		if (defer_failure(ms, plan, b, i, status[i])) {
			i++;
			continue;
		}
		np_stats_add_page_failures(
		    act->stats, status[i] < 0 ? status[i] : (not_moved > 0 ? -EAGAIN : 0), 1);
		ms->res->pages_failed++;
		i++;
	}
	ms->res->bytes_moved += moved;
	return moved;
}

/* Size the next move call from this one's time (np_call_model_next). */
static void resize_batch(const struct np_actuator *act, struct move_model *m, unsigned pages,
			 uint64_t elapsed, unsigned in_flight)
{
	/* The target is what one call may hold the task up, and calls
	 * overshoot it: in the 2-node guest the longest of a move's calls was
	 * 2-6 times their mean, with one mover or two, as the host
	 * descheduled a vCPU mid-call. A call's fixed cost overlaps the
	 * others' work when several are in flight, so there they aim at half
	 * the target, for little loss: 100,000 pages by two movers in calls
	 * of 9 ms on average took 1.19 times what 512-page calls of two
	 * threads took, in 18 ms calls 1.18 times, the longest call 23 ms
	 * against 34 (medians of 5). */
	uint64_t target = in_flight > 1 ? act->batch_target_ns / 2 : act->batch_target_ns;

	m->batch_pages = np_call_model_next(&m->calls, m->batch_pages, pages, elapsed, target);
}

/* The daemon wants out: end the action here, as if its budget were spent. */
static bool stop_requested(struct move_state *ms)
{
	struct np_actuator *act = ms->act;

	if (!act->should_stop || !act->should_stop(act->stop_data))
		return false;
	ms->res->budget_exhausted = true;
	ms->stop = true;
	return true;
}

/* One move_pages call: made by the moving thread, or by a mover of the
 * pool while the moving thread hands out the next. */
struct move_call {
	struct np_actuator *act;
	int pid;
	struct np_page_batch b;
	void **pages;
	int *nodes, *status;
	uint64_t granted; /* rate tokens taken for it */
	long r;
	uint64_t elapsed;
};

/* A helper thread's stack. glibc's default is 8 MiB, 2 MiB-aligned: with
 * transparent huge pages "always", the first touch of it faults in a whole
 * 2 MiB page, and in the guest soak the daemon's RSS jumped by 2 MiB while
 * a mover ran. The calls and their accounting need a few KiB; a stack
 * under 2 MiB cannot hold a huge page. */
#define HELPER_STACK_BYTES (256 * 1024)

/* Start @fn(@arg) on a thread of its own, with every signal blocked there
 * (they stay with the loop's thread) and a small stack. False: none was
 * started. */
static bool start_helper(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t all, old;
	bool started;

	if (pthread_attr_init(&attr))
		return false;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	started = !pthread_attr_setstacksize(&attr, HELPER_STACK_BYTES) &&
		  !pthread_create(thread, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return started;
}

static void make_call(struct move_call *c)
{
	struct np_actuator *act = c->act;
	uint64_t t0;

	for (unsigned i = 0; i < c->b.count; i++)
		c->nodes[i] = c->b.dst;
	t0 = now(act);
	c->r =
	    act->sys->move_pages(act->sys->data, c->pid, c->b.count, c->pages, c->nodes, c->status);
	c->elapsed = now(act) - t0;
}

/*
 * Movers: threads that make the calls of one task's move, each handed its
 * next call as soon as it has made one, while the moving thread cuts the
 * calls and accounts for them. Calls handed out in groups and waited for
 * together started at the same instant, so their fixed costs (the LRU
 * drains of every CPU, an expedited RCU grace period) fell together too,
 * and each group waited for its slowest call; in the 2-node guest two
 * threads of another process calling on their own moved 100,000 pages in
 * 1973 ms where such groups of two took 2195, with calls of up to 86 ms
 * against 30.
 */
enum mover_state { MOVER_IDLE, MOVER_CALL, MOVER_MADE };

struct mover {
	struct mover_pool *pool;
	pthread_t thread;
	enum mover_state state; /* under the pool's lock */
	struct move_call call;
};

struct mover_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* a call handed out, or the end */
	pthread_cond_t made; /* a call made */
	bool quit;
	unsigned n;	    /* movers started */
	unsigned in_flight; /* calls handed out and not yet taken back */
	struct mover m[NP_MOVERS_MAX];
};

static void *mover_main(void *arg)
{
	struct mover *mv = arg;
	struct mover_pool *pool = mv->pool;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		while (mv->state != MOVER_CALL && !pool->quit)
			pthread_cond_wait(&pool->wake, &pool->lock);
		if (mv->state != MOVER_CALL)
			break;
		pthread_mutex_unlock(&pool->lock);
		make_call(&mv->call);
		pthread_mutex_lock(&pool->lock);
		mv->state = MOVER_MADE;
		pthread_cond_signal(&pool->made);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

static void pool_stop(struct mover_pool *pool)
{
	pthread_mutex_lock(&pool->lock);
	pool->quit = true;
	pthread_cond_broadcast(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	for (unsigned i = 0; i < pool->n; i++)
		pthread_join(pool->m[i].thread, NULL);
	pthread_cond_destroy(&pool->made);
	pthread_cond_destroy(&pool->wake);
	pthread_mutex_destroy(&pool->lock);
}

/* Up to @movers threads for a move. False when fewer than two started: the
 * moving thread then makes its calls itself. */
static bool pool_start(struct mover_pool *pool, unsigned movers)
{
	memset(pool, 0, sizeof(*pool));
	if (movers < 2)
		return false;
	if (pthread_mutex_init(&pool->lock, NULL))
		return false;
	if (pthread_cond_init(&pool->wake, NULL)) {
		pthread_mutex_destroy(&pool->lock);
		return false;
	}
	if (pthread_cond_init(&pool->made, NULL)) {
		pthread_cond_destroy(&pool->wake);
		pthread_mutex_destroy(&pool->lock);
		return false;
	}
	for (unsigned i = 0; i < movers; i++) {
		pool->m[pool->n].pool = pool;
		if (!start_helper(&pool->m[pool->n].thread, mover_main, &pool->m[pool->n]))
			break;
		pool->n++;
	}
	if (pool->n >= 2)
		return true;
	pool_stop(pool);
	return false;
}

/* A mover with nothing to do, or -1. */
static int pool_idle(struct mover_pool *pool)
{
	int idle = -1;

	pthread_mutex_lock(&pool->lock);
	for (unsigned i = 0; i < pool->n && idle < 0; i++)
		if (pool->m[i].state == MOVER_IDLE)
			idle = (int)i;
	pthread_mutex_unlock(&pool->lock);
	return idle;
}

static void pool_hand(struct mover_pool *pool, int i, const struct move_call *c)
{
	pthread_mutex_lock(&pool->lock);
	pool->m[i].call = *c;
	pool->m[i].state = MOVER_CALL;
	pool->in_flight++;
	pthread_cond_broadcast(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
}

/* Wait for a call to be made, and take it back into @c; its mover is idle
 * again, its buffers the caller's until it hands that mover another call.
 * Returns the mover. */
static int pool_take(struct mover_pool *pool, struct move_call *c)
{
	int i = -1;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		for (unsigned k = 0; k < pool->n && i < 0; k++)
			if (pool->m[k].state == MOVER_MADE)
				i = (int)k;
		if (i >= 0)
			break;
		pthread_cond_wait(&pool->made, &pool->lock);
	}
	*c = pool->m[i].call;
	pool->m[i].state = MOVER_IDLE;
	pool->in_flight--;
	pthread_mutex_unlock(&pool->lock);
	return i;
}

/* Account for a call made: what it moved counts whatever the others did.
 * Returns 0 or its error. */
static int call_made(struct move_state *ms, const struct np_page_plan *plan,
		     const struct move_call *c, uint64_t page_bytes)
{
	struct np_actuator *act = ms->act;
	uint64_t moved;

	if (ms->budget != UINT64_MAX)
		ms->pending -= c->granted;
	if (c->r < 0) {
		rate_refund(act, c->granted);
		return (int)c->r;
	}
	np_stats_add_migrate_call(act->stats, NP_CALL_MOVE_PAGES, c->elapsed);
	ms->res->calls++;
	moved = account_batch(ms, plan, &c->b, c->status, c->nodes, page_bytes, c->r);
	rate_refund(act, c->granted - moved);
	if (ms->budget != UINT64_MAX)
		ms->budget -= moved < ms->budget ? moved : ms->budget;
	/* A second try's few pages would teach the model a call's fixed
	 * cost as their price. */
	if (!ms->last_try) {
		ms->lane->model.ns_per_page = c->elapsed / c->b.count;
		resize_batch(act, &ms->lane->model, c->b.count, c->elapsed,
			     ms->pool ? ms->pool->n : 1);
	}
	return 0;
}

/*
 * Where a call of @count pages from @first of @plan's batch @k ends once
 * huge pages were seen: at the edge of a huge page block, the one nearer
 * its @count-th page, never inside a block. move_pages moves a transparent
 * huge page whole for the first of its pages in a call and answers -EBUSY
 * for the others; a call that ended inside a block left the rest of its
 * 512 pages to the next calls, each paying the call's fixed cost (an
 * expedited RCU grace period, lru_cache_disable) for pages already moved,
 * or to a mover beside it that found the block taken. In the 2-node
 * guest, with the hogs' memory in huge pages and calls of ~150 pages, a
 * block took three or four calls. Ending at the block's start when the
 * call has little of it keeps calls near their size: always to its end,
 * a call sized 520 pages moved 1,024.
 */
static unsigned huge_block_end(const struct np_page_plan *plan, unsigned k, unsigned first,
			       unsigned count)
{
	const struct np_page_batch *batch = &plan->batches[k];
	unsigned end = first + count, batch_end = batch->first + batch->count, start = end - 1;
	uintptr_t block = (uintptr_t)plan->pages[end - 1] / HUGE_BLOCK_BYTES;

	while (start > first && (uintptr_t)plan->pages[start - 1] / HUGE_BLOCK_BYTES == block)
		start--;
	while (end < batch_end && (uintptr_t)plan->pages[end] / HUGE_BLOCK_BYTES == block)
		end++;
	/* The call began before this block and has less of it than the
	 * block's pages after it: end before the block. */
	if (start > first && first + count - start < end - (first + count))
		return start - first;
	return end - first;
}

static int retry_failed(struct move_state *ms, uint64_t page_bytes, bool give_up);

/* Move the batches of one looked-up chunk: each call made here, or handed
 * to an idle mover of the pool. Every call is made and accounted for before
 * it returns (the next chunk's lookup reuses the scratch), and the pages
 * they left in place for another call's move tried once more
 * (retry_failed). Returns 0 or the first error of a call, after which no
 * call is started. */
static int move_plan(struct move_state *ms, const struct np_page_plan *plan, uint64_t page_bytes)
{
	struct np_actuator *act = ms->act;
	struct mover_pool *pool = ms->pool;
	struct move_call c;
	int err = 0;

	for (unsigned k = 0; k < plan->nr_batches; k++) {
		struct np_page_batch b = plan->batches[k];

		/* Batches are cut to the current size: it may have shrunk since
		 * the plan was made. */
		for (unsigned done = 0; done < plan->batches[k].count; done += b.count) {
			uint64_t want, granted, left = ms->budget - ms->pending;
			int mover = 0;

			if (pool && (mover = pool_idle(pool)) < 0) {
				mover = pool_take(pool, &c);
				err = call_made(ms, plan, &c, page_bytes);
				if (err)
					goto drain;
				left = ms->budget - ms->pending;
			}
			b.first = plan->batches[k].first + done;
			b.count = plan->batches[k].count - done;
			if (b.count > ms->lane->model.batch_pages)
				b.count = ms->lane->model.batch_pages;
			if (ms->huge_seen)
				b.count = huge_block_end(plan, k, b.first, b.count);
			want = (uint64_t)b.count * page_bytes;
			if (ms->budget != UINT64_MAX && want > left)
				want = left / page_bytes * page_bytes;
			granted = rate_take(act, want);
			b.count = (unsigned)(granted / page_bytes);
			rate_refund(act, granted - (uint64_t)b.count * page_bytes);
			if (!b.count) {
				ms->res->budget_exhausted = true;
				ms->stop = true;
				goto drain;
			}
			if (stop_requested(ms)) {
				rate_refund(act, (uint64_t)b.count * page_bytes);
				goto drain;
			}
			if (pidfd_exited(ms->pidfd)) {
				rate_refund(act, (uint64_t)b.count * page_bytes);
				err = -ESRCH;
				goto drain;
			}
			c = (struct move_call){
			    .act = act,
			    .pid = ms->pid,
			    .b = b,
			    .pages = plan->pages + b.first,
			    .nodes = ms->lane->mover_nodes[mover],
			    .status = ms->lane->mover_status[mover],
			    .granted = (uint64_t)b.count * page_bytes,
			};
			if (ms->budget != UINT64_MAX)
				ms->pending += c.granted;
			if (pool) {
				pool_hand(pool, mover, &c);
				continue;
			}
			make_call(&c);
			err = call_made(ms, plan, &c, page_bytes);
			if (err)
				goto drain;
		}
	}
drain:
	while (pool && pool->in_flight) {
		int e;

		pool_take(pool, &c);
		e = call_made(ms, plan, &c, page_bytes);
		if (!err)
			err = e;
	}
	if (!ms->last_try) {
		int e = retry_failed(ms, page_bytes, err != 0);

		if (!err)
			err = e;
	}
	return err;
}

static int by_address_down(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct again *)a)->page;
	uintptr_t y = (uintptr_t)((const struct again *)b)->page;

	return (x < y) - (x > y);
}

/*
 * The pages a chunk's calls left in place with -EFAULT or -EBUSY, once
 * every call of the chunk is made (no call in flight: the lane's scratch
 * is free). On Debian 12's 6.1 kernel move_pages
 * answers -EFAULT for a page of a transparent huge page that another call
 * is migrating (its PMD is a migration entry, which the page lookup does
 * not follow), and -EBUSY for one another call has taken off the LRU:
 * with movers side by side, before a move has seen a huge page and cut
 * its calls at their blocks' edges (huge_block_end), a block split
 * between two calls gave one of them up to 512 such pages. In the guest's
 * compete runs they were 0-2,620 pages a move, counted as failed and
 * left for a later look. Looked up now: one on its destination was moved
 * whole with its huge page by the other call (counted moved, and the
 * move's calls end at blocks' edges from here); one still elsewhere gets
 * one more call, from the top address down like the others, whose
 * failures are final, unless the move is to stop (its budget or the rate
 * spent, the daemon stopping): then it fails as it did; one gone
 * (-EFAULT, -ENOENT) fails with what the lookup says. @give_up (a call
 * of the chunk failed whole): all of them fail as they did, unlooked at.
 */
static int retry_failed(struct move_state *ms, uint64_t page_bytes, bool give_up)
{
	struct np_actuator *act = ms->act;
	struct lane *lane = ms->lane;
	unsigned n = ms->nr_again, left = 0;
	uint64_t found = 0;
	struct np_page_plan plan;
	int err;

	ms->nr_again = 0;
	if (!n)
		return 0;
	qsort(ms->again, n, sizeof(*ms->again), by_address_down);
	for (unsigned i = 0; i < n; i++)
		lane->pages[i] = ms->again[i].page;
	if (!give_up &&
	    act->sys->move_pages(act->sys->data, ms->pid, n, lane->pages, NULL, lane->status) < 0)
		give_up = true;
	if (!give_up) {
		np_stats_add_pages_queried(act->stats, n);
		ms->res->pages_queried += n;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct again *a = &ms->again[i];
		int now = give_up ? a->status : lane->status[i];

		if (now == a->dst) {
			np_stats_add_migrated(act->stats, a->src, a->dst, 1, page_bytes);
			found++;
			continue;
		}
		if (now < 0 || ms->stop) {
			np_stats_add_page_failures(act->stats, now < 0 ? now : a->status, 1);
			ms->res->pages_failed++;
			continue;
		}
		/* Kept in order, over what was read: left <= i. */
		lane->pages[left] = a->page;
		lane->status[left] = now;
		lane->nodes[left] = a->dst;
		left++;
	}
	if (found) {
		uint64_t bytes = found * page_bytes;

		ms->huge_seen = true;
		ms->res->pages_moved += found;
		ms->res->bytes_moved += bytes;
		/* Moved by a call whose grant counted only its own pages:
		 * they take from the rate's bucket (what it holds) and the
		 * budget now. */
		rate_take(act, bytes);
		if (ms->budget != UINT64_MAX)
			ms->budget -= bytes < ms->budget ? bytes : ms->budget;
	}
	if (!left)
		return 0;
	err = np_page_plan_build(lane->pages, lane->status, lane->nodes, false, left, left, &plan);
	if (err) {
		np_stats_add_page_failures(act->stats, -EAGAIN, left);
		ms->res->pages_failed += left;
		return 0;
	}
	ms->last_try = true;
	err = move_plan(ms, &plan, page_bytes);
	ms->last_try = false;
	np_page_plan_clear(&plan);
	return err;
}

/* Where @n pages from the lane's pages are, into its status; the chunk
 * size adapts to the call time like the moves. Returns 0 or -errno. */
static int look_up(struct move_state *ms, unsigned n)
{
	struct np_actuator *act = ms->act;
	struct lane *lane = ms->lane;
	uint64_t t0 = now(act), elapsed;
	long r = act->sys->move_pages(act->sys->data, ms->pid, n, lane->pages, NULL, lane->status);

	elapsed = now(act) - t0;
	if (r < 0)
		return (int)r;
	if (n >= lane->model.query_pages / 2)
		lane->model.query_pages =
		    np_batch_size_next(lane->model.query_pages,
				       elapsed * lane->model.query_pages / n, act->batch_target_ns);
	np_stats_add_pages_queried(act->stats, n);
	ms->res->pages_queried += n;
	return 0;
}

/*
 * Look up and move the pages of one VMA, chunk by chunk, from its top
 * address down. A thread that touches a page while a call moves it waits
 * until the page is copied: a whole 2 MiB for a huge page. Most threads
 * sweep their memory upward; moved upward too, the page after the one a
 * thread waited on is often the next one a mover takes, and the thread
 * waits again, page after page, in step with the movers. Moved downward,
 * a sweep meets the movers once. In the 2-node guest (a 2-thread task's
 * 336 MiB moved with every CPU busy, 3 rounds), the task's slowest pass
 * was 170-194 ms upward against 94-130 downward (50-69 ms with no placer),
 * and passes of 100 ms or more fell from 17 to 4; on 4 nodes of one CPU,
 * where the wait is for a mover that shares its CPU, going down gained
 * nothing (docs/benchmarks-repeated.md).
 *
 * A chunk's low end is put on a huge page's block boundary when the range
 * goes on below it: a dense chunk (no lookup) that ended inside a block
 * would leave the rest of a huge page moved whole to the next chunk, which
 * would pass those pages again and count them as moved twice. The early
 * stop at numa_maps' count leaves out the bottom of a range, not its top:
 * a range whose misplaced pages are low is looked up from the top all the
 * same, which costs lookups, not moves.
 */
static int move_range(struct move_state *ms, const struct candidate *c)
{
	uint64_t found = 0;

	/* Stop once numa_maps' count is found: the rest of the range is what
	 * it said was already in place. */
	for (uint64_t top = c->end;
	     top > c->start && !ms->stop && found < c->misplaced && !stop_requested(ms);) {
		/* A dense range has no lookup to keep short: its chunks are as
		 * big as the scratch (lookups start at a quarter of it), and
		 * the movers wait for each other's last call at a chunk's end
		 * less often. */
		unsigned most = c->dense_src >= 0 ? QUERY_PAGES : ms->lane->model.query_pages;
		uint64_t left = (top - c->start) / c->page_bytes;
		unsigned n = left < most ? (unsigned)left : most;
		uint64_t low = top - (uint64_t)n * c->page_bytes;
		struct np_page_plan plan;
		int err;

		if (!n)
			break;
		if (low > c->start) {
			uint64_t block = (low + HUGE_BLOCK_BYTES - 1) / HUGE_BLOCK_BYTES * HUGE_BLOCK_BYTES;

			if (block < top)
				n = (unsigned)((top - block) / c->page_bytes);
		}
		for (unsigned i = 0; i < n; i++)
			ms->lane->pages[i] = (void *)(uintptr_t)(top - (i + 1) * c->page_bytes);
		top -= n * c->page_bytes;
		/* numa_maps said where each page of a dense range is; one
		 * that has gone since fails its move alone. */
		for (unsigned i = 0; c->dense_src >= 0 && i < n; i++)
			ms->lane->status[i] = c->dense_src;
		err = c->dense_src >= 0 ? 0 : look_up(ms, n);
		if (err)
			return err;
		/* One batch per destination: move_plan cuts them to the call
		 * size, at a huge page block's edge once it saw huge pages
		 * (huge_block_end). */
		err = np_page_plan_build(ms->lane->pages, ms->lane->status, &c->target, true, n, n,
					 &plan);
		if (err)
			return err;
		ms->res->pages_misplaced += plan.nr_pages;
		found += plan.nr_pages;
		err = move_plan(ms, &plan, c->page_bytes);
		np_page_plan_clear(&plan);
		if (err)
			return err;
	}
	return 0;
}

/* The whole misplaced set in one migrate_pages call, when it is small
 * enough to stay within one batch's time (see the figures at the top). */
static bool whole_task_fits(const struct np_actuator *act, const struct collect *col,
			    const struct move_state *ms, const struct np_task_memory *mem)
{
	uint64_t pages = col->misplaced_bytes / 4096, ns_per_page = ms->lane->model.ns_per_page;

	if (!act->allow_migrate_pages || !ns_per_page || col->sparse_bytes ||
	    col->misplaced_bytes > ms->budget || pages * ns_per_page > act->batch_target_ns)
		return false;
	/* migrate_pages moves everything on the nodes it is given: memory
	 * under the user's own policy too, and, with CAP_SYS_NICE, pages
	 * other tasks map. Only where the sources hold neither. */
	for (unsigned node = 0; node < NP_MAX_NODES; node++)
		if (col->src_pages[node] && np_task_memory_unmovable_on(mem, (int)node))
			return false;
	return true;
}

static int migrate_whole(struct move_state *ms, const struct collect *col)
{
	struct np_actuator *act = ms->act;
	struct np_nodeset from, to;
	uint64_t granted, t0, elapsed, pages = 0, not_moved;
	long r;

	granted = rate_take(act, col->misplaced_bytes);
	if (granted < col->misplaced_bytes) {
		rate_refund(act, granted);
		return 1; /* not now: fall back to batches, which can move part */
	}
	np_nodeset_zero(&from);
	np_nodeset_zero(&to);
	np_nodeset_set(&to, (unsigned)ms->target);
	for (unsigned node = 0; node < NP_MAX_NODES; node++)
		if (col->src_pages[node]) {
			np_nodeset_set(&from, node);
			pages += col->src_pages[node];
		}
	t0 = now(act);
	r = act->sys->migrate_pages(act->sys->data, ms->pid, &from, &to);
	elapsed = now(act) - t0;
	if (r < 0) {
		rate_refund(act, granted);
		return (int)r;
	}
	np_stats_add_migrate_call(act->stats, NP_CALL_MIGRATE_PAGES, elapsed);
	ms->res->calls++;
	ms->res->used_migrate_pages = true;
	ms->res->pages_misplaced += pages;
	not_moved = (uint64_t)r < pages ? (uint64_t)r : pages;
	/* migrate_pages says only how many stayed, not from where: numa_maps
	 * counts are spread over the sources in proportion. */
	for (unsigned node = 0; node < NP_MAX_NODES; node++) {
		uint64_t p = col->src_pages[node], stayed, bytes;

		if (!p)
			continue;
		stayed = not_moved * p / pages;
		bytes = (p - stayed) * (col->src_bytes[node] / p);
		np_stats_add_migrated(act->stats, (int)node, ms->target, p - stayed, bytes);
		ms->res->pages_moved += p - stayed;
		ms->res->bytes_moved += bytes;
	}
	if (not_moved) {
		np_stats_add_page_failures(act->stats, -EAGAIN, not_moved);
		ms->res->pages_failed += not_moved;
	}
	rate_refund(act, granted - ms->res->bytes_moved);
	if (pages)
		ms->lane->model.ns_per_page = elapsed / pages;
	return 0;
}

/* Dry run: what numa_maps counts say would move, within the same budget. */
static void record_moves(struct move_state *ms, const struct collect *col)
{
	struct np_actuator *act = ms->act;

	for (unsigned node = 0; node < NP_MAX_NODES; node++) {
		uint64_t pages = col->src_pages[node], bytes = col->src_bytes[node], granted;
		struct np_action_record rec = {.kind = NP_RECORD_PAGES};

		if (!pages)
			continue;
		ms->res->pages_misplaced += pages;
		if (bytes > ms->budget) {
			pages = pages * ms->budget / bytes;
			bytes = ms->budget;
		}
		granted = rate_take(act, bytes);
		if (granted < bytes) {
			pages = pages * granted / bytes;
			ms->res->budget_exhausted = true;
		}
		if (pages < col->src_pages[node])
			ms->res->budget_exhausted = true;
		bytes = granted;
		if (ms->budget != UINT64_MAX)
			ms->budget -= bytes;
		if (!pages)
			continue;
		rec.pid = ms->pid;
		rec.start_ticks = ms->start_ticks;
		rec.from = (int)node;
		rec.to = ms->target;
		rec.pages = pages;
		rec.bytes = bytes;
		keep_record(act, &rec);
		ms->res->pages_moved += pages;
		ms->res->bytes_moved += bytes;
	}
}

/*
 * A move in three steps. The first and last run in the caller's thread: they
 * read files, log and keep the task's actuator state. The calls in between
 * touch only the move's own state, the actuator's scratch and model, the
 * rate (under its lock) and the stats (which lock): np_actuator_move_start()
 * runs them on a thread of their own while the caller goes on.
 */
struct move_job {
	struct np_actuator *act;
	struct move_state ms;
	struct np_move_result res;
	struct collect col;
	struct task_dir td;
	bool whole; /* try one migrate_pages call first */
	struct np_move_area *areas; /* NULL: the whole task to ms.target */
	unsigned nr_areas;
	int err;    /* of the calls */
	uint64_t t0;
	unsigned movers; /* np_movers_for_load's when it started */
	bool threaded; /* carried out by @thread */
	pthread_t thread;
	_Atomic bool ended; /* its last call is made */
};

/* The checks, the task's maps, the candidates. Returns 0 with the job
 * ready for its calls, 1 when it ended before any (dry run, nothing to
 * move: @job->res holds it), or -errno (nothing is left open). */
static int move_prepare(struct move_job *job, struct np_act_task *at, const struct np_task *task,
			const struct np_task_memory *mem)
{
	struct np_actuator *act = job->act;
	struct move_state *ms = &job->ms;
	int err;

	if (job->areas) {
		if (act->dry)
			return -EOPNOTSUPP; /* no lookups in a dry run */
		for (unsigned a = 0; a < job->nr_areas; a++) {
			int node = job->areas[a].node;

			if (node < 0 || node >= NP_MAX_NODES ||
			    job->areas[a].start >= job->areas[a].end ||
			    (a && job->areas[a].start < job->areas[a - 1].end))
				return -EINVAL;
			if (task->has_details && !np_task_may_use_node(task, node))
				return -EACCES;
		}
	} else if (ms->target < 0 || ms->target >= NP_MAX_NODES) {
		return -EINVAL;
	}
	if (task->kthread || (task->flags & NP_PF_KTHREAD)) {
		np_stats_add_skip(act->stats, NP_REASON_KERNEL_THREAD);
		return -EPERM;
	}
	/* Outside Mems_allowed the kernel would refuse each page; outside the
	 * cgroup's cpuset.mems it is not ours to put them. */
	if (!job->areas && task->has_details && !np_task_may_use_node(task, ms->target))
		return -EACCES;
	/* With not even a page of the rate left, reading the task's maps
	 * would be wasted. */
	if (act->rate.rate) {
		uint64_t peek = rate_take(act, 4096);

		rate_refund(act, peek);
		if (peek < 4096) {
			np_stats_add_skip(act->stats, NP_REASON_RATE_LIMIT);
			return -EAGAIN;
		}
	}
	err = action_begin(act, at, task, &job->td);
	if (err)
		return err;
	ms->pidfd = at->pidfd;
	err = collect_candidates(act, &job->td, mem, ms->target, job->areas, job->nr_areas,
				 &job->col);
	job->res.bytes_skipped_sparse = job->col.sparse_bytes;
	if (!err && act->dry) {
		record_moves(ms, &job->col);
		return 1;
	}
	job->whole = !err && !job->areas && job->col.misplaced_bytes &&
		     whole_task_fits(act, &job->col, ms, mem);
	job->err = err;
	return err ? 1 : 0;
}

/* The calls: no file read, no log line. */
static void move_run(struct move_job *job)
{
	struct move_state *ms = &job->ms;
	int err = 1;

	job->res.movers = 1;
	if (job->whole)
		err = migrate_whole(ms, &job->col);
	if (err == 1) {
		struct mover_pool pool;

		err = 0;
		ms->pool = pool_start(&pool, job->movers) ? &pool : NULL;
		job->res.movers = ms->pool ? ms->pool->n : 1;
		for (unsigned i = 0; i < job->col.nr && !err && !ms->stop; i++)
			err = move_range(ms, &job->col.c[i]);
		if (ms->pool)
			pool_stop(ms->pool);
		ms->pool = NULL;
		free(ms->again);
		ms->again = NULL;
		ms->again_cap = 0;
	}
	job->err = err;
}

/* The task checked again, the backoff kept, the result. Returns as
 * np_actuator_move_pages(). */
static int move_finish(struct move_job *job, struct np_act_task *at, const struct np_task *task,
		       struct np_move_result *result)
{
	struct np_actuator *act = job->act;
	struct np_move_result *res = &job->res;
	int err = job->err;

	if (res->budget_exhausted && !res->pages_moved && !err)
		np_stats_add_skip(act->stats, NP_REASON_RATE_LIMIT);
	/* No progress at all while pages were there to move is a failure to
	 * back off from, as is any error. */
	err = action_end(act, at, task, &job->td, err,
			 res->pages_misplaced && !res->pages_moved && !res->budget_exhausted,
			 res->used_migrate_pages ? NP_CALL_MIGRATE_PAGES : NP_CALL_MOVE_PAGES);
	/* What its calls learnt is the next move's start. */
	act->model = job->ms.lane->model;
	res->elapsed_ns = now(act) - job->t0;
	if (!err && res->budget_exhausted && !res->pages_moved)
		err = -EAGAIN;
	*result = *res;
	return err;
}

/* Whether a move of @pid (started at @start_ticks) is in flight. */
static struct move_job *find_job(const struct np_actuator *act, int pid, uint64_t start_ticks)
{
	for (unsigned i = 0; i < NP_MOVES_MAX; i++) {
		struct move_job *job = act->lanes[i].job;

		if (job && job->ms.pid == pid && job->ms.start_ticks == start_ticks)
			return job;
	}
	return NULL;
}

/* A move of @task on a free lane. -EBUSY (a skip, "migration-busy"): as
 * many moves are in flight as may be, or one of this task; -ENOMEM. */
static int job_new(struct np_actuator *act, const struct np_task *task, int target_node,
		   uint64_t max_bytes, struct move_job **out)
{
	struct lane *lane = NULL;
	struct move_job *job;
	unsigned busy = 0, movers;

	*out = NULL;
	for (unsigned i = 0; i < NP_MOVES_MAX; i++) {
		if (act->lanes[i].job)
			busy++;
		else if (!lane && i < act->moves)
			lane = &act->lanes[i];
	}
	if (!lane || busy >= act->moves || find_job(act, task->pid, task->start_ticks)) {
		np_stats_add_skip(act->stats, NP_REASON_MOVING_OTHER);
		return -EBUSY;
	}
	/* The scratch for the movers set was made with the lane; one for
	 * more, out of memory, falls back to those. */
	movers = np_movers_for_load(act->movers, act->others_busy, act->cpus, NP_MOVERS_MAX);
	if (movers > act->movers && lane_ready(lane, movers) < 0)
		movers = act->movers;
	if (lane_ready(lane, movers) < 0 || !(job = calloc(1, sizeof(*job))))
		return -ENOMEM;
	act->moved_since_load = true;
	job->act = act;
	job->td.fd = -1;
	job->t0 = now(act);
	job->movers = movers;
	job->ms = (struct move_state){
	    .act = act,
	    .lane = lane,
	    .pid = task->pid,
	    .pidfd = -1,
	    .start_ticks = task->start_ticks,
	    .target = target_node,
	    .budget = max_bytes ? max_bytes : UINT64_MAX,
	    .res = &job->res,
	};
	lane->model = act->model;
	lane->job = job;
	*out = job;
	return 0;
}

static void job_free(struct move_job *job)
{
	if (!job)
		return;
	if (job->threaded)
		pthread_join(job->thread, NULL);
	if (job->td.fd >= 0)
		close(job->td.fd);
	if (job->threaded && job->ms.pidfd >= 0)
		close(job->ms.pidfd);
	collect_free(&job->col);
	free(job->areas);
	job->ms.lane->job = NULL;
	free(job);
}

int np_actuator_move_pages(struct np_actuator *act, struct np_act_task *at,
			   const struct np_task *task, const struct np_task_memory *mem,
			   int target_node, uint64_t max_bytes, struct np_move_result *result)
{
	struct move_job *job;
	int err;

	memset(result, 0, sizeof(*result));
	err = job_new(act, task, target_node, max_bytes, &job);
	if (err)
		return err;
	err = move_prepare(job, at, task, mem);
	if (err == 0)
		move_run(job);
	if (err >= 0)
		err = move_finish(job, at, task, result);
	job_free(job);
	return err;
}

static void *job_thread(void *arg)
{
	struct move_job *job = arg;
	uint64_t one = 1;

	move_run(job);
	atomic_store(&job->ended, true);
	if (write(job->act->job_fd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow at one write per move. */
	}
	return NULL;
}

static int start_job(struct np_act_task *at, const struct np_task *task,
		     const struct np_task_memory *mem, struct move_job *job,
		     struct np_move_result *result);

int np_actuator_move_start(struct np_actuator *act, struct np_act_task *at,
			   const struct np_task *task, const struct np_task_memory *mem,
			   int target_node, uint64_t max_bytes, struct np_move_result *result)
{
	struct move_job *job;
	int err;

	memset(result, 0, sizeof(*result));
	if (act->dry)
		return np_actuator_move_pages(act, at, task, mem, target_node, max_bytes, result);
	err = job_new(act, task, target_node, max_bytes, &job);
	return err ? err : start_job(at, task, mem, job, result);
}

int np_actuator_move_areas_start(struct np_actuator *act, struct np_act_task *at,
				 const struct np_task *task, const struct np_task_memory *mem,
				 const struct np_move_area *areas, unsigned nr,
				 uint64_t max_bytes, struct np_move_result *result)
{
	struct move_job *job;
	int err;

	memset(result, 0, sizeof(*result));
	if (!nr)
		return -EINVAL;
	err = job_new(act, task, -1, max_bytes, &job);
	if (err)
		return err;
	if (!(job->areas = malloc(nr * sizeof(*areas)))) {
		job_free(job);
		return -ENOMEM;
	}
	memcpy(job->areas, areas, nr * sizeof(*areas));
	job->nr_areas = nr;
	return start_job(at, task, mem, job, result);
}

/* Prepare @job (taken over) and run its calls on a thread of their own,
 * or here when none can be had. */
static int start_job(struct np_act_task *at, const struct np_task *task,
		     const struct np_task_memory *mem, struct move_job *job,
		     struct np_move_result *result)
{
	int err = move_prepare(job, at, task, mem);

	if (err < 0) {
		job_free(job);
		return err;
	}
	if (err == 0) {
		/* The task's state may be released while the calls run: they
		 * poll a pidfd of their own. */
		int pidfd = at->pidfd >= 0 ? fcntl(at->pidfd, F_DUPFD_CLOEXEC, 0) : -1;

		if (at->pidfd < 0 || pidfd >= 0) {
			job->ms.pidfd = pidfd;
			job->threaded = start_helper(&job->thread, job_thread, job);
			if (job->threaded)
				return 1;
			if (pidfd >= 0)
				close(pidfd);
			job->ms.pidfd = at->pidfd;
		}
		/* No thread to spare: the calls are made here. */
		move_run(job);
	}
	err = move_finish(job, at, task, result);
	job_free(job);
	return err;
}

int np_actuator_move_fd(const struct np_actuator *act)
{
	return act->job_fd;
}

/* The move np_actuator_moving() names: the first whose calls are done,
 * else the first in flight. */
static const struct move_job *named_job(const struct np_actuator *act)
{
	const struct move_job *first = NULL;

	for (unsigned i = 0; i < NP_MOVES_MAX; i++) {
		const struct move_job *job = act->lanes[i].job;

		if (job && atomic_load(&job->ended))
			return job;
		if (job && !first)
			first = job;
	}
	return first;
}

bool np_actuator_moving(const struct np_actuator *act, int *pid, uint64_t *start_ticks,
			int *target_node)
{
	const struct move_job *job = named_job(act);

	if (!job)
		return false;
	if (pid)
		*pid = job->ms.pid;
	if (start_ticks)
		*start_ticks = job->ms.start_ticks;
	if (target_node)
		*target_node = job->ms.target;
	return true;
}

bool np_actuator_task_moving(const struct np_actuator *act, int pid, uint64_t start_ticks)
{
	return find_job(act, pid, start_ticks) != NULL;
}

bool np_actuator_move_room(const struct np_actuator *act)
{
	unsigned busy = 0;

	for (unsigned i = 0; i < NP_MOVES_MAX; i++)
		busy += act->lanes[i].job != NULL;
	return busy < act->moves;
}

bool np_actuator_move_ended(const struct np_actuator *act)
{
	const struct move_job *job = named_job(act);

	return job && atomic_load(&job->ended);
}

int np_actuator_move_finish(struct np_actuator *act, int pid, uint64_t start_ticks,
			    struct np_act_task *at, struct np_move_result *result)
{
	struct move_job *job = find_job(act, pid, start_ticks);
	struct np_act_task gone;
	struct np_task task = {0};
	uint64_t count;
	int err;

	memset(result, 0, sizeof(*result));
	if (!job)
		return -ENOENT;
	pthread_join(job->thread, NULL);
	job->threaded = false;
	/* Drained for every move whose calls are done: the caller finishes
	 * each of those (np_actuator_move_ended). */
	if (read(act->job_fd, &count, sizeof(count)) < 0) {
		/* Already read, or never written: nothing to drain. */
	}
	task.pid = job->ms.pid;
	task.start_ticks = job->ms.start_ticks;
	/* A task forgotten meanwhile is checked through the job's pidfd;
	 * action_end() then closes it with the state. */
	if (!at) {
		gone = (struct np_act_task){.tracked = true, .pidfd = job->ms.pidfd};
		job->ms.pidfd = -1;
		at = &gone;
	} else if (job->ms.pidfd >= 0) {
		close(job->ms.pidfd);
		job->ms.pidfd = -1;
	}
	err = move_finish(job, at, &task, result);
	if (at == &gone)
		np_act_task_release(&gone);
	job_free(job);
	return err;
}

/* ---- Affinity ---- */

void np_affinity_result_clear(struct np_affinity_result *result)
{
	free(result->threads);
	memset(result, 0, sizeof(*result));
}

/* The thread's mask from Cpus_allowed_list, for roots that are not the live
 * machine (fixtures), where no affinity call can be made. */
static int read_status_cpus(struct np_actuator *act, const struct task_dir *td, int tid,
			    struct np_bitmap *cpus)
{
	static const char key[] = "\nCpus_allowed_list:";
	char path[64], *buf, *line;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "task/%d/status", tid);
	err = np_ctx_read_file_at(act->ctx, td->fd, td->path, path, 1u << 20, &buf, &len);
	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	line = strstr(buf, key);
	if (!line) {
		err = -EINVAL;
	} else {
		line += sizeof(key) - 1;
		line += strspn(line, " \t");
		err = np_bitmap_parse_list(cpus, line, strcspn(line, "\n"));
	}
	if (err)
		np_log(act->ctx, LOG_ERR, "%s/%s/%s: no valid Cpus_allowed_list line",
		       np_ctx_root(act->ctx), td->path, path);
	free(buf);
	return err;
}

static int get_thread_cpus(struct np_actuator *act, const struct task_dir *td, int tid,
			   struct np_bitmap *cpus)
{
	int err;

	if (!np_ctx_is_live(act->ctx))
		return read_status_cpus(act, td, tid, cpus);
	err = act->sys->get_affinity(act->sys->data, tid, cpus);
	return err == -ESRCH || err == -ENOENT ? -ESRCH : err;
}

static int add_thread(struct np_affinity_result *result, unsigned *cap, int tid)
{
	struct np_thread_affinity *th;

	if (result->nr == *cap) {
		unsigned bigger_cap = *cap ? *cap * 2 : 8;
		struct np_thread_affinity *bigger =
		    realloc(result->threads, bigger_cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		result->threads = bigger;
		*cap = bigger_cap;
	}
	th = &result->threads[result->nr++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	return 0;
}

/* One thread: read, narrow, set, read back. Fills @th's outcome. */
static void narrow_thread(struct np_actuator *act, const struct np_act_task *at,
			  const struct np_task *task, const struct task_dir *td,
			  const struct np_bitmap *from, const struct np_bitmap *node_cpus,
			  struct np_thread_affinity *th)
{
	struct np_bitmap wanted;
	uint64_t start, start_after;
	unsigned long flags;
	int err;

	err = read_thread_identity(act, td, th->tid, &start, &flags);
	th->start_ticks = start;
	if (!err && (flags & (NP_PF_KTHREAD | NP_PF_NO_SETAFFINITY))) {
		th->outcome = NP_THREAD_NO_SETAFFINITY;
		np_stats_add_skip(act->stats, NP_REASON_NO_SETAFFINITY);
		return;
	}
	if (!err)
		err = get_thread_cpus(act, td, th->tid, &th->before);
	if (err)
		goto failed;
	if (from) {
		if (!np_bitmap_equal(&th->before, from)) {
			th->outcome = NP_THREAD_OTHER_MASK;
			th->effective = th->before;
			return;
		}
		wanted = *node_cpus;
		if (np_bitmap_equal(&wanted, &th->before)) {
			th->outcome = NP_THREAD_UNCHANGED;
			th->effective = th->before;
			return;
		}
	} else
		switch (np_affinity_narrow(&th->before, node_cpus, &wanted)) {
		case NP_NARROW_EMPTY:
			th->outcome = NP_THREAD_EMPTY;
			th->effective = th->before;
			np_stats_add_skip(act->stats, NP_REASON_AFFINITY_EMPTY);
			np_log(act->ctx, LOG_NOTICE,
			       "pid %d thread %d: no CPU of the target node in its affinity; left "
			       "alone",
			       task->pid, th->tid);
			return;
		case NP_NARROW_UNCHANGED:
			th->outcome = NP_THREAD_UNCHANGED;
			th->effective = th->before;
			return;
		case NP_NARROW_CHANGED:
			break;
		}
	if (act->dry) {
		struct np_action_record rec = {.kind = NP_RECORD_AFFINITY,
					       .pid = task->pid,
					       .start_ticks = task->start_ticks,
					       .tid = th->tid,
					       .cpus = wanted};

		th->outcome = NP_THREAD_NARROWED;
		th->effective = wanted;
		keep_record(act, &rec);
		return;
	}
	/* The call names the thread by its id alone. Checked just before it:
	 * the process is alive, so its threads' ids are its own. */
	if (pidfd_exited(at->pidfd)) {
		err = -ESRCH;
		goto failed;
	}
	err = act->sys->set_affinity(act->sys->data, th->tid, &wanted);
	if (!err)
		err = get_thread_cpus(act, td, th->tid, &th->effective);
	/* A thread id is reused like a pid: the thread set must be the one
	 * checked, still under the task's directory with the same start time,
	 * in a process still alive. If not, the id changed hands in between
	 * and the mask went to whoever took it: counted as vanished, since the
	 * mask that thread had is not known and cannot be given back. */
	if (!err) {
		err = read_thread_identity(act, td, th->tid, &start_after, NULL);
		if (!err && (start_after != start || pidfd_exited(at->pidfd)))
			err = -ESRCH;
	}
	if (err)
		goto failed;
	th->outcome = NP_THREAD_NARROWED;
	np_stats_add_affinity_set(act->stats, 1);
	return;
failed:
	th->err = err;
	th->outcome = err == -ESRCH ? NP_THREAD_VANISHED : NP_THREAD_FAILED;
	if (err != -ESRCH)
		np_stats_add_failure(act->stats, NP_CALL_AFFINITY, err);
}

static bool listed(const int *tids, unsigned nr, long tid)
{
	for (unsigned i = 0; i < nr; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

int np_actuator_set_affinity(struct np_actuator *act, struct np_act_task *at,
			     const struct np_task *task, const struct np_bitmap *from,
			     const struct np_bitmap *node_cpus, struct np_affinity_result *result)
{
	return np_actuator_set_threads_affinity(act, at, task, NULL, 0, true, from, node_cpus,
						result);
}

int np_actuator_set_threads_affinity(struct np_actuator *act, struct np_act_task *at,
				     const struct np_task *task, const int *tids, unsigned nr,
				     bool except, const struct np_bitmap *from,
				     const struct np_bitmap *node_cpus,
				     struct np_affinity_result *result)
{
	struct task_dir td;
	unsigned cap = 0;
	struct dirent *de;
	DIR *dir;
	int fd, err = 0;

	memset(result, 0, sizeof(*result));
	if (task->kthread || (task->flags & NP_PF_KTHREAD)) {
		np_stats_add_skip(act->stats, NP_REASON_KERNEL_THREAD);
		return -EPERM;
	}
	if (task->flags & NP_PF_NO_SETAFFINITY) {
		np_stats_add_skip(act->stats, NP_REASON_NO_SETAFFINITY);
		return -EPERM;
	}
	err = action_begin(act, at, task, &td);
	if (err)
		return err;
	fd = np_ctx_open_at(act->ctx, td.fd, td.path, "task", O_RDONLY | O_DIRECTORY);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		err = fd >= 0 ? -errno : fd;
		if (fd >= 0)
			close(fd);
		if (np_is_vanished_error(err))
			err = -ESRCH;
		return action_end(act, at, task, &td, err, true, NP_CALL_AFFINITY);
	}
	while ((de = readdir(dir))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0 || end == de->d_name || listed(tids, nr, tid) == except)
			continue;
		err = add_thread(result, &cap, (int)tid);
		if (err)
			break;
		narrow_thread(act, at, task, &td, from, node_cpus,
			      &result->threads[result->nr - 1]);
		result->counts[result->threads[result->nr - 1].outcome]++;
	}
	closedir(dir);
	return action_end(act, at, task, &td, err, result->counts[NP_THREAD_FAILED] > 0,
			  NP_CALL_AFFINITY);
}

int np_actuator_thread_cpus(struct np_actuator *act, int pid, int tid, struct np_bitmap *cpus)
{
	struct task_dir td;
	int err;

	if (np_ctx_is_live(act->ctx)) {
		err = act->sys->get_affinity(act->sys->data, tid, cpus);
		return err == -ESRCH || err == -ENOENT ? -ESRCH : err;
	}
	snprintf(td.path, sizeof(td.path), "proc/%d", pid);
	td.fd = np_ctx_open(act->ctx, td.path, O_RDONLY | O_DIRECTORY);
	if (td.fd < 0)
		return np_is_vanished_error(td.fd) ? -ESRCH : td.fd;
	err = read_status_cpus(act, &td, tid, cpus);
	close(td.fd);
	return err;
}

int np_actuator_where(struct np_actuator *act, int pid, unsigned n, void **pages, int *status)
{
	long r = act->sys->move_pages(act->sys->data, pid, n, pages, NULL, status);

	if (r >= 0)
		np_stats_add_pages_queried(act->stats, n);
	return r < 0 ? (int)r : 0;
}
