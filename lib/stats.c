/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>

#define CACHE_LINE 64
/* errno values above this (none the calls we make return) count as "other",
 * slot 0. */
#define ERRNO_SLOTS 160
#define SMALL_FILE (64u << 10)

static const char *const call_names[] = {
    [NP_CALL_MOVE_PAGES] = "move_pages",
    [NP_CALL_MIGRATE_PAGES] = "migrate_pages",
    [NP_CALL_AFFINITY] = "affinity",
    [NP_CALL_READ] = "read",
};
_Static_assert(sizeof(call_names) / sizeof(call_names[0]) == NP_CALL_NR,
	       "every action needs a name");

/* Bumped once per page batch or per task: kept together, on lines of their
 * own. */
struct stats_hot {
	uint64_t pages_queried;
	uint64_t migrate_calls[NP_CALL_NR];
	uint64_t migrate_call_ns[NP_CALL_NR];
	uint64_t migrate_call_max_ns[NP_CALL_NR];
	uint64_t ticks, tick_ns, tick_max_ns, tick_cpu_ns;
	uint64_t quiet_tick_cpu_ns; /* of the quiet ones */
	bool tick_quiet;	    /* the cycle under way was quiet */
	uint64_t quiet_ticks;
	uint64_t affinity_threads;
	uint64_t scans;
	uint64_t numa_maps_bytes;
	/* Tasks listed: their stat read, kept, or kept as unchanged. */
	uint64_t stats_read, stats_kept, stats_unchanged;
	uint64_t listings[2];	   /* by events, of /proc */
	uint64_t sampled_looks[2]; /* a numa_maps read followed, or not needed */
	uint64_t skips[NP_REASON_COUNT];
	uint64_t page_failures[ERRNO_SLOTS];
	uint64_t failures[NP_CALL_NR][ERRNO_SLOTS];
	uint64_t permission_denied[NP_CALL_NR]; /* the EACCES and EPERM of failures */
};

struct migrated_cell {
	uint64_t pages, bytes;
};

struct np_stats {
	/* Counters are added from the loop and from the thread that moves
	 * pages, and read by the metrics endpoint: one lock for all, taken
	 * once per call, a few hundred times a second at most. */
	pthread_mutex_t lock;
	/* Read-mostly: set up once, numastat refreshed when metrics are asked
	 * for. */
	unsigned nr_nodes;
	int *node_ids;
	struct np_numastat *numastat;
	bool *numastat_valid;
	/* (nr_nodes + 1)^2 cells, source-major; the last row and column are
	 * nodes the topology did not know. Its own aligned allocation. */
	struct migrated_cell *migrated;
	/* The last plan: CPU demand and CPUs per node (indexed like node_ids),
	 * and the tasks narrowed now; set once per tick. */
	double *plan_demand;
	unsigned *plan_cpus;
	bool has_plan;
	unsigned narrowed_tasks;
	unsigned thread_homes;
	uint64_t given_back_tasks;

	_Alignas(CACHE_LINE) struct stats_hot hot;
};

const char *np_stat_call_name(enum np_stat_call action)
{
	if ((unsigned)action >= NP_CALL_NR)
		return "unknown";
	return call_names[action];
}

static void *zalloc_aligned(size_t size)
{
	size_t rounded = (size + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
	void *p = aligned_alloc(CACHE_LINE, rounded);

	if (p)
		memset(p, 0, rounded);
	return p;
}

int np_stats_new(const struct np_topology *topo, struct np_stats **out)
{
	struct np_stats *stats = zalloc_aligned(sizeof(*stats));
	unsigned n = topo ? topo->nr_nodes : 0;

	if (!stats)
		return -ENOMEM;
	pthread_mutex_init(&stats->lock, NULL);
	stats->nr_nodes = n;
	stats->node_ids = calloc(n ? n : 1, sizeof(*stats->node_ids));
	stats->numastat = calloc(n ? n : 1, sizeof(*stats->numastat));
	stats->numastat_valid = calloc(n ? n : 1, sizeof(*stats->numastat_valid));
	stats->migrated = zalloc_aligned((size_t)(n + 1) * (n + 1) * sizeof(*stats->migrated));
	stats->plan_demand = calloc(n ? n : 1, sizeof(*stats->plan_demand));
	stats->plan_cpus = calloc(n ? n : 1, sizeof(*stats->plan_cpus));
	if (!stats->node_ids || !stats->numastat || !stats->numastat_valid || !stats->migrated ||
	    !stats->plan_demand || !stats->plan_cpus) {
		np_stats_free(stats);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		stats->node_ids[i] = topo->nodes[i].id;
	*out = stats;
	return 0;
}

void np_stats_free(struct np_stats *stats)
{
	if (!stats)
		return;
	free(stats->node_ids);
	free(stats->numastat);
	free(stats->numastat_valid);
	free(stats->migrated);
	free(stats->plan_demand);
	free(stats->plan_cpus);
	pthread_mutex_destroy(&stats->lock);
	free(stats);
}

/* The lock is taken for readers too: they take a const pointer. */
static void lock(const struct np_stats *stats)
{
	pthread_mutex_lock((pthread_mutex_t *)&stats->lock);
}

static void unlock(const struct np_stats *stats)
{
	pthread_mutex_unlock((pthread_mutex_t *)&stats->lock);
}

static uint64_t read_counter(const struct np_stats *stats, const uint64_t *counter)
{
	uint64_t v;

	lock(stats);
	v = *counter;
	unlock(stats);
	return v;
}

/* Index of node @id, or nr_nodes for "other". */
static unsigned node_slot(const struct np_stats *stats, int id)
{
	for (unsigned i = 0; i < stats->nr_nodes; i++)
		if (stats->node_ids[i] == id)
			return i;
	return stats->nr_nodes;
}

void np_stats_set_plan(struct np_stats *stats, const struct np_topology *topo,
		       const struct np_planner_load *load, unsigned narrowed_tasks,
		       unsigned thread_homes)
{
	lock(stats);
	stats->narrowed_tasks = narrowed_tasks;
	stats->thread_homes = thread_homes;
	if (load)
		stats->has_plan = true;
	for (unsigned i = 0; load && i < topo->nr_nodes; i++) {
		unsigned slot = node_slot(stats, topo->nodes[i].id);

		if (slot < stats->nr_nodes) {
			stats->plan_demand[slot] = load[i].demand;
			stats->plan_cpus[slot] = load[i].cpus;
		}
	}
	unlock(stats);
}

void np_stats_add_given_back(struct np_stats *stats, uint64_t tasks)
{
	lock(stats);
	stats->given_back_tasks += tasks;
	unlock(stats);
}

static struct migrated_cell *cell(const struct np_stats *stats, unsigned src, unsigned dst)
{
	return &stats->migrated[src * (stats->nr_nodes + 1) + dst];
}

static unsigned errno_slot(int err)
{
	if (err < 0)
		err = -err;
	return err > 0 && err < ERRNO_SLOTS ? (unsigned)err : 0;
}

void np_stats_add_migrated(struct np_stats *stats, int src, int dst, uint64_t pages, uint64_t bytes)
{
	struct migrated_cell *c = cell(stats, node_slot(stats, src), node_slot(stats, dst));

	lock(stats);
	c->pages += pages;
	c->bytes += bytes;
	unlock(stats);
}

void np_stats_add_page_failures(struct np_stats *stats, int err, uint64_t pages)
{
	lock(stats);
	stats->hot.page_failures[errno_slot(err)] += pages;
	unlock(stats);
}

void np_stats_add_failure(struct np_stats *stats, enum np_stat_call action, int err)
{
	if ((unsigned)action >= NP_CALL_NR)
		return;
	lock(stats);
	stats->hot.failures[action][errno_slot(err)]++;
	if (np_is_permission_error(err))
		stats->hot.permission_denied[action]++;
	unlock(stats);
}

void np_stats_add_migrate_call(struct np_stats *stats, enum np_stat_call action,
			       uint64_t elapsed_ns)
{
	if ((unsigned)action >= NP_CALL_NR)
		return;
	lock(stats);
	stats->hot.migrate_calls[action]++;
	stats->hot.migrate_call_ns[action] += elapsed_ns;
	if (elapsed_ns > stats->hot.migrate_call_max_ns[action])
		stats->hot.migrate_call_max_ns[action] = elapsed_ns;
	unlock(stats);
}

void np_stats_add_tick(struct np_stats *stats, uint64_t elapsed_ns, uint64_t cpu_ns)
{
	lock(stats);
	stats->hot.ticks++;
	stats->hot.tick_ns += elapsed_ns;
	stats->hot.tick_cpu_ns += cpu_ns;
	if (stats->hot.tick_quiet)
		stats->hot.quiet_tick_cpu_ns += cpu_ns;
	stats->hot.tick_quiet = false;
	if (elapsed_ns > stats->hot.tick_max_ns)
		stats->hot.tick_max_ns = elapsed_ns;
	unlock(stats);
}

void np_stats_add_quiet_tick(struct np_stats *stats)
{
	lock(stats);
	stats->hot.quiet_ticks++;
	stats->hot.tick_quiet = true;
	unlock(stats);
}

uint64_t np_stats_quiet_ticks(const struct np_stats *stats)
{
	return read_counter(stats, &stats->hot.quiet_ticks);
}

uint64_t np_stats_ticks(const struct np_stats *stats)
{
	return read_counter(stats, &stats->hot.ticks);
}

void np_stats_add_pages_queried(struct np_stats *stats, uint64_t pages)
{
	lock(stats);
	stats->hot.pages_queried += pages;
	unlock(stats);
}

void np_stats_add_affinity_set(struct np_stats *stats, uint64_t threads)
{
	lock(stats);
	stats->hot.affinity_threads += threads;
	unlock(stats);
}

void np_stats_add_listing(struct np_stats *stats, bool of_proc, uint64_t read, uint64_t kept,
			  uint64_t unchanged)
{
	lock(stats);
	stats->hot.listings[of_proc]++;
	stats->hot.stats_read += read;
	stats->hot.stats_kept += kept;
	stats->hot.stats_unchanged += unchanged;
	unlock(stats);
}

void np_stats_add_scan(struct np_stats *stats, uint64_t numa_maps_bytes)
{
	lock(stats);
	stats->hot.scans++;
	stats->hot.numa_maps_bytes += numa_maps_bytes;
	unlock(stats);
}

void np_stats_add_sampled_look(struct np_stats *stats, bool sufficed)
{
	lock(stats);
	stats->hot.sampled_looks[sufficed]++;
	unlock(stats);
}

/* Reads and moves are what the daemon is for, not skips. */
static bool is_skip(unsigned reason)
{
	return reason < NP_REASON_COUNT && reason != NP_REASON_SCAN_FIRST &&
	       reason != NP_REASON_SCAN_DUE && reason != NP_REASON_MISPLACED;
}

void np_stats_add_skip(struct np_stats *stats, enum np_reason reason)
{
	if (!is_skip(reason))
		return;
	lock(stats);
	stats->hot.skips[reason]++;
	unlock(stats);
}

void np_stats_add_skips(struct np_stats *stats, const uint64_t counts[NP_REASON_COUNT])
{
	lock(stats);
	for (unsigned r = 0; r < NP_REASON_COUNT; r++)
		if (is_skip(r))
			stats->hot.skips[r] += counts[r];
	unlock(stats);
}

uint64_t np_stats_migrated_bytes(const struct np_stats *stats, int src, int dst)
{
	uint64_t v;

	lock(stats);
	v = cell(stats, node_slot(stats, src), node_slot(stats, dst))->bytes;
	unlock(stats);
	return v;
}

uint64_t np_stats_page_failures(const struct np_stats *stats, int err)
{
	return read_counter(stats, &stats->hot.page_failures[errno_slot(err)]);
}

uint64_t np_stats_permission_denied(const struct np_stats *stats, enum np_stat_call action)
{
	if ((unsigned)action >= NP_CALL_NR)
		return 0;
	return read_counter(stats, &stats->hot.permission_denied[action]);
}

uint64_t np_stats_failures(const struct np_stats *stats, enum np_stat_call action, int err)
{
	if ((unsigned)action >= NP_CALL_NR)
		return 0;
	return read_counter(stats, &stats->hot.failures[action][errno_slot(err)]);
}

uint64_t np_stats_skips(const struct np_stats *stats, enum np_reason reason)
{
	return is_skip(reason) ? read_counter(stats, &stats->hot.skips[reason]) : 0;
}

uint64_t np_stats_scans(const struct np_stats *stats)
{
	return read_counter(stats, &stats->hot.scans);
}

uint64_t np_stats_listed(const struct np_stats *stats, bool kept)
{
	return read_counter(stats, kept ? &stats->hot.stats_kept : &stats->hot.stats_read);
}

uint64_t np_stats_listed_unchanged(const struct np_stats *stats)
{
	return read_counter(stats, &stats->hot.stats_unchanged);
}

static const struct {
	const char *key;
	size_t offset;
	const char *help;
} numastat_keys[] = {
    {"numa_hit", offsetof(struct np_numastat, numa_hit),
     "Pages allocated on this node as intended."},
    {"numa_miss", offsetof(struct np_numastat, numa_miss),
     "Pages allocated on this node though another was preferred."},
    {"numa_foreign", offsetof(struct np_numastat, numa_foreign),
     "Pages meant for this node but allocated elsewhere."},
    {"interleave_hit", offsetof(struct np_numastat, interleave_hit),
     "Interleaved pages allocated on this node as intended."},
    {"local_node", offsetof(struct np_numastat, local_node),
     "Pages allocated on this node by a task running on it."},
    {"other_node", offsetof(struct np_numastat, other_node),
     "Pages allocated on this node by a task running on another node."},
};
#define NR_NUMASTAT_KEYS (sizeof(numastat_keys) / sizeof(numastat_keys[0]))

int np_numastat_parse(const char *buf, size_t len, struct np_numastat *out, unsigned *err_line)
{
	struct np_numastat st = {0};
	const char *p = buf, *end = buf + len;
	unsigned line = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *sp, *q;
		size_t key_len;
		uint64_t v = 0;

		if (!eol)
			eol = end;
		line++;
		sp = memchr(p, ' ', (size_t)(eol - p));
		if (!sp || sp == p || sp + 1 == eol)
			goto bad;
		key_len = (size_t)(sp - p);
		for (q = sp + 1; q < eol; q++) {
			if (*q < '0' || *q > '9' || v > (UINT64_MAX - 9) / 10)
				goto bad;
			v = v * 10 + (uint64_t)(*q - '0');
		}
		for (size_t i = 0; i < NR_NUMASTAT_KEYS; i++)
			if (strlen(numastat_keys[i].key) == key_len &&
			    memcmp(numastat_keys[i].key, p, key_len) == 0)
				*(uint64_t *)((char *)&st + numastat_keys[i].offset) = v;
		p = eol + 1;
	}
	*out = st;
	return 0;
bad:
	if (err_line)
		*err_line = line;
	return -EINVAL;
}

int np_numastat_read(struct np_ctx *ctx, int node, struct np_numastat *out)
{
	char path[64], *buf;
	size_t len;
	unsigned line = 0;
	int err;

	snprintf(path, sizeof(path), "sys/devices/system/node/node%d/numastat", node);
	err = np_ctx_read_file(ctx, path, SMALL_FILE, &buf, &len);
	if (err)
		return err;
	err = np_numastat_parse(buf, len, out, &line);
	if (err) {
		const char *start = buf;

		for (unsigned i = 1; i < line; i++) {
			const char *nl = strchr(start, '\n');

			if (!nl)
				break;
			start = nl + 1;
		}
		np_log(ctx, LOG_ERR, "%s/%s:%u: expected \"name count\": \"%.*s\"",
		       np_ctx_root(ctx), path, line, (int)strcspn(start, "\n"), start);
	}
	free(buf);
	return err;
}

int np_stats_update_numastat(struct np_stats *stats, struct np_ctx *ctx)
{
	for (unsigned i = 0; i < stats->nr_nodes; i++) {
		int err = np_numastat_read(ctx, stats->node_ids[i], &stats->numastat[i]);

		if (err)
			return err;
		stats->numastat_valid[i] = true;
	}
	return 0;
}

static void node_label(const struct np_stats *stats, unsigned slot, char *buf, size_t size)
{
	if (slot < stats->nr_nodes)
		snprintf(buf, size, "%d", stats->node_ids[slot]);
	else
		snprintf(buf, size, "other");
}

static const char *errno_label(unsigned slot, char *buf, size_t size)
{
	const char *name = slot ? strerrorname_np((int)slot) : NULL;

	if (!slot)
		return "other";
	if (name)
		return name;
	snprintf(buf, size, "%u", slot);
	return buf;
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP numaplaced_%s %s\n# TYPE numaplaced_%s %s\n", name, help, name, type);
}

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void write_migrated(const struct np_stats *stats, FILE *out, bool bytes)
{
	unsigned n = stats->nr_nodes + 1;

	if (bytes)
		family(out, "migrated_bytes_total", "counter",
		       "Bytes of memory moved, by source and destination node.");
	else
		family(out, "migrated_pages_total", "counter",
		       "Pages moved, by source and destination node.");
	for (unsigned s = 0; s < n; s++)
		for (unsigned d = 0; d < n; d++) {
			const struct migrated_cell *c = cell(stats, s, d);
			char src[16], dst[16];

			/* Every real pair is listed, zero or not, so rates work
			 * from the first scrape; "other" only once used. */
			if (s == d || ((s == n - 1 || d == n - 1) && !c->pages))
				continue;
			node_label(stats, s, src, sizeof(src));
			node_label(stats, d, dst, sizeof(dst));
			fprintf(out, "numaplaced_%s{src=\"%s\",dst=\"%s\"} %" PRIu64 "\n",
				bytes ? "migrated_bytes_total" : "migrated_pages_total", src, dst,
				bytes ? c->bytes : c->pages);
		}
}

static int write_prometheus(const struct np_stats *stats, FILE *out)
{
	const struct stats_hot *h = &stats->hot;
	struct rusage ru;
	char tmp[16];

	write_migrated(stats, out, true);
	write_migrated(stats, out, false);

	family(out, "page_failures_total", "counter",
	       "Pages move_pages left in place, by the per-page error.");
	for (unsigned e = 0; e < ERRNO_SLOTS; e++)
		if (h->page_failures[e])
			fprintf(out, "numaplaced_page_failures_total{errno=\"%s\"} %" PRIu64 "\n",
				errno_label(e, tmp, sizeof(tmp)), h->page_failures[e]);

	family(out, "failures_total", "counter", "Failed calls, by kind and error.");
	for (unsigned a = 0; a < NP_CALL_NR; a++)
		for (unsigned e = 0; e < ERRNO_SLOTS; e++)
			if (h->failures[a][e])
				fprintf(out,
					"numaplaced_failures_total{action=\"%s\",errno=\"%s\"} "
					"%" PRIu64 "\n",
					call_names[a], errno_label(e, tmp, sizeof(tmp)),
					h->failures[a][e]);

	/* Every action, zeros too: "denied > 0" is the alert a daemon short of
	 * privileges should trip, and it needs the series to exist. */
	family(out, "permission_denied_total", "counter",
	       "Calls the kernel refused for want of privilege (EACCES, EPERM), by kind.");
	for (unsigned a = 0; a < NP_CALL_NR; a++)
		fprintf(out, "numaplaced_permission_denied_total{action=\"%s\"} %" PRIu64 "\n",
			call_names[a], h->permission_denied[a]);

	family(out, "migrate_calls_total", "counter",
	       "Completed move_pages and migrate_pages calls that moved memory.");
	for (unsigned a = NP_CALL_MOVE_PAGES; a <= NP_CALL_MIGRATE_PAGES; a++)
		fprintf(out, "numaplaced_migrate_calls_total{call=\"%s\"} %" PRIu64 "\n",
			call_names[a], h->migrate_calls[a]);
	family(out, "migrate_call_seconds_total", "counter",
	       "Time spent inside move_pages and migrate_pages calls.");
	for (unsigned a = NP_CALL_MOVE_PAGES; a <= NP_CALL_MIGRATE_PAGES; a++)
		fprintf(out, "numaplaced_migrate_call_seconds_total{call=\"%s\"} %.6f\n",
			call_names[a], (double)h->migrate_call_ns[a] / 1e9);
	family(out, "migrate_call_seconds_max", "gauge",
	       "The longest single move_pages or migrate_pages call since the start: how long "
	       "one call held a task up.");
	for (unsigned a = NP_CALL_MOVE_PAGES; a <= NP_CALL_MIGRATE_PAGES; a++)
		fprintf(out, "numaplaced_migrate_call_seconds_max{call=\"%s\"} %.6f\n",
			call_names[a], (double)h->migrate_call_max_ns[a] / 1e9);
	family(out, "ticks_total", "counter", "Placement cycles run.");
	fprintf(out, "numaplaced_ticks_total %" PRIu64 "\n", h->ticks);
	family(out, "quiet_ticks_total", "counter",
	       "Placement cycles that found nothing changed (no process came, went or ran that "
	       "needed a look, none re-pinned, no move in flight) and passed the tasks over "
	       "without listing them.");
	fprintf(out, "numaplaced_quiet_ticks_total %" PRIu64 "\n", h->quiet_ticks);
	family(out, "tick_seconds_total", "counter",
	       "Wall-clock time spent in placement cycles (the event loop waits meanwhile).");
	fprintf(out, "numaplaced_tick_seconds_total %.6f\n", (double)h->tick_ns / 1e9);
	family(out, "tick_seconds_max", "gauge", "The longest placement cycle since the start.");
	fprintf(out, "numaplaced_tick_seconds_max %.6f\n", (double)h->tick_max_ns / 1e9);
	family(out, "tick_cpu_seconds_total", "counter",
	       "CPU time the placement cycles took, on the daemon's main thread (moves off the "
	       "loop not included).");
	fprintf(out, "numaplaced_tick_cpu_seconds_total %.6f\n", (double)h->tick_cpu_ns / 1e9);

	family(out, "pages_queried_total", "counter",
	       "Pages whose node was looked up before moving.");
	fprintf(out, "numaplaced_pages_queried_total %" PRIu64 "\n", h->pages_queried);
	family(out, "affinity_threads_total", "counter",
	       "Threads whose CPU affinity was narrowed.");
	fprintf(out, "numaplaced_affinity_threads_total %" PRIu64 "\n", h->affinity_threads);
	family(out, "affinity_given_back_total", "counter",
	       "Tasks given back the CPU mask they had before the daemon narrowed it, or "
	       "their parent had (a mask inherited from a parent it narrowed).");
	fprintf(out, "numaplaced_affinity_given_back_total %" PRIu64 "\n", stats->given_back_tasks);
	family(out, "narrowed_tasks", "gauge",
	       "Tasks whose threads the daemon keeps on their home node's CPUs now.");
	fprintf(out, "numaplaced_narrowed_tasks %u\n", stats->narrowed_tasks);
	family(out, "thread_homes", "gauge",
	       "Threads of spread tasks the daemon keeps on a node of their own now "
	       "(thread_homes).");
	fprintf(out, "numaplaced_thread_homes %u\n", stats->thread_homes);
	if (stats->has_plan) {
		family(
		    out, "node_cpu_demand", "gauge",
		    "CPUs the last plan asks of each node: tasks homed or running there, and the "
		    "rest of its load.");
		for (unsigned i = 0; i < stats->nr_nodes; i++)
			fprintf(out, "numaplaced_node_cpu_demand{node=\"%d\"} %.3f\n",
				stats->node_ids[i], stats->plan_demand[i]);
		family(out, "node_cpus", "gauge", "CPUs of each node, as the plan counts them.");
		for (unsigned i = 0; i < stats->nr_nodes; i++)
			fprintf(out, "numaplaced_node_cpus{node=\"%d\"} %u\n", stats->node_ids[i],
				stats->plan_cpus[i]);
	}
	family(out, "listed_tasks_total", "counter",
	       "Tasks listed at each cycle, by whether their /proc/PID/stat was read, the last "
	       "read's record stood in, or stood in as unchanged (not seen running since).");
	fprintf(out, "numaplaced_listed_tasks_total{stat=\"read\"} %" PRIu64 "\n", h->stats_read);
	fprintf(out, "numaplaced_listed_tasks_total{stat=\"kept\"} %" PRIu64 "\n", h->stats_kept);
	fprintf(out, "numaplaced_listed_tasks_total{stat=\"unchanged\"} %" PRIu64 "\n",
		h->stats_unchanged);
	family(out, "task_listings_total", "counter",
	       "Cycles' task lists, by where they came from: a listing of /proc, or the last "
	       "list and the process connector's events since.");
	fprintf(out, "numaplaced_task_listings_total{from=\"proc\"} %" PRIu64 "\n", h->listings[1]);
	fprintf(out, "numaplaced_task_listings_total{from=\"events\"} %" PRIu64 "\n",
		h->listings[0]);
	family(out, "sampled_looks_total", "counter",
	       "Sampled looks at big tasks (a random sample of their pages looked up with "
	       "move_pages), by whether the sample sufficed or numa_maps was read after it.");
	fprintf(out, "numaplaced_sampled_looks_total{result=\"sufficed\"} %" PRIu64 "\n",
		h->sampled_looks[1]);
	fprintf(out, "numaplaced_sampled_looks_total{result=\"read\"} %" PRIu64 "\n",
		h->sampled_looks[0]);
	family(out, "scans_total", "counter", "Reads of a task's numa_maps.");
	fprintf(out, "numaplaced_scans_total %" PRIu64 "\n", h->scans);
	family(out, "numa_maps_read_bytes_total", "counter", "Bytes of numa_maps read.");
	fprintf(out, "numaplaced_numa_maps_read_bytes_total %" PRIu64 "\n", h->numa_maps_bytes);

	family(out, "skips_total", "counter", "Tasks or actions passed over, by reason.");
	for (unsigned r = 0; r < NP_REASON_COUNT; r++)
		if (is_skip(r))
			fprintf(out, "numaplaced_skips_total{reason=\"%s\"} %" PRIu64 "\n",
				np_reason_metric(r), h->skips[r]);

	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		family(out, "cpu_seconds_total", "counter", "CPU time the daemon itself used.");
		fprintf(out, "numaplaced_cpu_seconds_total{mode=\"user\"} %.6f\n",
			seconds(ru.ru_utime));
		fprintf(out, "numaplaced_cpu_seconds_total{mode=\"system\"} %.6f\n",
			seconds(ru.ru_stime));
	}

	for (size_t k = 0; k < NR_NUMASTAT_KEYS; k++) {
		char name[48];

		snprintf(name, sizeof(name), "node_%s_pages_total", numastat_keys[k].key);
		family(out, name, "counter", numastat_keys[k].help);
		for (unsigned i = 0; i < stats->nr_nodes; i++) {
			if (!stats->numastat_valid[i])
				continue;
			fprintf(out, "numaplaced_%s{node=\"%d\"} %" PRIu64 "\n", name,
				stats->node_ids[i],
				*(const uint64_t *)((const char *)&stats->numastat[i] +
						    numastat_keys[k].offset));
		}
	}
	return ferror(out) ? -EIO : 0;
}

/* One consistent view: counters stay still while @write reads them. */
static int write_locked(const struct np_stats *stats, FILE *out,
			int (*write)(const struct np_stats *stats, FILE *out))
{
	int err;

	lock(stats);
	err = write(stats, out);
	unlock(stats);
	return err;
}

int np_stats_write_prometheus(const struct np_stats *stats, FILE *out)
{
	return write_locked(stats, out, write_prometheus);
}

int np_stats_format_prometheus(const struct np_stats *stats, char **buf, size_t *len)
{
	FILE *out = open_memstream(buf, len);
	int err;

	if (!out)
		return -errno;
	err = np_stats_write_prometheus(stats, out);
	if (fclose(out) != 0 && !err)
		err = -EIO;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

static int write_summary(const struct np_stats *stats, FILE *out)
{
	const struct stats_hot *h = &stats->hot;
	unsigned n = stats->nr_nodes + 1;
	uint64_t total = 0, failed = 0, skipped = 0;
	struct rusage ru;
	char tmp[16];

	for (unsigned s = 0; s < n; s++)
		for (unsigned d = 0; d < n; d++)
			total += cell(stats, s, d)->bytes;
	fprintf(out,
		"migrated %.1f MiB in %" PRIu64 " move_pages and %" PRIu64 " migrate_pages calls",
		mib(total), h->migrate_calls[NP_CALL_MOVE_PAGES],
		h->migrate_calls[NP_CALL_MIGRATE_PAGES]);
	for (unsigned s = 0; s < n; s++)
		for (unsigned d = 0; d < n; d++) {
			const struct migrated_cell *c = cell(stats, s, d);
			char src[16], dst[16];

			if (!c->bytes)
				continue;
			node_label(stats, s, src, sizeof(src));
			node_label(stats, d, dst, sizeof(dst));
			fprintf(out, ", %s->%s %.1f MiB", src, dst, mib(c->bytes));
		}
	fputc('\n', out);

	for (unsigned e = 0; e < ERRNO_SLOTS; e++)
		failed += h->page_failures[e];
	fprintf(out, "pages left in place: %" PRIu64, failed);
	for (unsigned e = 0; e < ERRNO_SLOTS; e++)
		if (h->page_failures[e])
			fprintf(out, ", %s %" PRIu64, errno_label(e, tmp, sizeof(tmp)),
				h->page_failures[e]);
	fputc('\n', out);

	fprintf(out, "failed calls:");
	failed = 0;
	for (unsigned a = 0; a < NP_CALL_NR; a++)
		for (unsigned e = 0; e < ERRNO_SLOTS; e++)
			if (h->failures[a][e]) {
				fprintf(out, " %s %s %" PRIu64 ";", call_names[a],
					errno_label(e, tmp, sizeof(tmp)), h->failures[a][e]);
				failed++;
			}
	fprintf(out, "%s\n", failed ? "" : " none");

	failed = 0;
	for (unsigned a = 0; a < NP_CALL_NR; a++)
		failed += h->permission_denied[a];
	fprintf(out, "permission denied: %" PRIu64, failed);
	for (unsigned a = 0; a < NP_CALL_NR; a++)
		if (h->permission_denied[a])
			fprintf(out, ", %s %" PRIu64, call_names[a], h->permission_denied[a]);
	fputc('\n', out);

	fprintf(out, "scans %" PRIu64 " (%.1f MiB of numa_maps), threads narrowed %" PRIu64 "\n",
		h->scans, mib(h->numa_maps_bytes), h->affinity_threads);
	fprintf(out, "skipped:");
	for (unsigned r = 0; r < NP_REASON_COUNT; r++)
		if (h->skips[r]) {
			fprintf(out, " %s %" PRIu64 ";", np_reason_metric(r), h->skips[r]);
			skipped++;
		}
	fprintf(out, "%s\n", skipped ? "" : " none");
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(out, "own CPU time %.2f s user, %.2f s system\n", seconds(ru.ru_utime),
			seconds(ru.ru_stime));
	/* What the cycles took of it; the rest is the start, the loop's
	 * other events (metrics, the connector) and moves off the loop. */
	fprintf(out,
		"cycles %" PRIu64 ": %.3f s of CPU (%.3f s in the quiet ones), %.3f s of wall "
		"time, the longest %.1f ms\n",
		h->ticks, (double)h->tick_cpu_ns / 1e9, (double)h->quiet_tick_cpu_ns / 1e9,
		(double)h->tick_ns / 1e9, (double)h->tick_max_ns / 1e6);
	return ferror(out) ? -EIO : 0;
}

int np_stats_write_summary(const struct np_stats *stats, FILE *out)
{
	return write_locked(stats, out, write_summary);
}
