/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "context.h"
#include "memory.h"
#include "pace.h"
#include "pageplan.h"
#include "stats.h"
#include "task.h"

/*
 * Carrying out placement decisions: moving a task's pages to a node and
 * narrowing its threads' CPU affinity. Two implementations behind one
 * interface: the real one makes the system calls, the dry-run one reads the
 * same files, makes no call that changes anything and records what it would
 * have done.
 *
 * Every action names a task by (pid, start_ticks) and comes with the
 * actuator's state of it (struct np_act_task, kept in the caller's per-task
 * table). A pidfd is opened when a task is first acted on; before each
 * action the start time is checked again and the pidfd polled, and after it
 * the pidfd is polled once more: a task that exited in between may have had
 * its pid reused, so the action is counted as failed (-ESRCH) rather than
 * reported as done.
 */

/* The actuator's state of one task. */
struct np_act_task {
	bool tracked; /* identity checked and pidfd opened */
	int pidfd;    /* -1: none (dry run, fixture root, or a kernel before 5.3) */
	struct np_backoff backoff;
};

/* Start a state for a task never acted on. */
void np_act_task_init(struct np_act_task *at);

/* Close its pidfd; the state starts afresh. */
void np_act_task_release(struct np_act_task *at);

/* The calls the actuator makes, so tests can stand in for a kernel with more
 * nodes than the machine they run on. All return 0 or -errno, except
 * move_pages, which returns the number of pages not moved (>= 0) or -errno,
 * and fills @status as move_pages(2) does. */
struct np_actuator_sys {
	long (*move_pages)(void *data, int pid, unsigned long count, void **pages, const int *nodes,
			   int *status);
	long (*migrate_pages)(void *data, int pid, const struct np_nodeset *from,
			      const struct np_nodeset *to);
	int (*get_affinity)(void *data, int tid, struct np_bitmap *cpus);
	int (*set_affinity)(void *data, int tid, const struct np_bitmap *cpus);
	void *data;
};

/* The kernel's calls (libnuma and sched_*affinity). */
const struct np_actuator_sys *np_actuator_sys_kernel(void);

/* A monotonic clock in nanoseconds. */
typedef uint64_t (*np_clock_fn)(void *data);

struct np_actuator_params {
	/* Global page migration rate in MiB/s; 0 = unlimited. The daemon's
	 * limit, and its default, are the configuration's migrate_rate_mb_s,
	 * which the engine passes: np_actuator_params_init leaves 0. */
	uint64_t migrate_rate_mb_s;
	uint64_t batch_target_ms; /* aim for move_pages calls this long; 0 = 20 */
	unsigned batch_pages;	  /* first batch size before any measurement; 0 = 512 */
	uint64_t backoff_min_ms;  /* first wait after a failed action; 0 = 1000 */
	uint64_t backoff_max_ms;  /* cap of the doubling; 0 = 300000 */
	bool allow_migrate_pages; /* small whole-task moves in one migrate_pages call */
	np_clock_fn clock;	  /* NULL: CLOCK_MONOTONIC */
	void *clock_data;
	const struct np_actuator_sys *sys; /* NULL: np_actuator_sys_kernel() */
	/* Asked before each lookup and each batch: true abandons the rest of
	 * the action, keeping what was moved counted (the daemon answers
	 * SIGTERM this way mid-action). NULL: never. */
	bool (*should_stop)(void *data);
	void *stop_data;
	/* move_pages calls in flight at once on one task's pages, each on its
	 * own batch (the configuration's migrate_threads); 0 or 1: one at a
	 * time, on the calling thread. A dry run makes one at a time. */
	unsigned movers;
	/* Moves of different tasks in flight at once (the configuration's
	 * migrate_tasks); 0: 1. A dry run makes one at a time. */
	unsigned moves;
};

/* The most movers an actuator takes. */
#define NP_MOVERS_MAX 8
/* The most moves in flight at once. */
#define NP_MOVES_MAX 8

/* Defaults for every field (the clock and calls are the real ones). */
void np_actuator_params_init(struct np_actuator_params *params);

struct np_actuator;

/* An actuator acting on the machine the context reads. @stats (not NULL)
 * receives every counter; both must outlive the actuator. A context that
 * does not read the live machine gives -EOPNOTSUPP. Returns 0 or -errno. */
int np_actuator_new_real(struct np_ctx *ctx, struct np_stats *stats,
			 const struct np_actuator_params *params, struct np_actuator **out);

/* A dry-run actuator: same checks, budget and accounting, no change made;
 * see np_actuator_records(). Works on fixture roots too. */
int np_actuator_new_dry(struct np_ctx *ctx, struct np_stats *stats,
			const struct np_actuator_params *params, struct np_actuator **out);

/* Set the global migration rate (a reload changes it), in MiB/s; 0 or too
 * large to count in bytes: unlimited. The budget starts again full, one
 * second's worth of the new rate, as for a new actuator. */
void np_actuator_set_rate(struct np_actuator *act, uint64_t migrate_rate_mb_s);

/* Set how many move_pages calls may be in flight at once on one task's
 * pages (a reload changes it; a move in flight keeps its own): 0 means 1,
 * more than NP_MOVERS_MAX means NP_MOVERS_MAX. -ENOMEM leaves the number
 * before. */
int np_actuator_set_movers(struct np_actuator *act, unsigned movers);

/* What the moves started from now on see of the machine: other threads
 * than the daemon's kept @others_busy of its @cpus online CPUs busy since
 * the last call. A move then gets np_movers_for_load() of the movers set:
 * more while the CPUs are busy, so that, sharing them, its calls still get
 * about that many CPUs. A reading taken while a move of ours ran (started
 * since the last call, or still running) is passed over, the one before
 * it standing: the others then got less than they wanted. Until the first
 * call, or with @cpus 0: the movers set. */
void np_actuator_set_load(struct np_actuator *act, double others_busy, unsigned cpus);

/* Set how many tasks' moves may be in flight at once (a reload changes
 * it; the moves in flight go on): 0 means 1, more than NP_MOVES_MAX means
 * NP_MOVES_MAX. */
void np_actuator_set_moves(struct np_actuator *act, unsigned moves);

/* Free; NULL is accepted. The tasks' states are the caller's. */
void np_actuator_free(struct np_actuator *act);

/* True for the dry-run implementation. */
bool np_actuator_is_dry(const struct np_actuator *act);

struct np_move_result {
	uint64_t pages_queried;	  /* pages whose node was looked up */
	uint64_t pages_misplaced; /* present pages found off the target node */
	uint64_t pages_moved;
	uint64_t bytes_moved;
	uint64_t pages_failed;	       /* left in place with a per-page error */
	uint64_t bytes_skipped_sparse; /* in ranges too sparse to look up page by page */
	unsigned calls;		       /* move_pages/migrate_pages calls that moved memory */
	unsigned movers; /* threads that made its calls (1: the moving thread; 0: none ran) */
	bool used_migrate_pages;
	bool budget_exhausted; /* stopped at max_bytes or the rate limit: more to do */
	uint64_t elapsed_ns;
};

/* The actions count their own skips in the stats (vanished, backoff,
 * rate_limit, kernel thread, no_setaffinity, affinity_empty): a caller
 * counting them from the return value would count them twice. */

/* Move the movable pages of @task that @mem (the tick's read of its
 * numa_maps) shows on other nodes to @target_node, at most @max_bytes (0: no
 * limit besides the global rate). Ranges come from /proc/PID/maps, which
 * walks no page tables; pages are looked up where a range is not wholly on
 * one node, and moved in batches; per-page errors are counted, not retried.
 * Returns 0 (also when some pages stayed: see @result), -ESRCH (gone,
 * reused, or exited during the action), -EAGAIN (backing off after earlier
 * failures, or no rate budget at all), -EPERM (kernel thread), -EACCES
 * (@target_node outside the task's allowed nodes), or another -errno. */
int np_actuator_move_pages(struct np_actuator *act, struct np_act_task *at,
			   const struct np_task *task, const struct np_task_memory *mem,
			   int target_node, uint64_t max_bytes, struct np_move_result *result);

/*
 * The same move, off the caller's thread: np_actuator_move_start() makes the
 * checks and reads the task's maps here, then hands the calls to a thread of
 * the actuator's own and returns 1 while they run; the caller goes on (its
 * loop ticks, serves metrics, answers SIGTERM through should_stop, which the
 * calls ask between batches). np_actuator_move_fd() becomes readable when
 * the calls of a move are done, and np_actuator_move_finish() ends it.
 * Moves of different tasks run at once, each with its own movers, up to
 * np_actuator_set_moves(); a start beyond that, or of a task whose move is
 * in flight, returns -EBUSY (a skip, "migration-busy"); the rate limit
 * holds across them all. A move that ends before its first call (an error, a
 * dry run, nothing to move) returns at once as np_actuator_move_pages()
 * would, @result filled. While moves are in flight the caller may set
 * affinity, change the rate and the numbers of movers and moves, and free
 * the actuator (which waits for the calls, and accounts nothing more).
 */
int np_actuator_move_start(struct np_actuator *act, struct np_act_task *at,
			   const struct np_task *task, const struct np_task_memory *mem,
			   int target_node, uint64_t max_bytes, struct np_move_result *result);

/* Part of a task's address space and the node its pages go to. */
struct np_move_area {
	uint64_t start, end;
	int node;
};

/*
 * A started move as np_actuator_move_start(), of the pages in @nr areas
 * (sorted by address, apart), each to its own node: where each page is,
 * a lookup says. Only what @mem counts movable is moved (a VMA under its
 * user's policy is left). np_actuator_moving() names node -1 for it. Not
 * in a dry run (-EOPNOTSUPP); -EINVAL for areas out of order or a node
 * out of range, -EACCES for a node the task may not use.
 */
int np_actuator_move_areas_start(struct np_actuator *act, struct np_act_task *at,
				 const struct np_task *task, const struct np_task_memory *mem,
				 const struct np_move_area *areas, unsigned nr,
				 uint64_t max_bytes, struct np_move_result *result);

/* An eventfd readable once a started move's calls are done (drained by
 * np_actuator_move_finish(), for every move whose calls are done); -1 for
 * a dry run. */
int np_actuator_move_fd(const struct np_actuator *act);

/* Whether a move is in flight; if so, of which task, to which node (-1:
 * areas): the first whose calls are done, else the first started. */
bool np_actuator_moving(const struct np_actuator *act, int *pid, uint64_t *start_ticks,
			int *target_node);

/* Whether a move of task @pid (started at @start_ticks) is in flight. */
bool np_actuator_task_moving(const struct np_actuator *act, int pid, uint64_t start_ticks);

/* Whether another move may start now. */
bool np_actuator_move_room(const struct np_actuator *act);

/* True once the calls of a move in flight are done: finishing the one
 * np_actuator_moving() names will not wait. */
bool np_actuator_move_ended(const struct np_actuator *act);

/* Wait for the calls of the move of @pid (started at @start_ticks) to end,
 * and end it as np_actuator_move_pages() would: the task checked again
 * through its directory and pidfd, @at's backoff kept. @at is the task's
 * state, or NULL when the caller has let it go meanwhile. Returns that
 * function's values, or -ENOENT with no such move in flight. */
int np_actuator_move_finish(struct np_actuator *act, int pid, uint64_t start_ticks,
			    struct np_act_task *at, struct np_move_result *result);

enum np_thread_outcome {
	NP_THREAD_NARROWED,   /* new mask set (or, dry, would be) */
	NP_THREAD_UNCHANGED,  /* already inside the node's CPUs */
	NP_THREAD_EMPTY,      /* no CPU of the node in its mask: left alone */
	NP_THREAD_OTHER_MASK, /* its mask is not the one to replace: someone else's, left alone */
	NP_THREAD_NO_SETAFFINITY, /* PF_NO_SETAFFINITY or kernel thread: left alone */
	NP_THREAD_VANISHED,	  /* exited while we looked */
	NP_THREAD_FAILED,	  /* a call failed: see err */
};

struct np_thread_affinity {
	int tid;
	enum np_thread_outcome outcome;
	int err;
	uint64_t start_ticks;	    /* the thread's own start time */
	struct np_bitmap before;    /* the mask it had */
	struct np_bitmap effective; /* read back after setting; dry: the mask it would get */
};

struct np_affinity_result {
	struct np_thread_affinity *threads;
	unsigned nr;
	unsigned counts[NP_THREAD_FAILED + 1]; /* threads per outcome */
};

/* Free the per-thread array and zero @result. */
void np_affinity_result_clear(struct np_affinity_result *result);

/* With @from NULL, narrow each thread of @task to its current mask
 * intersected with @cpus: a mask a user or cpuset set is never widened, and
 * a thread whose intersection is empty is left alone and reported. With
 * @from, replace exactly: each thread whose mask is @from gets @cpus, and
 * any other is left alone (NP_THREAD_OTHER_MASK): that is how the daemon
 * narrows a task nobody pinned and gives the mask back, never touching a
 * mask someone else set meanwhile. Returns 0 (see per-thread outcomes),
 * -ESRCH, -EPERM (kernel thread or PF_NO_SETAFFINITY task), or -errno.
 * @result is filled in either case. */
int np_actuator_set_affinity(struct np_actuator *act, struct np_act_task *at,
			     const struct np_task *task, const struct np_bitmap *from,
			     const struct np_bitmap *cpus, struct np_affinity_result *result);

/* The same for the threads @tids (@nr of them) of @task only, or with
 * @except for all its threads but those; the others are not in
 * @result. */
int np_actuator_set_threads_affinity(struct np_actuator *act, struct np_act_task *at,
				     const struct np_task *task, const int *tids, unsigned nr,
				     bool except, const struct np_bitmap *from,
				     const struct np_bitmap *cpus, struct np_affinity_result *result);

/* The mask thread @tid of process @pid has now. Returns 0, -ESRCH when it
 * is gone, or -errno. */
int np_actuator_thread_cpus(struct np_actuator *act, int pid, int tid, struct np_bitmap *cpus);

/* Where @n pages of process @pid are (move_pages(2) with no nodes): each
 * one's node, or -errno, into @status. Returns 0 or -errno. */
int np_actuator_where(struct np_actuator *act, int pid, unsigned n, void **pages, int *status);

/* What a dry-run actuator would have done. */
enum np_record_kind { NP_RECORD_PAGES, NP_RECORD_AFFINITY };

struct np_action_record {
	enum np_record_kind kind;
	int pid;
	uint64_t start_ticks;
	int tid;      /* affinity */
	int from, to; /* pages: source and destination node */
	uint64_t pages, bytes;
	struct np_bitmap cpus; /* affinity: the new mask */
};

/* Records kept between clears; later ones are only logged (LOG_INFO, like
 * every record) and counted as dropped. */
#define NP_ACTUATOR_RECORDS_MAX 1024

/* The records so far (none for the real actuator); valid until the next
 * action or clear. */
const struct np_action_record *np_actuator_records(const struct np_actuator *act, unsigned *nr);
/* Records logged but not kept since the last clear. */
uint64_t np_actuator_records_dropped(const struct np_actuator *act);

/* Forget the records and the dropped count. */
void np_actuator_clear_records(struct np_actuator *act);

/* One line describing @rec, as snprintf. */
size_t np_action_record_format(const struct np_action_record *rec, char *buf, size_t size);

/* The pure step of np_actuator_set_affinity(), exposed for tests. */

enum np_narrow { NP_NARROW_CHANGED, NP_NARROW_UNCHANGED, NP_NARROW_EMPTY };

/* @out = @current & @node_cpus, and what that means for the thread. */
enum np_narrow np_affinity_narrow(const struct np_bitmap *current,
				  const struct np_bitmap *node_cpus, struct np_bitmap *out);
