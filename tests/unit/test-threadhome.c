/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "threadhome.h"

#include <stdio.h>
#include <stdlib.h>

#include <math.h>
#include <string.h>

#define MIB (UINT64_C(1) << 20)

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* compete on 4 nodes of one CPU: two 2-thread tasks, each thread busy
 * and writing 64 MiB of its own, all of it on node 0. The first task
 * keeps one thread on node 0 (its memory is there) and sends the other
 * where it runs; the second, placed after it, finds nodes 0 and 1 full
 * and goes where there is room: node 2 (tied, the lower), then node 3
 * (where its second thread runs). */
static void test_compete_4node(void)
{
	struct np_th_node nodes[4] = {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 0, 0}};
	const uint64_t on0[4] = {64 * MIB, 0, 0, 0};
	struct np_th_thread a[2] = {{0.9, 2, on0, 64 * MIB}, {0.9, 1, on0, 64 * MIB}};
	struct np_th_thread b[2] = {{0.9, 0, on0, 64 * MIB}, {0.9, 3, on0, 64 * MIB}};
	int home[2];

	CHECK_INT(np_thread_homes_assign(nodes, 4, a, 2, home), 2);
	CHECK_INT(home[0], 0);
	CHECK_INT(home[1], 1);
	CHECK(near(nodes[0].load, 0.9) && near(nodes[1].load, 0.9));
	CHECK_INT(np_thread_homes_assign(nodes, 4, b, 2, home), 2);
	CHECK_INT(home[0], 2);
	CHECK_INT(home[1], 3);
	CHECK(near(nodes[2].load, 0.9) && near(nodes[3].load, 0.9));
}

/* The thread with the most memory of its own is placed first: it gets
 * the node where its memory is, the smaller one the node it runs on. */
static void test_most_memory_first(void)
{
	struct np_th_node nodes[2] = {{1, 0, 0}, {1, 0, 0}};
	const uint64_t small[2] = {8 * MIB, 0}, big[2] = {100 * MIB, 0};
	struct np_th_thread t[2] = {{0.8, 0, small, 8 * MIB}, {0.8, 1, big, 100 * MIB}};
	int home[2];

	CHECK_INT(np_thread_homes_assign(nodes, 2, t, 2, home), 2);
	CHECK_INT(home[1], 0);
	CHECK_INT(home[0], 1);
}

/* No home: an idle thread, and one that wrote nothing of its own; a
 * memory-only node is no home. */
static void test_no_home(void)
{
	struct np_th_node nodes[3] = {{0, 0, 0}, {2, 0, 0}, {2, 0, 0}};
	const uint64_t on0[3] = {32 * MIB, 0, 0};
	struct np_th_thread t[3] = {
	    {0.01, 1, on0, 32 * MIB}, /* idle */
	    {0.9, 1, NULL, 0},	      /* nothing of its own */
	    {0.9, 2, on0, 32 * MIB},  /* its memory on the CPU-less node */
	};
	int home[3];

	CHECK_INT(np_thread_homes_assign(nodes, 3, t, 3, home), 1);
	CHECK_INT(home[0], -1);
	CHECK_INT(home[1], -1);
	CHECK_INT(home[2], 2); /* where it runs: node 0 has no CPU */
	CHECK(near(nodes[1].load, 0) && near(nodes[2].load, 0.9));
}

/* Room is the node's CPUs and the planner's slack (0.25 + 0.05 a CPU):
 * 1.5 + 0.5 on two CPUs fits (2.35), so the thread stays beside its
 * memory; when nothing fits, the least loaded node takes it. */
static void test_room(void)
{
	struct np_th_node nodes[2] = {{2, 1.5, 0}, {1, 0, 0}};
	struct np_th_node full[2] = {{1, 1.0, 0}, {1, 0.5, 0}};
	const uint64_t on0[2] = {16 * MIB, 0};
	struct np_th_thread t = {0.5, 1, on0, 16 * MIB};
	struct np_th_thread u = {0.9, 0, on0, 16 * MIB};
	int home;

	CHECK_INT(np_thread_homes_assign(nodes, 2, &t, 1, &home), 1);
	CHECK_INT(home, 0);
	CHECK_INT(np_thread_homes_assign(full, 2, &u, 1, &home), 1);
	/* 1.9 on node 0 and 1.4 on node 1, over 1.3 both: the least loaded,
	 * though its memory and its CPU are on node 0. */
	CHECK_INT(home, 1);
	CHECK(near(full[1].load, 1.4));
}

/* The load measured over the last second lags behind threads the kernel
 * moves: here node 1 shows a CPU busy that nobody homed, and no node has
 * room by the load. The threads then go where fewest are homed: the first
 * to node 2 (it has room, where it runs), the second to node 1, not to
 * node 3 beside another task's homed thread. */
static void test_no_room_homed(void)
{
	struct np_th_node nodes[4] = {{1, 0.97, 0.97}, {1, 1.02, 0}, {1, 0.05, 0}, {1, 0.94, 0.92}};
	const uint64_t on0[4] = {64 * MIB, 0, 0, 0};
	struct np_th_thread t[2] = {{0.92, 2, on0, 26 * MIB}, {0.86, 1, on0, 24 * MIB}};
	int home[2];

	CHECK_INT(np_thread_homes_assign(nodes, 4, t, 2, home), 2);
	CHECK_INT(home[0], 2);
	CHECK_INT(home[1], 1);
	CHECK(near(nodes[1].homed, 0.86) && near(nodes[2].homed, 0.92));
}

static struct np_bitmap cpus_of(const char *list)
{
	struct np_bitmap b;

	CHECK_INT(np_bitmap_parse_list(&b, list, strlen(list)), 0);
	return b;
}

/* The masks a task's thread homes set, for what its threads start: each
 * once, kept over a later sample's homes, started over when the mask from
 * before is another; noting marks them standing again. */
static void test_handed(void)
{
	struct np_thread_home v[3] = {{.tid = 11, .node = 1, .cpus = cpus_of("1")},
				      {.tid = 12, .node = 2, .cpus = cpus_of("2")},
				      {.tid = 13, .node = 1, .cpus = cpus_of("1")}};
	struct np_thread_homes th = {.before = cpus_of("0-3"), .v = v, .nr = 3};
	struct np_th_handed *h = NULL;
	struct np_bitmap c;

	CHECK(!np_th_handed_find(NULL, &th.before));
	CHECK_INT(np_th_handed_note(&h, &th), 0);
	CHECK(h != NULL);
	if (!h)
		return;
	CHECK_INT(h->nr, 2);
	CHECK(np_bitmap_equal(&h->before, &th.before));
	c = cpus_of("2");
	CHECK(np_th_handed_find(h, &c) && np_bitmap_equal(np_th_handed_find(h, &c), &c));
	c = cpus_of("3");
	CHECK(!np_th_handed_find(h, &c));
	c = cpus_of("0-3");
	CHECK(!np_th_handed_find(h, &c));
	/* A later sample homes a thread on node 3: node 1's mask stays, a
	 * child may still have it. */
	h->given_back_ms = 5000;
	v[0].cpus = cpus_of("3");
	CHECK_INT(np_th_handed_note(&h, &th), 0);
	CHECK_INT(h->nr, 3);
	CHECK_U64(h->given_back_ms, 0);
	c = cpus_of("1");
	CHECK(np_th_handed_find(h, &c) != NULL);
	/* Homes over another mask from before: only theirs. */
	th.before = cpus_of("0-2");
	th.nr = 1;
	CHECK_INT(np_th_handed_note(&h, &th), 0);
	CHECK_INT(h->nr, 1);
	CHECK(!np_th_handed_find(h, &c));
	np_th_handed_free(h);
	np_th_handed_free(NULL);
}

/* A dry actuator on a copy of the engine-2node fixture whose pid 100 has
 * both threads on CPUs 2-3, as homes on node 1 left them. */
struct th_fixture {
	char root[32];
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator *act;
	struct np_ctx *ctx;
	struct np_act_task at;
	struct np_task task;
	struct np_thread_homes *th;
};

static bool th_fixture_start(struct th_fixture *f)
{
	char cmd[4800];

	memset(f, 0, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/np-th-XXXXXX");
	f->th = calloc(1, sizeof(*f->th));
	CHECK(f->th && mkdtemp(f->root));
	if (!f->th)
		return false;
	snprintf(cmd, sizeof(cmd),
		 "cp -R '%s'/. '%s' && cd '%s/proc/100/task' && "
		 "sed -i 's/^Cpus_allowed:.*/Cpus_allowed:\tc/; "
		 "s/^Cpus_allowed_list:.*/Cpus_allowed_list:\t2-3/' 100/status 101/status",
		 fixture("engine-2node"), f->root, f->root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(np_ctx_new(f->root, &f->ctx), 0);
	CHECK_INT(np_topology_read(f->ctx, &f->topo), 0);
	CHECK_INT(np_stats_new(f->topo, &f->stats), 0);
	CHECK_INT(np_actuator_new_dry(f->ctx, f->stats, NULL, &f->act), 0);
	np_act_task_init(&f->at);
	f->task = (struct np_task){.pid = 100, .start_ticks = 100000};
	snprintf(f->task.comm, sizeof(f->task.comm), "hog");
	f->th->before = cpus_of("0-3");
	return f->act != NULL;
}

/* Homes on node 1 for @nr threads of @tids. */
static void th_fixture_homes(struct th_fixture *f, const int *tids, unsigned nr)
{
	f->th->v = calloc(nr, sizeof(*f->th->v));
	CHECK(f->th->v != NULL);
	for (unsigned i = 0; f->th->v && i < nr; i++)
		f->th->v[f->th->nr++] =
		    (struct np_thread_home){.tid = tids[i], .node = 1, .cpus = cpus_of("2-3")};
}

/* The dry run's records: each an affinity of CPUs 0-3; their threads in
 * @tids, as many as there are records. */
static unsigned given_back(const struct th_fixture *f, int *tids, unsigned max)
{
	const struct np_action_record *rec;
	struct np_bitmap all = cpus_of("0-3");
	unsigned nr = 0;

	rec = np_actuator_records(f->act, &nr);
	for (unsigned i = 0; i < nr && i < max; i++) {
		CHECK_INT(rec[i].kind, NP_RECORD_AFFINITY);
		CHECK(np_bitmap_equal(&rec[i].cpus, &all));
		tids[i] = rec[i].tid;
	}
	return nr;
}

static void th_fixture_end(struct th_fixture *f)
{
	char cmd[64];

	np_act_task_release(&f->at);
	np_thread_homes_free(f->th);
	np_actuator_free(f->act);
	np_stats_free(f->stats);
	np_topology_free(f->topo);
	np_ctx_free(f->ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	CHECK_INT(system(cmd), 0);
}

/* The check before a look: a homed thread gone (105) is forgotten, and
 * what it started (the main thread here, on its home's CPUs and homed
 * nowhere) gets the mask from before; thread 101, homed on the same node
 * with that very mask, keeps it and its home. */
static void test_check_gone(void)
{
	const int homed[] = {105, 101};
	struct th_fixture f;
	int tids[4];

	if (th_fixture_start(&f)) {
		struct np_th_env env = {
		    .ctx = f.ctx, .act = f.act, .topo = f.topo, .now_ms = 5000, .ticks_per_s = 100};

		th_fixture_homes(&f, homed, 2);
		CHECK_INT(np_thread_homes_check(&env, f.th, &f.at, &f.task), 1);
		CHECK_INT(f.th->nr, 1);
		CHECK_INT(f.th->v[0].tid, 101);
		CHECK_INT(given_back(&f, tids, 4), 1);
		CHECK_INT(tids[0], 100);
	}
	th_fixture_end(&f);
}

/* A whole give-back reaches every home, two on the same node too (each
 * pass spares the other homes). */
static void test_give_back_same_node(void)
{
	const int homed[] = {100, 101};
	struct th_fixture f;
	unsigned restored = 0;
	int tids[4];

	if (th_fixture_start(&f)) {
		struct np_th_env env = {
		    .ctx = f.ctx, .act = f.act, .topo = f.topo, .now_ms = 5000, .ticks_per_s = 100};

		th_fixture_homes(&f, homed, 2);
		CHECK_INT(np_thread_homes_give_back(&env, f.th, &f.at, f.task.pid,
						    f.task.start_ticks, &restored),
			  0);
		CHECK_INT(f.th->nr, 0);
		CHECK_INT(given_back(&f, tids, 4), 2);
		CHECK(tids[0] != tids[1]);
	}
	th_fixture_end(&f);
}

/* A first sample is split halfway between its start and its read, once;
 * none without a sample, nor one that a sample before confirms. */
static void test_split_due(void)
{
	struct np_thread_homes th = {.sample_ms = 5000, .read_ms = 6000};
	struct np_writer_block before = {.start = 0, .tid = 100, .faults = 1};
	char running;

	CHECK_U64(np_th_split_ms(NULL), 0);
	CHECK_U64(np_th_split_ms(&th), 0);
	CHECK_INT(np_thread_homes_split(&th, 9000), 0);
	/* Stands in for a sample under way: not read before its split. */
	th.sampling = (struct np_writers *)&running;
	CHECK_U64(np_th_split_ms(&th), 5500);
	/* Started late in its tick: halfway to its read, at 6000. */
	th.started_ms = 5400;
	CHECK_U64(np_th_split_ms(&th), 5700);
	/* Too late for that: a quarter of a sample's length past its start. */
	th.started_ms = 5900;
	CHECK_U64(np_th_split_ms(&th), 5900 + NP_TH_SAMPLE_MS / 4);
	/* Ticks 2 s apart: read at the next. */
	th.started_ms = 5000;
	th.read_ms = 7000;
	CHECK_U64(np_th_split_ms(&th), 6000);
	th.read_ms = 6000;
	CHECK_INT(np_thread_homes_split(&th, 5499), 0);
	CHECK(!th.split_tried);
	th.prev = &before;
	th.nr_prev = 1;
	CHECK_U64(np_th_split_ms(&th), 0);
	CHECK_INT(np_thread_homes_split(&th, 9000), 0);
	th.prev = NULL;
	th.nr_prev = 0;
	th.split_tried = true;
	CHECK_U64(np_th_split_ms(&th), 0);
	CHECK_INT(np_thread_homes_split(&th, 9000), 0);
}

/* A sample of a task's writes is read at the look nearest its end: a
 * look a tick on that came a ms early reads it, not a tick later. */
static void test_sample_ended(void)
{
	CHECK(!np_th_sample_ended(5000, 5000, 1000));
	CHECK(!np_th_sample_ended(5499, 5000, 1000));
	CHECK(np_th_sample_ended(5500, 5000, 1000));
	CHECK(np_th_sample_ended(5999, 5000, 1000)); /* a tick on, a ms early */
	CHECK(np_th_sample_ended(7000, 5000, 1000));
	/* Short ticks: half of one early, not more. */
	CHECK(!np_th_sample_ended(5994, 5000, 10));
	CHECK(np_th_sample_ended(5995, 5000, 10));
	/* Ticks longer than a sample: read at the next look, never before
	 * half a sample. */
	CHECK(!np_th_sample_ended(5499, 5000, 5000));
	CHECK(np_th_sample_ended(5500, 5000, 5000));
	/* No ticks (tick_ms 0): the full length. */
	CHECK(!np_th_sample_ended(5999, 5000, 0));
	CHECK(np_th_sample_ended(6000, 5000, 0));
	/* A clock before the sample's start (cannot happen): not ended. */
	CHECK(!np_th_sample_ended(4000, 5000, 1000));
}

int main(void)
{
	test_compete_4node();
	test_most_memory_first();
	test_no_home();
	test_room();
	test_no_room_homed();
	test_handed();
	test_check_gone();
	test_give_back_same_node();
	test_sample_ended();
	test_split_due();
	return check_done();
}
