/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How long one machine-wide plan takes, and how the cost grows. Synthetic
 * machines of N nodes with 32 CPUs each and tasks whose demand and memory
 * are drawn from a fixed seed: busy hogs of 1-8 CPUs asking 80% of all the
 * CPUs, with most of their memory on the first half of the nodes (so they
 * alone ask 1.6 times those nodes' CPUs), the rest small and nearly idle,
 * about a tenth of the CPUs between them at every size; the overloaded nodes must be
 * relieved. Prints, per size, the median CPU time of
 * np_planner_run(), that time / (tasks x nodes), which should stay flat, and
 * how many tasks the plan sent to another node (tests/bench/report.py reads
 * these columns).
 * Goal: 10,000 tasks on 8 nodes (256 CPUs) in at most 5 ms.
 *
 *   bench-planner [TASKS NODES]...   (default: the table below)
 */
#include "planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 15
#define CPUS_PER_NODE 32

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rnd_state = 42;

static uint64_t rnd(uint64_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rnd_state >> 33) % n;
}

/* Median seconds of a plan of @nr tasks on @nodes nodes. */
static double measure(size_t nr, unsigned nodes, unsigned *moved)
{
	struct np_planner_node *node = calloc(nodes, sizeof(*node));
	unsigned *distance = calloc((size_t)nodes * nodes, sizeof(*distance));
	struct np_planner_task *tasks = calloc(nr, sizeof(*tasks));
	struct np_planner_result *res = calloc(nr, sizeof(*res));
	uint64_t *bytes = calloc(nr * nodes, sizeof(*bytes));
	double *runs = calloc(nr * nodes, sizeof(*runs));
	double times[RUNS];

	if (!node || !distance || !tasks || !res || !bytes || !runs) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < nodes; i++) {
		node[i] = (struct np_planner_node){.cpus = CPUS_PER_NODE,
						   .background = 1.0,
						   .mem_room = 64ull << 30,
						   .mem_node = (int)i};
		for (unsigned j = 0; j < nodes; j++)
			distance[i * nodes + j] = i == j ? 10 : i / 4 == j / 4 ? 16 : 32;
	}
	rnd_state = 42;
	for (size_t t = 0, hog_cpus = 0; t < nr; t++) {
		bool hog = hog_cpus < (size_t)nodes * CPUS_PER_NODE * 8 / 10 && rnd(4) == 0;
		/* Hogs crowd the first nodes, as allocations do from a start. */
		unsigned main_node =
		    hog ? (unsigned)rnd(nodes < 2 ? 1 : nodes / 2) : (unsigned)rnd(nodes);
		uint64_t total = hog ? (1 + rnd(64)) << 26 : (1 + rnd(64)) << 20;

		for (unsigned n = 0; n < nodes; n++) {
			bytes[t * nodes + n] = n == main_node ? total / 10 * 9 : total / 10 / nodes;
			runs[t * nodes + n] = n == main_node ? 1.0 : 0.0;
		}
		/* The small ones ask about a tenth of the CPUs between them at every
		 * size, so that a bigger input is a bigger machine's plan, not
		 * a more crowded one. */
		double demand = hog ? (double)(1 + rnd(8))
				    : (double)rnd(1000) / 1000.0 * 0.2 * nodes * CPUS_PER_NODE / nr;

		hog_cpus += hog ? (size_t)demand : 0;
		tasks[t] = (struct np_planner_task){
		    .demand = demand,
		    .bytes = &bytes[t * nodes],
		    .total = total,
		    .runs = &runs[t * nodes],
		    .home = -1,
		    .placeable = rnd(20) != 0,
		    .acted_on = rnd(4) == 0,
		};
	}
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s();

		if (np_planner_run(node, nodes, distance, tasks, nr, res, NULL) != 0) {
			fprintf(stderr, "np_planner_run failed\n");
			exit(1);
		}
		times[r] = now_s() - t0;
	}
	*moved = 0;
	for (size_t t = 0; t < nr; t++)
		*moved += res[t].reason == NP_PLAN_CAPACITY || res[t].reason == NP_PLAN_SWAP;
	qsort(times, RUNS, sizeof(times[0]), cmp_double);
	free(node);
	free(distance);
	free(tasks);
	free(res);
	free(bytes);
	free(runs);
	return times[RUNS / 2];
}

int main(int argc, char **argv)
{
	static const struct {
		size_t tasks;
		unsigned nodes;
	} table[] = {{1000, 2},	 {1000, 8},  {10000, 2}, {10000, 4},
		     {10000, 8}, {40000, 8}, {10000, 16}};
	size_t n = argc > 2 ? (size_t)(argc - 1) / 2 : sizeof(table) / sizeof(table[0]);

	printf("%8s %6s %6s %10s %14s %10s\n", "tasks", "nodes", "cpus", "ms", "ns/(task*node)",
	       "relieved");
	for (size_t i = 0; i < n; i++) {
		size_t tasks = argc > 2 ? strtoul(argv[1 + 2 * i], NULL, 10) : table[i].tasks;
		unsigned nodes =
		    argc > 2 ? (unsigned)strtoul(argv[2 + 2 * i], NULL, 10) : table[i].nodes;
		unsigned moved;
		double s;

		if (!tasks || !nodes) {
			fprintf(stderr, "usage: bench-planner [TASKS NODES]...\n");
			return 2;
		}
		s = measure(tasks, nodes, &moved);
		printf("%8zu %6u %6u %10.3f %14.2f %10u\n", tasks, nodes, nodes * CPUS_PER_NODE,
		       s * 1e3, s * 1e9 / ((double)tasks * nodes), moved);
	}
	return 0;
}
