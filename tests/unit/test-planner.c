/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The planner on tables of machines, each with its expected assignment
 * worked out by hand in the comment above it. */
#include "planner.h"

#include "check.h"

#define MIB (UINT64_C(1) << 20)
#define MAXN 8
#define MAXT 64

struct machine {
	unsigned nr;
	struct np_planner_node nodes[MAXN];
	unsigned distance[MAXN * MAXN];
};

struct job {
	double demand;
	uint64_t bytes[MAXN];
	double runs[MAXN];
	bool has_runs;
	uint64_t total; /* 0: the sum of bytes */
	int home;
	bool held, fixed, not_acted;
};

/* A machine of @nr nodes with @cpus CPUs and @room_mib of room each,
 * distance 10 local and 20 remote. */
static void machine_init(struct machine *m, unsigned nr, unsigned cpus, uint64_t room_mib)
{
	memset(m, 0, sizeof(*m));
	m->nr = nr;
	for (unsigned i = 0; i < nr; i++) {
		m->nodes[i] = (struct np_planner_node){
		    .cpus = cpus, .mem_room = room_mib * MIB, .mem_node = (int)i};
		for (unsigned j = 0; j < nr; j++)
			m->distance[i * nr + j] = i == j ? 10 : 20;
	}
}

static void job_init(struct job *j, double demand, int home)
{
	memset(j, 0, sizeof(*j));
	j->demand = demand;
	j->home = home;
}

/* Run the planner over @jobs; results and loads into @res and @load. */
static void run(const struct machine *m, struct job *jobs, size_t nr, struct np_planner_result *res,
		struct np_planner_load *load)
{
	struct np_planner_task tasks[MAXT];

	for (size_t i = 0; i < nr; i++) {
		uint64_t total = 0;

		for (unsigned n = 0; n < m->nr; n++)
			total += jobs[i].bytes[n];
		if (jobs[i].total)
			total = jobs[i].total;
		tasks[i] = (struct np_planner_task){
		    .demand = jobs[i].demand,
		    .bytes = jobs[i].bytes,
		    .total = total,
		    .runs = jobs[i].has_runs ? jobs[i].runs : NULL,
		    .home = jobs[i].home,
		    .held = jobs[i].held,
		    .placeable = !jobs[i].fixed,
		    .acted_on = !jobs[i].not_acted,
		};
	}
	CHECK_INT(np_planner_run(m->nodes, m->nr, m->distance, tasks, nr, res, load), 0);
}

/* compete, 2 nodes of 2 CPUs: two 2-CPU tasks with 350 MiB each on node 0.
 * Both want node 0 (4 CPUs asked of 2); moving either costs 350 MiB for 2
 * CPUs, a tie that goes to the smaller task, then the first: task 0 leaves
 * for node 1 (capacity) and moves 350 MiB, task 1 stays (memory). */
static void test_compete_two_nodes(void)
{
	struct machine m;
	struct job j[2];
	struct np_planner_result r[2];
	struct np_planner_load load[2];

	machine_init(&m, 2, 2, 600);
	for (int i = 0; i < 2; i++) {
		job_init(&j[i], 2.0, -1);
		j[i].bytes[0] = 350 * MIB;
	}
	run(&m, j, 2, r, load);
	CHECK_INT(r[0].home, 1);
	CHECK_INT(r[0].reason, NP_PLAN_CAPACITY);
	CHECK_U64(r[0].move_bytes, 350 * MIB);
	CHECK_INT(r[0].partial, 0);
	CHECK_INT(r[1].home, 0);
	CHECK_INT(r[1].reason, NP_PLAN_MEMORY);
	CHECK_U64(r[1].move_bytes, 0);
	CHECK(load[0].demand == 2.0 && load[1].demand == 2.0);
	CHECK_INT(load[0].cpus, 2);

	/* Task 1 smaller: it is the cheaper to move, so it leaves. */
	j[1].bytes[0] = 200 * MIB;
	run(&m, j, 2, r, load);
	CHECK_INT(r[0].home, 0);
	CHECK_INT(r[1].home, 1);
	CHECK_INT(r[1].reason, NP_PLAN_CAPACITY);
	CHECK_U64(r[1].move_bytes, 200 * MIB);

	/* Only task 1 is acted on now: between equal costs it is the one to
	 * move, so that the move happens at this look. */
	j[1].bytes[0] = 350 * MIB;
	j[0].not_acted = true;
	run(&m, j, 2, r, load);
	CHECK_INT(r[0].home, 0);
	CHECK_INT(r[1].home, 1);
}

/* split: one 1-CPU task, 100 MiB on each node, its thread on node 1. The
 * memory is a tie, the threads break it: home 1, 100 MiB to move. */
static void test_split(void)
{
	struct machine m;
	struct job j;
	struct np_planner_result r;

	machine_init(&m, 2, 2, 600);
	job_init(&j, 1.0, -1);
	j.bytes[0] = j.bytes[1] = 100 * MIB;
	j.has_runs = true;
	j.runs[1] = 1.0;
	run(&m, &j, 1, &r, NULL);
	CHECK_INT(r.home, 1);
	CHECK_INT(r.reason, NP_PLAN_MEMORY);
	CHECK_U64(r.move_bytes, 100 * MIB);
}

/* A 3-CPU task on nodes of 2 CPUs is spread (2 + slack 0.35 < 3); a
 * 2.3-CPU one is within the slack and gets a home. */
static void test_spread(void)
{
	struct machine m;
	struct job j;
	struct np_planner_result r;
	struct np_planner_load load[2];

	machine_init(&m, 2, 2, 600);
	job_init(&j, 3.0, -1);
	j.bytes[0] = 100 * MIB;
	j.has_runs = true;
	j.runs[0] = j.runs[1] = 0.5;
	run(&m, &j, 1, &r, load);
	CHECK_INT(r.home, -1);
	CHECK_INT(r.reason, NP_PLAN_SPREAD);
	CHECK(load[0].demand == 1.5 && load[1].demand == 1.5);
	j.demand = 2.3;
	run(&m, &j, 1, &r, NULL);
	CHECK_INT(r.home, 0);
}

/* A held home stays even where its memory is not; a kept one (not held)
 * stays while its node has room, and leaves when it has not. */
static void test_held_and_kept(void)
{
	struct machine m;
	struct job j[2];
	struct np_planner_result r[2];

	machine_init(&m, 2, 2, 600);
	job_init(&j[0], 2.0, 1);
	j[0].bytes[0] = 300 * MIB;
	j[0].held = true;
	run(&m, j, 1, r, NULL);
	CHECK_INT(r[0].home, 1);
	CHECK_INT(r[0].reason, NP_PLAN_HELD);
	CHECK_U64(r[0].move_bytes, 300 * MIB);

	/* Node 1 is taken by a held task: the kept one (home 1, not held)
	 * must leave, for node 0 where its memory is. */
	job_init(&j[1], 2.0, 1);
	j[1].bytes[0] = 100 * MIB;
	run(&m, j, 2, r, NULL);
	CHECK_INT(r[0].home, 1);
	CHECK_INT(r[1].home, 0);
	CHECK_INT(r[1].reason, NP_PLAN_CAPACITY);
	CHECK_U64(r[1].move_bytes, 0);

	/* Held, but it outgrew every node: no hold keeps it squeezed. */
	j[0].demand = 3.0;
	run(&m, j, 1, r, NULL);
	CHECK_INT(r[0].home, -1);
	CHECK_INT(r[0].reason, NP_PLAN_SPREAD);
	j[0].demand = 2.0;

	/* Alone, the kept one stays on node 1 though its memory is on 0. */
	run(&m, &j[1], 1, r, NULL);
	CHECK_INT(r[0].home, 1);
	CHECK_INT(r[0].reason, NP_PLAN_KEPT);
}

/* Three 2-CPU tasks on 2 nodes of 2 CPUs, memory all on node 0 (tasks of
 * 100, 200, 300 MiB): the cheapest (100) leaves for node 1; node 0 still
 * has 4 CPUs asked, node 1 is full, no swap helps (equal demand): the
 * cheaper of the two left (200) loses its home. */
static void test_no_room(void)
{
	struct machine m;
	struct job j[3];
	struct np_planner_result r[3];
	struct np_planner_load load[2];

	machine_init(&m, 2, 2, 600);
	for (int i = 0; i < 3; i++) {
		job_init(&j[i], 2.0, -1);
		j[i].bytes[0] = (uint64_t)(i + 1) * 100 * MIB;
	}
	run(&m, j, 3, r, load);
	CHECK_INT(r[0].home, 1);
	CHECK_INT(r[0].reason, NP_PLAN_CAPACITY);
	CHECK_INT(r[1].home, -1);
	CHECK_INT(r[1].reason, NP_PLAN_NO_ROOM);
	CHECK_INT(r[2].home, 0);
	CHECK_INT(r[2].reason, NP_PLAN_MEMORY);
	/* With no run shares it counts where its memory is. */
	CHECK(load[0].demand == 4.0 && load[1].demand == 2.0);
}

/* A swap, 2 nodes of 2 CPUs. Node 0: A (1.0 CPU, 300 MiB) and B (1.5, 100
 * MiB), both with memory there: 2.5 > 2.35. Node 1: C (1.0, 100 MiB there)
 * and 0.5 CPU of background: 1.5. Neither A (1.5 + 1 = 2.5) nor B (3.0)
 * fits node 1. Trading B for C leaves node 1 at 2.0 and node 0 at 2.0; A
 * cannot trade with C (equal demand frees nothing). */
static void test_swap(void)
{
	struct machine m;
	struct job j[3];
	struct np_planner_result r[3];
	struct np_planner_load load[2];

	machine_init(&m, 2, 2, 600);
	m.nodes[1].background = 0.5;
	job_init(&j[0], 1.0, -1);
	j[0].bytes[0] = 300 * MIB;
	job_init(&j[1], 1.5, -1);
	j[1].bytes[0] = 100 * MIB;
	job_init(&j[2], 1.0, -1);
	j[2].bytes[1] = 100 * MIB;
	run(&m, j, 3, r, load);
	CHECK_INT(r[0].home, 0);
	CHECK_INT(r[0].reason, NP_PLAN_MEMORY);
	CHECK_INT(r[1].home, 1);
	CHECK_INT(r[1].reason, NP_PLAN_SWAP);
	CHECK_U64(r[1].move_bytes, 100 * MIB);
	CHECK_INT(r[2].home, 0);
	CHECK_INT(r[2].reason, NP_PLAN_SWAP);
	CHECK(load[0].demand == 2.0 && load[1].demand == 2.0);
}

/* A task with more memory than its home can take: 600 MiB on each of two
 * nodes with 200 MiB of room each, its thread on node 0. The tie in memory
 * goes to the thread's node, and the plan moves the 200 MiB that fit. */
static void test_too_big(void)
{
	struct machine m;
	struct job j;
	struct np_planner_result r;

	machine_init(&m, 2, 2, 200);
	job_init(&j, 1.0, -1);
	j.bytes[0] = j.bytes[1] = 600 * MIB;
	j.has_runs = true;
	j.runs[0] = 1.0;
	run(&m, &j, 1, &r, NULL);
	CHECK_INT(r.home, 0);
	CHECK_U64(r.move_bytes, 200 * MIB);
	CHECK_INT(r.partial, 1);
}

/* 4 nodes, asymmetric: node 3 has memory but no CPUs, node 2 has CPUs and
 * no memory of its own (its threads' memory goes to node 3). A task with
 * its 300 MiB on node 3 cannot be homed there; homed on node 2 its memory
 * would be local (bytes[2] says so), so home 2, nothing to move. */
static void test_memory_only_and_cpuless(void)
{
	struct machine m;
	struct job j;
	struct np_planner_result r;

	machine_init(&m, 4, 1, 600);
	m.nodes[3].cpus = 0;
	m.nodes[2].mem_node = 3;
	m.nodes[2].mem_room = 0;
	m.distance[2 * 4 + 3] = 12;
	m.distance[3 * 4 + 2] = 17;
	job_init(&j, 1.0, -1);
	j.bytes[2] = j.bytes[3] = 300 * MIB;
	j.total = 300 * MIB;
	run(&m, &j, 1, &r, NULL);
	CHECK_INT(r.home, 2);
	CHECK_U64(r.move_bytes, 0);

	/* A fixed task (its user pinned it) only counts where it runs. */
	j.fixed = true;
	j.has_runs = true;
	j.runs[1] = 1.0;
	run(&m, &j, 1, &r, NULL);
	CHECK_INT(r.home, -1);
	CHECK_INT(r.reason, NP_PLAN_NOT_PLACED);
}

/* 8 nodes of 2 CPUs: eight 2-CPU tasks, all with their memory on node 0 in
 * sizes 80, 70, ..., 10 MiB. Node 0 keeps the biggest (80); the other
 * seven leave, cheapest first, each for the least busy node with room: the
 * lowest-indexed empty one (all costs are equal per node). */
static void test_eight_nodes(void)
{
	struct machine m;
	struct job j[8];
	struct np_planner_result r[8];
	bool used[8] = {false};

	machine_init(&m, 8, 2, 1000);
	for (int i = 0; i < 8; i++) {
		job_init(&j[i], 2.0, -1);
		j[i].bytes[0] = (uint64_t)(80 - 10 * i) * MIB;
	}
	run(&m, j, 8, r, NULL);
	CHECK_INT(r[0].home, 0);
	for (int i = 1; i < 8; i++) {
		CHECK(r[i].home >= 1);
		CHECK_INT(r[i].reason, NP_PLAN_CAPACITY);
		if (r[i].home >= 0) {
			CHECK(!used[r[i].home]);
			used[r[i].home] = true;
		}
	}
	/* The cheapest (10 MiB, task 7) left first, for node 1. */
	CHECK_INT(r[7].home, 1);
	CHECK_INT(r[1].home, 7);
}

/* 4 nodes in a ring (distance 20 to each neighbour, 30 across), 1 CPU
 * each: two 1-CPU tasks with their memory on node 0, where only one fits.
 * The one that leaves goes to a neighbour, never to node 2 across the
 * ring: of the two neighbours, the less busy one. */
static void test_ring_distances(void)
{
	static const unsigned ring[4][4] = {
	    {10, 20, 30, 20}, {20, 10, 20, 30}, {30, 20, 10, 20}, {20, 30, 20, 10}};
	struct machine m;
	struct job j[2];
	struct np_planner_result r[2];

	machine_init(&m, 4, 1, 600);
	for (unsigned a = 0; a < 4; a++)
		for (unsigned b = 0; b < 4; b++)
			m.distance[a * 4 + b] = ring[a][b];
	/* Node 1 a little busy: the neighbours tie on distance, and the less
	 * busy one, node 3, wins. */
	m.nodes[1].background = 0.1;
	for (int i = 0; i < 2; i++) {
		job_init(&j[i], 1.0, -1);
		j[i].bytes[0] = 100 * MIB;
	}
	run(&m, j, 2, r, NULL);
	CHECK_INT(r[1].home, 0);
	CHECK_INT(r[0].home, 3);
	CHECK_INT(r[0].reason, NP_PLAN_CAPACITY);
	/* Node 3 far (distance 40 from node 0): node 1 then. */
	m.distance[0 * 4 + 3] = 40;
	run(&m, j, 2, r, NULL);
	CHECK_INT(r[0].home, 1);
}

/* Many small leavers, one node of 2 CPUs (cap 2.35): 40 tasks of 0.1 CPU
 * with 1..40 MiB on node 0, listed out of order (task i has (7i mod 40) + 1
 * MiB). 4.0 CPUs asked: the node sheds the cheapest, 1 MiB first, until it
 * is within its cap: after 16 it is still at 2.4, after 17 at 2.3. So the
 * tasks of 1..17 MiB go to node 1 (capacity), those of 18..40 stay
 * (memory), and node 1 holds 1.7 CPUs. Only the first 17 of the 40 are
 * taken in order: the rest are never sorted. */
static void test_many_leavers(void)
{
	struct machine m;
	struct job j[40];
	struct np_planner_result r[40];
	struct np_planner_load load[2];

	machine_init(&m, 2, 2, 600);
	for (int i = 0; i < 40; i++) {
		job_init(&j[i], 0.1, -1);
		j[i].bytes[0] = (uint64_t)((7 * i) % 40 + 1) * MIB;
	}
	run(&m, j, 40, r, load);
	for (int i = 0; i < 40; i++) {
		bool leaves = (7 * i) % 40 + 1 <= 17;

		CHECK_INT(r[i].home, leaves ? 1 : 0);
		CHECK_INT(r[i].reason, leaves ? NP_PLAN_CAPACITY : NP_PLAN_MEMORY);
	}
	CHECK(load[0].demand > 2.29 && load[0].demand < 2.31);
	CHECK(load[1].demand > 1.69 && load[1].demand < 1.71);
}

int main(void)
{
	test_compete_two_nodes();
	test_split();
	test_spread();
	test_held_and_kept();
	test_no_room();
	test_swap();
	test_too_big();
	test_memory_only_and_cpuless();
	test_eight_nodes();
	test_ring_distances();
	test_many_leavers();
	return check_done();
}
