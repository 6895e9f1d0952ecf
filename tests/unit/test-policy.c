/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placement policy as a table of cases: each names a machine, a task and
 * what the policy must do with it. Topologies are built in memory.
 */
#include "check.h"
#include "config.h"
#include "filter.h"
#include "policy.h"

#include <stdbool.h>

#define MAX_TEST_NODES 8
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* ---- machines ---- */

struct topo_spec {
	unsigned nr;
	unsigned cpus[MAX_TEST_NODES];		       /* CPUs per node, numbered in node order */
	uint64_t mem_gib[MAX_TEST_NODES];	       /* MemTotal */
	unsigned dist[MAX_TEST_NODES][MAX_TEST_NODES]; /* row: from, column: to */
};

static const struct topo_spec one_node = {
    .nr = 1,
    .cpus = {4},
    .mem_gib = {16},
    .dist = {{10}},
};

/* Two sockets: CPUs 0-3 on node 0, 4-7 on node 1. */
static const struct topo_spec two_nodes = {
    .nr = 2,
    .cpus = {4, 4},
    .mem_gib = {16, 16},
    .dist = {{10, 20}, {20, 10}},
};

/* Node 2 has CPUs (4-5) and no memory, node 3 memory and no CPUs. The
 * distances are asymmetric: from node 2's CPUs node 1 is nearer (18) than
 * node 0 (24), though from nodes 0 and 1 node 2 looks equally far. */
static const struct topo_spec four_nodes = {
    .nr = 4,
    .cpus = {2, 2, 2, 0},
    .mem_gib = {4, 4, 0, 8},
    .dist = {{10, 16, 22, 22}, {16, 10, 22, 26}, {24, 18, 10, 28}, {22, 22, 28, 10}},
};

/* Socket A: nodes 0-3, socket B: nodes 4-6, two CPUs each; node 7 is
 * memory behind socket A (a CXL expander): near to A, far from B. */
static const struct topo_spec eight_nodes = {
    .nr = 8,
    .cpus = {2, 2, 2, 2, 2, 2, 2, 0},
    .mem_gib = {8, 8, 8, 8, 8, 8, 8, 16},
    .dist =
	{
	    {10, 12, 12, 12, 32, 32, 32, 20},
	    {12, 10, 12, 12, 32, 32, 32, 20},
	    {12, 12, 10, 12, 32, 32, 32, 20},
	    {12, 12, 12, 10, 32, 32, 32, 20},
	    {30, 32, 32, 32, 10, 12, 12, 40},
	    {32, 32, 32, 32, 12, 10, 12, 40},
	    {32, 32, 32, 32, 12, 12, 10, 40},
	    {20, 20, 20, 20, 40, 40, 40, 10},
	},
};

static struct np_topology *build_topology(const struct topo_spec *spec)
{
	struct np_topology *topo = calloc(1, sizeof(*topo));
	int cpu = 0;

	topo->nr_nodes = spec->nr;
	topo->nodes = calloc(spec->nr, sizeof(*topo->nodes));
	topo->distance = calloc(spec->nr * spec->nr, sizeof(*topo->distance));
	for (unsigned i = 0; i < spec->nr; i++) {
		struct np_node *node = &topo->nodes[i];

		node->id = (int)i;
		node->mem_total = spec->mem_gib[i] * GiB;
		node->mem_free = node->mem_total / 4 * 3;
		for (unsigned c = 0; c < spec->cpus[i]; c++)
			np_bitmap_set(&node->cpus, (unsigned)cpu++);
		node->nr_cpus = spec->cpus[i];
		for (unsigned j = 0; j < spec->nr; j++)
			topo->distance[i * spec->nr + j] = spec->dist[i][j];
	}
	topo->max_cpu = cpu - 1;
	topo->cpu_node = malloc(sizeof(int) * (size_t)(cpu + 1));
	for (unsigned i = 0; i < spec->nr; i++)
		np_bitmap_for_each(c, &topo->nodes[i].cpus)
		{
			topo->cpu_node[c] = (int)i;
		}
	return topo;
}

static void require_parsed(int err, const char *list)
{
	if (err) {
		fprintf(stderr, "bad list in a test case: %s\n", list);
		abort();
	}
}

static void parse_cpus(struct np_bitmap *set, const char *list)
{
	require_parsed(np_bitmap_parse_list(set, list, strlen(list)), list);
}

static void parse_nodes(struct np_nodeset *set, const char *list)
{
	require_parsed(np_nodeset_parse_list(set, list, strlen(list)), list);
}

/* ---- the table ---- */

struct expect {
	enum np_action_kind kind;
	enum np_reason reason;
	int target; /* target_node */
	bool pages, affinity, partial;
	uint64_t move_mib;   /* move_bytes */
	const char *nodes;   /* target_nodes as a list, or NULL: not checked */
	const char *cpus;    /* target_cpus when affinity */
	const char *text;    /* a substring of reason_text, or NULL */
	const char *sources; /* source_nodes as a list, or NULL: not checked */
};

struct policy_case {
	const char *name;
	const struct topo_spec *topo;
	/* the machine */
	bool set_free; /* else each node is 3/4 free */
	uint64_t free_mib[MAX_TEST_NODES];
	double busy[MAX_TEST_NODES];
	bool kernel_balancing;
	/* config, on top of the defaults */
	enum np_affinity_mode affinity;
	enum np_kernel_balancing_mode kbal_mode;
	uint64_t max_migrate_mb; /* 0: default */
	/* the task */
	uint64_t mem_mib[MAX_TEST_NODES]; /* resident per node id */
	const char *threads;		  /* each thread's last CPU */
	const char *cpus_allowed;	  /* NULL: every CPU */
	const char *mems_allowed;	  /* NULL: every node */
	bool no_numa_maps, no_details;
	bool empty_masks;   /* status had no Cpus_allowed or Mems_allowed line */
	const char *cpuset; /* cpuset.cpus.effective; NULL: none read */
	const char *cpuset_mems; /* cpuset.mems.effective; NULL: none read */
	double cpu_percent; /* since the last look; 0: 100 */
	unsigned slots;	    /* numa_maps node slots; 0: one per node */
	struct expect want;
};

static const struct policy_case cases[] = {
    /* Two nodes. */
    {
	.name = "misplaced pages move to the node their threads run on",
	.topo = &two_nodes,
	.mem_mib = {192, 320},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 320,
		 .nodes = "0",
		 .text = "62% of 512 MiB on node 1, threads on node 0: move pages to node 0"},
    },
    {
	.name = "a task already local is kept",
	.topo = &two_nodes,
	.mem_mib = {500, 12},
	.threads = "0-3",
	.want = {NP_ACTION_KEEP, NP_REASON_LOCAL, -1,
		 .text = "97% of 512 MiB on node 0, where its threads run"},
    },
    {
	.name = "threads split over both nodes, each beside its own pages: keep",
	.topo = &two_nodes,
	.mem_mib = {256, 256},
	.threads = "0,4",
	.want = {NP_ACTION_KEEP, NP_REASON_LOCAL, -1,
		 .text = "100% of 512 MiB beside its threads on nodes 0-1"},
    },
    {
	.name = "threads split evenly, pages on one node: no single node is better",
	.topo = &two_nodes,
	.mem_mib = {0, 512},
	.threads = "0,4",
	.want = {NP_ACTION_KEEP, NP_REASON_NO_BETTER_NODE, -1,
		 .text = "50% of 512 MiB beside its threads on nodes 0-1: no placement"},
    },
    {
	.name = "three quarters of the thread time away from the pages: the pages follow",
	.topo = &two_nodes,
	.mem_mib = {0, 512},
	.threads = "0-2,4",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 512,
		 .nodes = "0", .sources = "1",
		 .text = "25% of 512 MiB beside its threads on nodes 0-1: move pages to node 0"},
    },
    {
	.name = "threads split 3:1, pages 1:1 beside them: consolidating is no better",
	.topo = &two_nodes,
	.mem_mib = {256, 256},
	.threads = "0-2,4",
	.want = {NP_ACTION_KEEP, NP_REASON_NO_BETTER_NODE, -1,
		 .text = "75% of 512 MiB beside its threads on nodes 0-1"},
    },
    {
	.name = "threads' node without headroom is not chosen; with affinity=none keep",
	.topo = &two_nodes,
	.set_free = true,
	.free_mib = {100, 12288},
	.mem_mib = {192, 320},
	.threads = "0-3",
	.want = {NP_ACTION_KEEP, NP_REASON_NO_ROOM, -1,
		 .text = "node 0 would keep less than 10% free"},
    },
    {
	.name = "unpinned: home where most of its memory is, threads and the rest go there",
	.topo = &two_nodes,
	.set_free = true,
	.free_mib = {100, 12288},
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {192, 320},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 1, .pages = true, .affinity = true,
		 .move_mib = 192, .cpus = "4-7",
		 .text = "home node 1 (where its memory is): threads to CPUs 4-7, pages to node 1"},
    },
    {
	.name = "unpinned: memory decides the home, not where the threads happen to run",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {192, 320},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 1, .pages = true, .affinity = true,
		 .move_mib = 192, .cpus = "4-7"},
    },
    {
	.name = "unpinned: threads go to memory that is all on the other node",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {0, 512},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 1, .affinity = true, .cpus = "4-7",
		 .text = "100% of 512 MiB on node 1, threads on node 0: home node 1 (where its "
			 "memory is): threads to CPUs 4-7"},
    },
    {
	.name = "unpinned, threads beside their memory on two nodes: no home would do better",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {256, 256},
	.threads = "0-1,4-5",
	.want = {NP_ACTION_KEEP, NP_REASON_LOCAL, -1,
		 .text = "100% of 512 MiB beside its threads on nodes 0-1"},
    },
    {
	.name = "unpinned within a one-node cpuset: no home to choose, memory path",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {0, 512},
	.threads = "4-7",
	.cpuset = "4-7",
	.cpus_allowed = "4-7",
	.want = {NP_ACTION_KEEP, NP_REASON_LOCAL, -1,
		 .text = "100% of 512 MiB on node 1, where its threads run"},
    },
    {
	.name = "unpinned, more CPU demand than a node has CPUs: no home, and no chase",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.cpu_percent = 600,
	.mem_mib = {0, 512},
	.threads = "0-5",
	.want = {NP_ACTION_KEEP, NP_REASON_SPREAD, -1,
		 .text = "no home (more CPU demand than a node has CPUs): its memory stays"},
    },
    {
	.name = "pinned by the user: pages move to the pinned node, affinity untouched",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {0, 512},
	.threads = "0-3",
	.cpus_allowed = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 512,
		 .text = "threads pinned to node 0: move pages to node 0"},
    },
    {
	.name = "pinned by the user, stale last CPU elsewhere: the pin wins",
	.topo = &two_nodes,
	.mem_mib = {0, 512},
	.threads = "4",
	.cpus_allowed = "0-1",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 512},
    },
    {
	.name = "memory and CPUs bound to one node, all there: nothing to choose",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {512, 0},
	.threads = "0-3",
	.cpus_allowed = "0-3",
	.mems_allowed = "0",
	.want = {NP_ACTION_SKIP, NP_REASON_BOUND, -1,
		 .text = "all 512 MiB on node 0, the only node allowed to hold it"},
    },
    {
	.name = "mems_allowed excludes the threads' node, affinity=none: keep",
	.topo = &two_nodes,
	.mem_mib = {256, 256},
	.threads = "0-3",
	.mems_allowed = "1",
	.want = {NP_ACTION_KEEP, NP_REASON_NO_BETTER_NODE, -1, .pages = false},
    },
    {
	.name = "mems_allowed excludes the threads' node, unpinned: home where it may use memory",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {256, 256},
	.threads = "0-3",
	.mems_allowed = "1",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 1, .pages = true, .affinity = true,
		 .move_mib = 256, .cpus = "4-7"},
    },
    {
	.name = "cpuset.mems excludes where its memory is, unpinned: homed inside the cpuset",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {0, 512},
	.threads = "0-3",
	.cpuset_mems = "0",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 0, .pages = true, .affinity = true,
		 .move_mib = 512, .cpus = "0-3"},
    },
    {
	.name = "cpuset.mems excludes the threads' node, affinity=none: no page goes there",
	.topo = &two_nodes,
	.mem_mib = {0, 512},
	.threads = "0-3",
	.cpuset_mems = "1",
	.want = {NP_ACTION_SKIP, NP_REASON_BOUND, -1,
		 .text = "all 512 MiB on node 1, the only node allowed to hold it"},
    },
    {
	.name = "cpuset.cpus narrower than the mask before ours: the home's CPUs inside it",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {0, 512},
	.threads = "0-1,4",
	.cpus_allowed = "0-7",
	.cpuset = "0-1,4-5",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 1, .affinity = true, .cpus = "4-5"},
    },
    {
	.name = "kernel NUMA balancing on, kernel_balancing=defer: skip, say what we would do",
	.topo = &two_nodes,
	.kernel_balancing = true,
	.mem_mib = {192, 320},
	.threads = "0-3",
	.want = {NP_ACTION_SKIP, NP_REASON_KERNEL_BALANCING, 0,
		 .text = "kernel NUMA balancing is on, deferring: 62% of 512 MiB"},
    },
    {
	.name = "kernel NUMA balancing on, kernel_balancing=ignore: act",
	.topo = &two_nodes,
	.kernel_balancing = true,
	.kbal_mode = NP_KBAL_IGNORE,
	.mem_mib = {192, 320},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 320},
    },
    {
	.name = "a large move is capped by max_migrate_mb_per_scan and says it is partial",
	.topo = &two_nodes,
	.mem_mib = {512, 3072},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .partial = true,
		 .move_mib = 1024, .text = "move pages to node 0 (1024 MiB of 3072 MiB this scan)"},
    },
    {
	.name = "larger than either node and already on both: keep",
	.topo = &two_nodes,
	.set_free = true,
	.free_mib = {1024, 4096},
	.mem_mib = {14000, 10000},
	.threads = "0-3",
	.want = {NP_ACTION_KEEP, NP_REASON_TOO_BIG, 0, .nodes = "0-1",
		 .text = "fits no single node, 100% already on nodes 0-1"},
    },
    {
	.name = "no numa_maps data: skip",
	.topo = &two_nodes,
	.threads = "0",
	.no_numa_maps = true,
	.want = {NP_ACTION_SKIP, NP_REASON_NO_MEMORY_DATA, -1, .pages = false},
    },
    {
	.name = "numa_maps with nothing resident: skip",
	.topo = &two_nodes,
	.threads = "0",
	.want = {NP_ACTION_SKIP, NP_REASON_NO_MEMORY_DATA, -1, .pages = false},
    },
    {
	.name = "allowed CPUs and nodes unknown: skip rather than guess",
	.topo = &two_nodes,
	.mem_mib = {0, 512},
	.threads = "0",
	.no_details = true,
	.want = {NP_ACTION_SKIP, NP_REASON_NO_DETAILS, -1, .pages = false},
    },
    {
	.name = "one node: nowhere to go",
	.topo = &one_node,
	.mem_mib = {512},
	.threads = "0-3",
	.want = {NP_ACTION_KEEP, NP_REASON_SINGLE_NODE, -1, .pages = false},
    },

    {
	.name = "pages on a node that is not online count as misplaced",
	.topo = &two_nodes,
	.slots = 4,
	.mem_mib = {400, 0, 0, 112},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 112,
		 .nodes = "0", .sources = "3"},
    },
    {
	.name = "no Cpus_allowed or Mems_allowed line: no limit, not bound",
	.topo = &two_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.empty_masks = true,
	.mem_mib = {192, 320},
	.threads = "0-3",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 1, .pages = true, .affinity = true,
		 .move_mib = 192, .cpus = "4-7", .sources = "0"},
    },

    /* Four nodes: a memoryless CPU node and a memory-only node. */
    {
	.name = "pages on the memory-only node come to the threads",
	.topo = &four_nodes,
	.mem_mib = {[3] = 1024},
	.threads = "0-1",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 1024},
    },
    {
	.name = "threads' node full: the nearest node with room, not the far one",
	.topo = &four_nodes,
	.set_free = true,
	.free_mib = {100, 3072, 0, 6144},
	.mem_mib = {[3] = 1024},
	.threads = "0-1",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 1, .pages = true, .move_mib = 1024},
    },
    {
	.name = "threads on a memoryless node: pages go to the node nearest from its CPUs",
	.topo = &four_nodes,
	.mem_mib = {1024},
	.threads = "4-5",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 1, .pages = true, .move_mib = 1024,
		 .text = "threads on node 2: move pages to node 1"},
    },
    {
	.name = "unpinned: never homed on the memory-only node",
	.topo = &four_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {[3] = 2048},
	.threads = "0-1",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 0, .pages = true, .affinity = true,
		 .partial = true, .move_mib = 1024, .cpus = "0-1"},
    },
    {
	.name = "mems_allowed excludes the best node: the next allowed one",
	.topo = &four_nodes,
	.mem_mib = {[3] = 1024},
	.threads = "0-1",
	.mems_allowed = "1,3",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 1, .pages = true, .move_mib = 1024},
    },

    {
	.name = "unpinned within its cpuset over two nodes: homed inside it",
	.topo = &four_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.busy = {0.95},
	.mem_mib = {[3] = 1024},
	.threads = "0-1",
	.cpus_allowed = "1-5",
	.cpuset = "1-5",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 0, .pages = true, .affinity = true,
		 .move_mib = 1024, .cpus = "1"},
    },
    {
	.name = "a mask narrower than its cpuset is its user's: memory follows the threads",
	.topo = &four_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {[3] = 1024},
	.threads = "0-1",
	.cpus_allowed = "1-5",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 1024,
		 .text = "threads on node 0: move pages to node 0"},
    },

    /* Eight nodes: two sockets and far memory. */
    {
	.name = "larger than any node: spread over the fewest nodes nearest the threads",
	.topo = &eight_nodes,
	.set_free = true,
	.free_mib = {1024, 6144, 6144, 6144, 2048, 6144, 6144, 1024},
	.max_migrate_mb = 8192,
	.mem_mib = {6144, [4] = 4096},
	.threads = "0-1",
	.want = {NP_ACTION_SPREAD, NP_REASON_TOO_BIG, 0, .pages = true, .move_mib = 4096,
		 .nodes = "0-1",
		 .text = "10.0 GiB fits no single node: spread over nodes 0-1, move 4096 MiB"},
    },
    {
	.name = "unpinned, across sockets: threads go to most of the memory",
	.topo = &eight_nodes,
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {205, [4] = 307},
	.threads = "0-1",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 4, .pages = true, .affinity = true,
		 .move_mib = 205, .cpus = "8-9"},
    },
    {
	.name = "unpinned, the memory's node busy with other work: the next node with CPU room",
	.topo = &eight_nodes,
	.busy = {0, 0, 0, 0, 1.0},
	.affinity = NP_AFFINITY_UNPINNED,
	.mem_mib = {205, [4] = 307},
	.threads = "0-1",
	.want = {NP_ACTION_MOVE, NP_REASON_HOME, 0, .pages = true, .affinity = true,
		 .move_mib = 307, .cpus = "0-1",
		 .text = "home node 0 (its memory's node has no CPU room for it)"},
    },
    {
	.name = "same socket, moderately misplaced: still moves home",
	.topo = &eight_nodes,
	.mem_mib = {300, 212},
	.threads = "0-1",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 0, .pages = true, .move_mib = 212},
    },
    {
	.name = "far memory behind the other socket comes to a node of this socket",
	.topo = &eight_nodes,
	.mem_mib = {[7] = 1024},
	.threads = "10-11",
	.want = {NP_ACTION_MOVE, NP_REASON_MISPLACED, 5, .pages = true, .move_mib = 1024},
    },
};

/* Everything a case needs, owned by the test. */
struct built {
	struct np_topology *topo;
	uint64_t free_bytes[MAX_TEST_NODES];
	struct np_policy_machine machine;
	struct np_config cfg;
	struct np_task task;
	struct np_thread threads[64];
	uint64_t node_bytes[MAX_TEST_NODES];
	struct np_policy_task input;
};

static void build_task(struct built *b, const char *threads, const uint64_t *mem_mib)
{
	struct np_bitmap last;
	unsigned n = 0;

	b->task.nr_thread_samples = 0;
	b->task.rss_bytes = 0;
	for (unsigned i = 0; i < MAX_TEST_NODES; i++) {
		b->node_bytes[i] = mem_mib[i] * MiB;
		b->task.rss_bytes += b->node_bytes[i];
	}
	parse_cpus(&last, threads);
	np_bitmap_for_each(cpu, &last)
	{
		b->threads[n] = (struct np_thread){
		    .tid = b->task.pid + (int)n, .last_cpu = cpu, .cpu_ticks = 100};
		n++;
	}
	b->task.threads = b->threads;
	b->task.nr_thread_samples = n;
	b->task.nr_threads = n;
	b->task.last_cpu = n ? b->threads[0].last_cpu : 0;
}

/* Decide, and commit the next history as the engine does when the action
 * takes effect (here it always does). */
static void decide(const struct np_policy_machine *m, const struct np_config *cfg,
		   const struct np_policy_task *t, struct np_action *a)
{
	struct np_policy_history next;

	np_policy_decide(m, cfg, t, a, &next);
	if (t->hist)
		*(struct np_policy_history *)t->hist = next; /* the test owns it */
}

static void build(struct built *b, const struct policy_case *c)
{
	memset(b, 0, sizeof(*b));
	b->topo = build_topology(c->topo);
	for (unsigned i = 0; i < c->topo->nr; i++)
		b->free_bytes[i] = c->set_free ? c->free_mib[i] * MiB : b->topo->nodes[i].mem_free;
	b->machine = (struct np_policy_machine){
	    .topo = b->topo,
	    .node_free = b->free_bytes,
	    .node_busy = c->busy,
	    .kernel_numa_balancing = c->kernel_balancing,
	};
	np_config_init(&b->cfg);
	b->cfg.affinity = c->affinity;
	b->cfg.kernel_balancing = c->kbal_mode;
	if (c->max_migrate_mb)
		b->cfg.max_migrate_mb_per_scan = c->max_migrate_mb;

	b->task.pid = 4242;
	b->task.start_ticks = 777;
	strcpy(b->task.comm, "worker");
	b->task.state = 'R';
	b->task.age_ms = 600000;
	b->task.has_details = !c->no_details;
	parse_cpus(&b->task.cpus_allowed, c->cpus_allowed ? c->cpus_allowed : "0-63");
	parse_nodes(&b->task.mems_allowed, c->mems_allowed ? c->mems_allowed : "0-7");
	if (c->empty_masks) {
		np_bitmap_zero(&b->task.cpus_allowed);
		np_nodeset_zero(&b->task.mems_allowed);
	}
	if (c->cpuset)
		parse_cpus(&b->task.cpuset_cpus, c->cpuset);
	if (c->cpuset_mems)
		parse_nodes(&b->task.cpuset_mems, c->cpuset_mems);
	build_task(b, c->threads, c->mem_mib);
	if (b->task.rss_bytes == 0)
		b->task.rss_bytes = 512 * MiB; /* VmRSS counts what numa_maps may not */
	b->input = (struct np_policy_task){
	    .task = &b->task,
	    .node_bytes = c->no_numa_maps ? NULL : b->node_bytes,
	    .nr_node_slots = c->slots ? c->slots : c->topo->nr,
	    .cpu_percent = c->cpu_percent ? c->cpu_percent : 100,
	};
}

static void unbuild(struct built *b)
{
	np_topology_free(b->topo);
}

static bool cpus_are(const struct np_bitmap *set, const char *want)
{
	struct np_bitmap w;

	parse_cpus(&w, want);
	return np_bitmap_equal(set, &w);
}

static bool nodes_are(const struct np_nodeset *set, const char *want)
{
	struct np_nodeset w;

	parse_nodes(&w, want);
	return np_nodeset_equal(set, &w);
}

static void check_action(const char *name, const struct np_action *a, const struct expect *w)
{
	int before = check_failures;

	CHECK_STR(np_action_kind_name(a->kind), np_action_kind_name(w->kind));
	CHECK_STR(np_reason_name(a->reason), np_reason_name(w->reason));
	CHECK_INT(a->target_node, w->target);
	CHECK_INT(a->move_pages, w->pages);
	CHECK_INT(a->set_affinity, w->affinity);
	CHECK_INT(a->partial, w->partial);
	CHECK_U64(a->move_bytes, w->move_mib * MiB);
	if (w->nodes)
		CHECK(nodes_are(&a->target_nodes, w->nodes));
	if (w->affinity && w->cpus)
		CHECK(cpus_are(&a->target_cpus, w->cpus));
	if (!w->affinity)
		CHECK(np_bitmap_empty(&a->target_cpus) || a->kind == NP_ACTION_SKIP);
	if (w->text)
		CHECK(strstr(a->reason_text, w->text) != NULL);
	if (w->sources)
		CHECK(nodes_are(&a->source_nodes, w->sources));
	CHECK(a->reason_text[0] != '\0' && !strchr(a->reason_text, '\n'));
	if (check_failures != before)
		fprintf(stderr, "  in case \"%s\": %s %s, \"%s\"\n", name,
			np_action_kind_name(a->kind), np_reason_name(a->reason), a->reason_text);
}

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct policy_case *c = &cases[i];
		struct built *b = malloc(sizeof(*b));
		struct np_policy_history hist;
		struct np_action a;

		build(b, c);
		np_policy_history_init(&hist);
		b->input.hist = &hist;
		/* Each case is a situation that lasts: threads that are not
		 * pinned must be seen on the same side for hysteresis_periods
		 * looks before a first move. */
		for (unsigned look = 0; look < b->cfg.hysteresis_periods; look++) {
			decide(&b->machine, &b->cfg, &b->input, &a);
			if (a.reason != NP_REASON_HYSTERESIS || hist.target_node >= 0)
				break;
		}
		check_action(c->name, &a, &c->want);
		if (getenv("NP_TEST_VERBOSE"))
			printf("%-6s %-16s %s\n", np_action_kind_name(a.kind),
			       np_reason_name(a.reason), a.reason_text);
		CHECK_INT(a.pid, 4242);
		CHECK_U64(a.start_ticks, 777);
		/* Whatever it decided, it never targets a node outside
		 * Mems_allowed, and never gives threads CPUs outside their own
		 * allowed set or on a node without CPUs. */
		if (a.target_node >= 0 && a.kind != NP_ACTION_SKIP && !c->empty_masks)
			CHECK(np_nodeset_test(&b->task.mems_allowed, (unsigned)a.target_node));
		/* Nor one outside its cgroup's cpuset, CPUs or memory. */
		if (a.target_node >= 0 && a.kind != NP_ACTION_SKIP)
			CHECK(np_task_may_use_node(&b->task, a.target_node));
		if (a.set_affinity && c->cpuset)
			CHECK(np_bitmap_subset(&a.target_cpus, &b->task.cpuset_cpus));
		if (a.set_affinity && !c->empty_masks)
			CHECK(np_bitmap_subset(&a.target_cpus, &b->task.cpus_allowed));
		/* A deferred decision leaves no trace in the history. */
		if (a.reason == NP_REASON_KERNEL_BALANCING)
			CHECK_INT(hist.target_node, -1);
		else if (a.kind == NP_ACTION_MOVE || a.kind == NP_ACTION_SPREAD)
			CHECK_INT(hist.target_node, a.target_node);
		unbuild(b);
		free(b);
	}
}

/* ---- the filter and kernel threads, checked again at the decision ---- */

static void test_decide_screens(void)
{
	static const struct policy_case base = {
	    .name = "screened",
	    .topo = &two_nodes,
	    .mem_mib = {0, 512},
	    .threads = "0-3",
	};
	static char *const own_comm[] = {"test*", NULL};
	struct built *b = malloc(sizeof(*b));
	struct np_filter *filter;
	struct np_config cfg;
	struct np_action a;

	build(b, &base);
	np_config_init(&cfg);
	cfg.exclude_comm = (struct np_strv){.v = (char **)own_comm, .n = 1};
	CHECK_INT(np_filter_new(&cfg, &filter), 0);
	snprintf(b->task.comm, sizeof(b->task.comm), "testtask");
	b->machine.filter = filter;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_SKIP);
	CHECK_STR(np_reason_name(a.reason), "excluded");
	CHECK(strstr(a.reason_text, "matches exclude_comm \"test*\"") != NULL);
	b->machine.filter = NULL;
	b->task.kthread = true;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_STR(np_reason_name(a.reason), "kernel-thread");
	np_filter_free(filter);
	unbuild(b);
	free(b);
}

/* ---- memory the daemon may not move ---- */

/* Threads pinned to node 0. What it may move decides; what it may not is
 * said, and is the reason only when it is what keeps the task remote. */
static void test_unmovable(void)
{
	static const struct policy_case base = {
	    .name = "unmovable",
	    .topo = &two_nodes,
	    .mem_mib = {0, 100},
	    .threads = "0-1",
	    .cpus_allowed = "0-1",
	};
	struct built *b = malloc(sizeof(*b));
	uint64_t all[MAX_TEST_NODES], policy[NP_MPOL_UNKNOWN + 1] = {0};
	struct np_action a;

	build(b, &base);
	b->input.all_node_bytes = all;
	b->input.policy_bytes = policy;

	/* 400 MiB under prefer:0 beside the threads, a 100 MiB heap away:
	 * the heap moves, the policy's memory is said to stay. */
	all[0] = 400 * MiB;
	all[1] = 100 * MiB;
	policy[NP_MPOL_PREFER] = 400 * MiB;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_MOVE);
	CHECK_U64(a.move_bytes, 100 * MiB);
	CHECK(strstr(a.reason_text, "; 400 MiB under its own memory policy (prefer) stays"));
	/* Its locality counts all of it: 80%. */
	CHECK(a.locality > 0.79 && a.locality < 0.81);

	/* The heap beside the threads, 400 MiB bound to node 1: what it may
	 * move is local, the policy's memory is why it is not. */
	b->node_bytes[0] = 100 * MiB;
	b->node_bytes[1] = 0;
	all[0] = 100 * MiB;
	all[1] = 400 * MiB;
	policy[NP_MPOL_PREFER] = 0;
	policy[NP_MPOL_BIND] = 400 * MiB;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_KEEP);
	CHECK_STR(np_reason_name(a.reason), "user-policy");
	CHECK_STR(a.reason_text,
		  "400 MiB under its own memory policy (bind); the 100 MiB it may move is local");

	/* The same with a small remote policy part: local it is. */
	all[1] = 5 * MiB;
	policy[NP_MPOL_BIND] = 5 * MiB;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_STR(np_reason_name(a.reason), "local");

	/* Nothing it may move, shared file pages away: shared. */
	b->node_bytes[0] = 0;
	all[0] = 0;
	all[1] = 300 * MiB;
	policy[NP_MPOL_BIND] = 0;
	b->input.shared_file_bytes = 300 * MiB;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_KEEP);
	CHECK_STR(np_reason_name(a.reason), "shared");
	CHECK_STR(a.reason_text, "300 MiB of files other tasks map");
	CHECK_INT(a.thread_node, 0);
	CHECK(a.locality < 0.01);
	unbuild(b);
	free(b);
}

/* ---- hysteresis ---- */

/* Input X wants the task on node 0, input Y on node 1. */
static const uint64_t mem_x[MAX_TEST_NODES] = {100, 412};
static const uint64_t mem_y[MAX_TEST_NODES] = {412, 100};

static const struct policy_case two_node_base = {
    .name = "hysteresis",
    .topo = &two_nodes,
    .mem_mib = {100, 412},
    .threads = "0-3",
};

/* Feed @pattern ("XYXY...") one look each; return how many looks moved and
 * store the target of each look in @targets (-1: no move). */
static unsigned run_looks(struct built *b, struct np_policy_history *hist, const char *pattern,
			  int *targets)
{
	unsigned moves = 0;

	for (unsigned i = 0; pattern[i]; i++) {
		struct np_action a;
		bool x = pattern[i] == 'X';

		build_task(b, x ? "0-3" : "4-7", x ? mem_x : mem_y);
		b->input.hist = hist;
		decide(&b->machine, &b->cfg, &b->input, &a);
		CHECK(a.kind == NP_ACTION_MOVE || a.reason == NP_REASON_HYSTERESIS);
		targets[i] = a.kind == NP_ACTION_MOVE ? a.target_node : -1;
		moves += a.kind == NP_ACTION_MOVE;
	}
	return moves;
}

static void test_no_ping_pong(void)
{
	struct built *b = malloc(sizeof(*b));
	struct np_policy_history hist;
	int targets[32];

	build(b, &two_node_base);

	/* Inputs that flip every period never settle: threads that are not
	 * pinned need three looks that agree before a first move. */
	np_policy_history_init(&hist);
	CHECK_INT(run_looks(b, &hist, "XYXYXYXYXYXYXYXYXYXY", targets), 0);
	CHECK_INT(hist.target_node, -1);
	CHECK_INT(hist.flips, 0);

	/* The same with hysteresis off: every period moves, the other way. */
	b->cfg.hysteresis_periods = 0;
	np_policy_history_init(&hist);
	CHECK_INT(run_looks(b, &hist, "XYXYXYXY", targets), 8);
	CHECK_INT(targets[1], 1);
	CHECK_INT(hist.flips, 7);
	b->cfg.hysteresis_periods = 3;

	/* The first move: looks 1 and 2 hold, look 3 moves. */
	np_policy_history_init(&hist);
	CHECK_INT(run_looks(b, &hist, "XXX", targets), 1);
	CHECK_INT(targets[1], -1);
	CHECK_INT(targets[2], 0);

	/* A lasting change is followed, once, after hysteresis_periods looks:
	 * looks 1 and 2 hold, look 3 turns to node 1, and later looks carry on
	 * toward it. */
	CHECK_INT(run_looks(b, &hist, "YYYYY", targets), 3);
	CHECK_INT(targets[0], -1);
	CHECK_INT(targets[1], -1);
	CHECK_INT(targets[2], 1);
	CHECK_INT(targets[4], 1);
	CHECK_INT(hist.flips, 1);

	/* Going back needs twice the streak after one flip: six looks. */
	CHECK_INT(run_looks(b, &hist, "XXXXXX", targets), 1);
	CHECK_INT(targets[4], -1);
	CHECK_INT(targets[5], 0);
	CHECK_INT(hist.flips, 2);

	unbuild(b);
	free(b);
}

/* A partial move carries on in the next scans until the task is local. */
static void test_partial_continues(void)
{
	static const struct policy_case base = {
	    .name = "partial",
	    .topo = &two_nodes,
	    .mem_mib = {512, 3072},
	    .threads = "0-3",
	    .cpus_allowed = "0-3", /* pinned: moves from the first look */
	};
	struct built *b = malloc(sizeof(*b));
	struct np_policy_history hist;
	uint64_t mem[MAX_TEST_NODES] = {512, 3072};
	struct np_action a;
	unsigned looks = 0;

	build(b, &base);
	np_policy_history_init(&hist);
	b->input.hist = &hist;
	for (;;) {
		build_task(b, "0-3", mem);
		decide(&b->machine, &b->cfg, &b->input, &a);
		if (a.kind != NP_ACTION_MOVE)
			break;
		CHECK_INT(a.target_node, 0);
		CHECK(a.move_bytes <= 1024 * MiB);
		/* What the actuator would do. */
		mem[1] -= a.move_bytes / MiB;
		mem[0] += a.move_bytes / MiB;
		if (++looks > 10)
			break;
	}
	/* 3072 MiB in three steps of 1024 MiB, then local. */
	CHECK_INT(looks, 3);
	CHECK_STR(np_reason_name(a.reason), "local");
	unbuild(b);
	free(b);
}

/* The mask the policy set is not mistaken for the user's pinning, a mask
 * the user set over it is theirs, and one no longer wanted is given back. */
/* A 512 MiB task nobody pinned, 192 MiB on node 0 and 320 on node 1, its
 * threads on node 0's CPUs, at 1 s on the machine's clock, decided with
 * @hist (made fresh). */
static struct built *build_unpinned(struct np_policy_history *hist)
{
	static const struct policy_case unpinned = {
	    .name = "unpinned",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .mem_mib = {192, 320},
	    .threads = "0-3",
	};
	struct built *b = malloc(sizeof(*b));

	build(b, &unpinned);
	b->machine.now_ms = 1000;
	np_policy_history_init(hist);
	b->input.hist = hist;
	return b;
}

static void test_own_narrowing_is_not_pinning(void)
{
	static const uint64_t all_on_1[MAX_TEST_NODES] = {0, 512};
	struct np_policy_history hist;
	struct built *b = build_unpinned(&hist);
	struct np_action a;

	/* Nobody pinned it: homed at the first look, threads narrowed first. */
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_MOVE);
	CHECK(a.set_affinity && !a.widen);
	CHECK(cpus_are(&a.from_cpus, "0-63"));
	CHECK(cpus_are(&a.target_cpus, "4-7"));
	CHECK(hist.narrowed);
	CHECK_INT(hist.home_node, 1);
	CHECK_U64(hist.home_since_ms, 1000);
	CHECK(a.planned);
	CHECK_INT(a.plan_home, 1);
	CHECK_INT(a.plan_reason, NP_PLAN_MEMORY);

	/* The actuator narrowed it; later all its memory is on node 1. */
	b->task.cpus_allowed = a.target_cpus;
	build_task(b, "4-7", all_on_1);
	b->machine.now_ms = 5000;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_KEEP);
	CHECK(strstr(a.reason_text, "pinned") == NULL);
	CHECK(strstr(a.reason_text, "home node 1 (held") != NULL);
	CHECK(strstr(a.reason_text, "threads kept on CPUs 4-7 (were 0-63)") != NULL);
	CHECK(a.narrowed && cpus_are(&a.narrowed_from, "0-63") && cpus_are(&a.narrowed_to, "4-7"));
	CHECK(hist.narrowed);
	CHECK_U64(hist.home_since_ms, 1000);

	/* The user pins it to node 0 meanwhile: that mask is theirs. */
	b->task.cpus_allowed = (struct np_bitmap){{0}};
	parse_cpus(&b->task.cpus_allowed, "0-3");
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(strstr(a.reason_text, "threads pinned to node 0: move pages to node 0") != NULL);
	CHECK(!a.set_affinity);
	CHECK(!hist.narrowed);
	CHECK_INT(hist.home_node, -1);

	/* Someone else set a mask like ours, with no history of ours: a pin. */
	np_policy_history_init(&hist);
	parse_cpus(&b->task.cpus_allowed, "4-7");
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(strstr(a.reason_text, "on node 1, where its threads run") != NULL);
	CHECK(!a.set_affinity && !a.planned);

	/* Ours again, and then affinity = never: the mask from before comes
	 * back, for the threads that still have ours. */
	np_policy_history_init(&hist);
	parse_cpus(&b->task.cpus_allowed, "0-63");
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(hist.narrowed);
	b->task.cpus_allowed = a.target_cpus;
	b->cfg.affinity = NP_AFFINITY_NEVER;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_MOVE);
	CHECK_STR(np_reason_name(a.reason), "given-back");
	CHECK(a.set_affinity && a.widen);
	CHECK(cpus_are(&a.from_cpus, "4-7"));
	CHECK(cpus_are(&a.target_cpus, "0-63"));
	CHECK(!hist.narrowed);
	unbuild(b);
	free(b);
}

/* A home narrows only a task that runs: what it starts inherits the mask.
 * One under NP_HOME_MIN_CPU_PERCENT gets no home and its memory stays
 * (its threads are free: memory sent after them would chase them); once
 * busy it is homed, and a home it has holds while it idles; pid 1 is
 * never homed. */
static void test_idle_tasks_are_not_narrowed(void)
{
	struct np_policy_history hist;
	struct built *b = build_unpinned(&hist);
	struct np_action a;

	b->input.cpu_percent = NP_HOME_MIN_CPU_PERCENT / 2;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.set_affinity && !a.move_pages && !a.planned && !hist.narrowed);
	CHECK_INT(a.kind, NP_ACTION_KEEP);
	CHECK_STR(np_reason_name(a.reason), "idle");
	CHECK(strstr(a.reason_text, "no home (2.5% of a CPU since its last look, under 5%): its memory stays") !=
	      NULL);

	b->input.cpu_percent = NP_HOME_MIN_CPU_PERCENT;
	np_policy_history_init(&hist);
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.set_affinity && !a.widen && a.planned && hist.narrowed);
	CHECK(cpus_are(&a.target_cpus, "4-7"));

	/* Idle again, its mask as the daemon set it: the home holds. */
	b->task.cpus_allowed = a.target_cpus;
	b->input.cpu_percent = 0.01;
	b->machine.now_ms = 5000;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.widen && a.planned && hist.narrowed);
	CHECK(strstr(a.reason_text, "home node 1 (held") != NULL);
	CHECK(a.narrowed && cpus_are(&a.narrowed_to, "4-7"));

	/* init, however busy, is not. */
	np_policy_history_init(&hist);
	parse_cpus(&b->task.cpus_allowed, "0-63");
	b->task.pid = 1;
	b->input.cpu_percent = 100;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.set_affinity && !a.move_pages && !a.planned && !hist.narrowed);
	CHECK_STR(np_reason_name(a.reason), "launcher");
	CHECK(strstr(a.reason_text, "no home (pid 1 starts every service)") != NULL);
	unbuild(b);
	free(b);
}

/* A task whose children use CPU between its looks (a launcher) is not
 * narrowed: they would all run on its home's CPUs. A home it has is given
 * back, and none is given for NP_POLICY_HOME_HOLD_MS after the last look
 * that saw it launch. */
static void test_launchers_are_not_narrowed(void)
{
	struct np_policy_history hist;
	struct built *b = build_unpinned(&hist);
	struct np_action a;

	b->input.launched = true;
	b->input.launched_ms = 1000;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.set_affinity && !a.move_pages && !a.planned && !hist.narrowed);
	CHECK_STR(np_reason_name(a.reason), "launcher");
	CHECK(strstr(a.reason_text, "no home (it starts processes): its memory stays") != NULL);

	/* Homed while it launched nothing; then it starts a build. */
	np_policy_history_init(&hist);
	b->input.launched = false;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.set_affinity && !a.widen && hist.narrowed);
	b->task.cpus_allowed = a.target_cpus;
	b->machine.now_ms = 2000;
	b->input.launched = true;
	b->input.launched_ms = 2000;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_MOVE);
	CHECK_STR(np_reason_name(a.reason), "given-back");
	CHECK(a.set_affinity && a.widen && cpus_are(&a.target_cpus, "0-63"));
	CHECK(strstr(a.reason_text, "it starts processes") != NULL);
	CHECK(!hist.narrowed);
	CHECK_U64(hist.given_back_ms, 2000);

	/* The build ended: no home for a minute after the last look that
	 * saw it, then one. */
	parse_cpus(&b->task.cpus_allowed, "0-63");
	b->machine.now_ms = 2000 + NP_POLICY_HOME_HOLD_MS - 1;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.set_affinity && !hist.narrowed);
	b->machine.now_ms = 2000 + NP_POLICY_HOME_HOLD_MS;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.set_affinity && !a.widen && hist.narrowed);
	unbuild(b);
	free(b);
}

/* A home holds for NP_POLICY_HOME_HOLD_MS; a task that outgrows its home
 * (more busy threads than it has CPUs, all of them used) is spread and its
 * mask given back. */
static void test_home_hold_and_outgrow(void)
{
	static const struct policy_case base = {
	    .name = "hold",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .mem_mib = {192, 320},
	    .threads = "0-3",
	};
	static const uint64_t mostly_on_0[MAX_TEST_NODES] = {500, 12};
	struct built *b = malloc(sizeof(*b));
	struct np_policy_history hist;
	struct np_action a;

	build(b, &base);
	np_policy_history_init(&hist);
	b->input.hist = &hist;
	b->machine.now_ms = 10000;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(hist.home_node, 1);
	b->task.cpus_allowed = a.target_cpus;

	/* Its memory turns out to be on node 0 (say, it allocated anew): held
	 * for a minute, the home stays and pages go there. */
	build_task(b, "4-7", mostly_on_0);
	b->machine.now_ms = 10000 + NP_POLICY_HOME_HOLD_MS - 1;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.plan_home, 1);
	CHECK_INT(a.plan_reason, NP_PLAN_HELD);
	CHECK_INT(a.target_node, 1);
	CHECK(!a.set_affinity);
	/* After the hold the home is kept while its node has room: the
	 * memory comes home, the threads stay. */
	b->machine.now_ms = 10000 + NP_POLICY_HOME_HOLD_MS;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.plan_home, 1);
	CHECK_INT(a.plan_reason, NP_PLAN_KEPT);
	CHECK(a.move_pages && !a.set_affinity);
	CHECK_U64(hist.home_since_ms, 10000);

	/* Six busy threads (two last seen where they may no longer run) kept
	 * on node 1's four CPUs, all four used: it outgrew the node, and gets
	 * its CPUs back. */
	build_task(b, "0-1,4-7", mostly_on_0);
	b->input.cpu_percent = 400;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.plan_reason, NP_PLAN_SPREAD);
	CHECK_STR(np_reason_name(a.reason), "spread");
	CHECK(a.set_affinity && a.widen);
	CHECK(cpus_are(&a.target_cpus, "0-63"));
	CHECK(!hist.narrowed);
	unbuild(b);
	free(b);
}

/* ---- batches ---- */

/* Two tasks want the same node, which has room for one: the second one sees
 * the first one's pages as already there. */
static void test_batch_accounts_planned_moves(void)
{
	static const struct policy_case base = {
	    .name = "batch",
	    .topo = &two_nodes,
	    .set_free = true,
	    .free_mib = {2048, 12288},
	    .mem_mib = {0, 300},
	    .threads = "0-3",
	    .cpus_allowed = "0-3", /* pinned: moves from the first look */
	};
	struct built *b1 = malloc(sizeof(*b1)), *b2 = malloc(sizeof(*b2));
	struct np_policy_task tasks[2];
	struct np_action actions[2];

	build(b1, &base);
	build(b2, &base);
	b2->task.pid = 4343;
	tasks[0] = b1->input;
	tasks[1] = b2->input;
	tasks[1].task = &b2->task;
	tasks[1].node_bytes = b2->node_bytes;

	/* Alone, each would move. */
	decide(&b1->machine, &b1->cfg, &tasks[1], &actions[1]);
	CHECK_INT(actions[1].kind, NP_ACTION_MOVE);

	CHECK_INT(np_policy_decide_all(&b1->machine, &b1->cfg, tasks, 2, actions, NULL, NULL, NULL),
		  0);
	CHECK_INT(actions[0].kind, NP_ACTION_MOVE);
	CHECK_INT(actions[0].target_node, 0);
	CHECK_INT(actions[1].pid, 4343);
	CHECK_INT(actions[1].kind, NP_ACTION_KEEP);
	CHECK_STR(np_reason_name(actions[1].reason), "no-room");
	unbuild(b1);
	unbuild(b2);
	free(b1);
	free(b2);
}

/* Two tasks nobody pinned that write the same shared object are homed
 * together. A: 400 MiB on node 0; B: 100 MiB on node 1. Alone, B's home is
 * node 1; as a group (one CPU each, two together, within a node's four)
 * the unit's memory is mostly on node 0, so both are homed there and B's
 * 100 MiB follows. Without the key in common, each goes its own way; and
 * two compete hogs of two CPUs each on nodes of four stay one group. */
static void test_groups(void)
{
	static const struct policy_case a_case = {
	    .name = "group a",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .mem_mib = {400, 0},
	    .threads = "0-2",
	};
	static const struct policy_case b_case = {
	    .name = "group b",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .mem_mib = {0, 100},
	    .threads = "4-6",
	};
	static const uint64_t shm = 0x1234, other = 0x5678;
	struct built *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct np_policy_task tasks[2];
	struct np_action actions[2];

	build(a, &a_case);
	build(b, &b_case);
	b->task.pid = 4343;
	tasks[0] = a->input;
	tasks[1] = b->input;
	tasks[0].share_keys = &shm;
	tasks[0].nr_share_keys = 1;
	tasks[1].share_keys = &other;
	tasks[1].nr_share_keys = 1;
	CHECK_INT(np_policy_decide_all(&a->machine, &a->cfg, tasks, 2, actions, NULL, NULL, NULL),
		  0);
	CHECK_INT(actions[0].plan_home, 0);
	CHECK_INT(actions[1].plan_home, 1);
	CHECK_INT(actions[1].plan_reason, NP_PLAN_MEMORY);

	tasks[1].share_keys = &shm;
	CHECK_INT(np_policy_decide_all(&a->machine, &a->cfg, tasks, 2, actions, NULL, NULL, NULL),
		  0);
	CHECK_INT(actions[0].plan_home, 0);
	CHECK_INT(actions[0].plan_reason, NP_PLAN_GROUP);
	CHECK_INT(actions[1].plan_home, 0);
	CHECK_INT(actions[1].plan_reason, NP_PLAN_GROUP);
	CHECK_INT(actions[1].target_node, 0);
	CHECK_U64(actions[1].move_bytes, 100 * MiB);
	CHECK(strstr(actions[1].reason_text, "with the tasks it shares written memory with"));

	/* Together more than a node's CPUs (3 + 3 > 4 + slack): each is planned
	 * on its own. */
	tasks[0].cpu_percent = tasks[1].cpu_percent = 300;
	CHECK_INT(np_policy_decide_all(&a->machine, &a->cfg, tasks, 2, actions, NULL, NULL, NULL),
		  0);
	CHECK_INT(actions[0].plan_home, 0);
	CHECK_INT(actions[1].plan_home, 1);
	unbuild(a);
	unbuild(b);
	free(a);
	free(b);
}

/* A task with more memory than its home can take (the held-out case of a
 * single thread with 2.5 GiB on nodes of 2 GiB): 1280 MiB on each node,
 * its thread on node 0, 2000 MiB free on each. Home: node 0 (the memory is
 * a tie, the thread decides), and what node 0 takes above its headroom
 * (10% of 16 GiB) moves: the rest stays where it is. */
static void test_bigger_than_home(void)
{
	static const struct policy_case c = {
	    .name = "big",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .set_free = true,
	    .free_mib = {2000, 2000},
	    .max_migrate_mb = 8192,
	    .mem_mib = {1280, 1280},
	    .threads = "0",
	};
	struct built *b = malloc(sizeof(*b));
	struct np_action a;

	build(b, &c);
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_MOVE);
	CHECK_INT(a.plan_home, 0);
	CHECK_INT(a.target_node, 0);
	CHECK(a.set_affinity && cpus_are(&a.target_cpus, "0-3"));
	CHECK_U64(a.move_bytes, 2000 * MiB - 16 * GiB / 100 * 10);
	unbuild(b);
	free(b);
}

/* The split test: a one-thread task (its main thread ran 3 ticks on node
 * 0, its worker 200 on node 1) with its memory half on each node is 51%
 * "beside its threads", one point above a home's 50%: not split enough to
 * be left out of the plan, so it is homed on node 1 and the rest follows. A
 * task with a thread and its half on each node (99% beside them) is. */
static void test_split_needs_a_margin(void)
{
	static const struct policy_case c = {
	    .name = "split",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .mem_mib = {256, 256},
	    .threads = "0,4",
	};
	struct built *b = malloc(sizeof(*b));
	struct np_action a;

	build(b, &c);
	b->threads[0].cpu_ticks = 3;
	b->threads[1].cpu_ticks = 200;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.kind, NP_ACTION_MOVE);
	CHECK(a.planned);
	CHECK_INT(a.plan_home, 1);
	CHECK_U64(a.move_bytes, 256 * MiB);
	b->threads[0].cpu_ticks = 200;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.planned);
	CHECK_INT(a.kind, NP_ACTION_KEEP);
	unbuild(b);
	free(b);
}

/* Workers pinned one by one, the main thread free (its mask, the task's,
 * allows every CPU): their user placed them, so the plan gives no home and
 * sets no mask. A home given before the pins is given back at the next
 * look, not held: a home could only move the threads nobody pinned. */
static void test_threads_pinned_one_by_one(void)
{
	static const struct policy_case c = {
	    .name = "pinned-workers",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .mem_mib = {256, 256},
	    .threads = "0,4",
	};
	static const uint64_t on_0[MAX_TEST_NODES] = {500, 12};
	struct built *b = malloc(sizeof(*b));
	struct np_policy_history hist;
	struct np_action a;

	build(b, &c);
	np_policy_history_init(&hist);
	b->input.hist = &hist;
	b->machine.now_ms = 1000;
	b->task.thread_masks_differ = true;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.planned);
	CHECK(!a.set_affinity);
	CHECK(!hist.narrowed);
	CHECK_INT(a.kind, NP_ACTION_KEEP);

	/* Homed while nobody had pinned a thread (both ran on node 0)... */
	b->task.thread_masks_differ = false;
	build_task(b, "0-1", on_0);
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.planned && a.set_affinity && !a.widen);
	CHECK(hist.narrowed);
	CHECK_INT(hist.home_node, 0);
	/* ...then one worker is pinned to node 1: within the hold, the mask
	 * ours replaced comes back. */
	b->task.cpus_allowed = a.target_cpus;
	b->task.thread_masks_differ = true;
	build_task(b, "0,4", on_0);
	b->machine.now_ms = 2000;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.planned);
	CHECK(a.set_affinity && a.widen);
	CHECK_STR(np_reason_name(a.reason), "given-back");
	CHECK(strstr(a.reason_text, "a thread has a CPU mask of its own") != NULL);
	CHECK(cpus_are(&a.target_cpus, "0-63"));
	CHECK(!hist.narrowed);
	CHECK_INT(hist.home_node, -1);
	/* And no home after: the flip the hold exists to prevent. */
	b->task.cpus_allowed = a.target_cpus;
	b->machine.now_ms = 3000;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(!a.planned && !a.set_affinity && !hist.narrowed);
	unbuild(b);
	free(b);
}

/* A first look at a task with more busy threads than any node has CPUs,
 * seen while something kept it on one node (its CPU use is that node's
 * worth): it is spread, not squeezed onto one node. Five equally busy
 * threads at 380% on nodes of four CPUs; at 250%, it could be a task that
 * needs no more than that, and a node takes it; but not when every CPU its
 * threads ran on was busy: they may have waited for CPUs (two such tasks
 * kept on one node show half of it each, and would be homed there
 * together). */
static void test_busy_threads_at_first_look(void)
{
	static const struct policy_case c = {
	    .name = "busy",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .cpu_percent = 380,
	    .mem_mib = {512, 0},
	    .threads = "0-3,4",
	};
	double saturated[MAX_TEST_NODES] = {1.0, 1.0};
	struct built *b = malloc(sizeof(*b));
	struct np_action a;

	build(b, &c);
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.planned);
	CHECK_INT(a.plan_reason, NP_PLAN_SPREAD);
	CHECK(a.demand == 5.0);
	b->input.cpu_percent = 250;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.plan_home, 0);
	CHECK(a.demand == 2.5);
	b->machine.node_busy = saturated;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK_INT(a.plan_reason, NP_PLAN_SPREAD);
	CHECK(a.demand == 5.0);
	/* One of its nodes with a CPU to spare: it could have had more, and
	 * its use is its demand. */
	saturated[1] = 0.8;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.demand == 2.5);
	unbuild(b);
	free(b);
}

/* A busy node is no evidence that a task's threads waited for a CPU: a
 * task with no more busy threads than a node has CPUs is judged by its
 * use, even where every node it ran on is saturated. A single thread at
 * 10% beside a hog, and a pool of four at 40% in all on a node of four
 * CPUs that is 94% busy, each keep their use as their demand (a CPU per
 * busy thread would send them off in search of room they do not need). */
static void test_light_tasks_on_busy_nodes(void)
{
	static const struct policy_case one = {
	    .name = "light",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .cpu_percent = 10,
	    .mem_mib = {200, 0},
	    .threads = "1",
	};
	static const struct policy_case pool = {
	    .name = "pool",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .cpu_percent = 40,
	    .mem_mib = {200, 0},
	    .threads = "0-3",
	};
	double busy[MAX_TEST_NODES] = {1.0, 0.94};
	struct built *b = malloc(sizeof(*b));
	struct np_action a;

	build(b, &one);
	b->machine.node_busy = busy;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.planned);
	CHECK(a.demand > 0.09 && a.demand < 0.11);
	CHECK_INT(a.plan_home, 0);
	unbuild(b);

	busy[0] = 0.94;
	build(b, &pool);
	b->machine.node_busy = busy;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.planned);
	CHECK(a.demand > 0.39 && a.demand < 0.41);
	CHECK_INT(a.plan_home, 0);
	unbuild(b);
	free(b);
}

/* A task its user just gave CPUs on more nodes, judged at once by what it
 * used and what its threads waited for a CPU under the old mask: two
 * threads squeezed onto CPUs they shared with others, 100% used and 100%
 * waited, keep two CPUs busy, not one; never more than a CPU a thread.
 * Its use alone (no wait given) stays its demand. */
static void test_wait_counts_in_demand(void)
{
	static const struct policy_case c = {
	    .name = "squeezed",
	    .topo = &two_nodes,
	    .affinity = NP_AFFINITY_UNPINNED,
	    .cpu_percent = 100,
	    .mem_mib = {200, 0},
	    .threads = "0,1",
	};
	struct built *b = malloc(sizeof(*b));
	struct np_action a;

	build(b, &c);
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.planned);
	CHECK(a.demand > 0.99 && a.demand < 1.01);
	b->input.wait_percent = 100;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.planned);
	CHECK(a.demand > 1.99 && a.demand < 2.01);
	b->input.wait_percent = 50;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.demand > 1.49 && a.demand < 1.51);
	/* A wait of many threads' worth: a CPU a thread at most. */
	b->input.wait_percent = 900;
	decide(&b->machine, &b->cfg, &b->input, &a);
	CHECK(a.demand > 1.99 && a.demand < 2.01);
	unbuild(b);
	free(b);
}

/* ---- invariants over random machines ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	/* xorshift64*: fixed seed, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return n ? (rng_state * 0x2545f4914f6cdd1dull >> 11) % n : 0;
}

struct random_case {
	struct topo_spec spec;
	struct np_topology *topo;
	uint64_t free_bytes[MAX_TEST_NODES];
	double busy[MAX_TEST_NODES];
	struct np_policy_machine machine;
	struct np_config cfg;
	struct np_task task;
	struct np_thread threads[16];
	uint64_t node_bytes[MAX_TEST_NODES];
	struct np_policy_history hist;
};

static void random_machine(struct random_case *r)
{
	struct topo_spec *spec = &r->spec;

	memset(spec, 0, sizeof(*spec));
	spec->nr = 2 + (unsigned)rnd(MAX_TEST_NODES - 1);
	for (unsigned i = 0; i < spec->nr; i++) {
		spec->cpus[i] = (unsigned)rnd(4);
		spec->mem_gib[i] = rnd(4) ? 1 + rnd(16) : 0;
		for (unsigned j = 0; j < spec->nr; j++)
			spec->dist[i][j] = i == j ? 10 : 11 + (unsigned)rnd(30);
	}
	spec->cpus[rnd(spec->nr)] += 1;	   /* some node has CPUs */
	spec->mem_gib[rnd(spec->nr)] += 1; /* and some has memory */
	r->topo = build_topology(spec);
	for (unsigned i = 0; i < spec->nr; i++) {
		r->free_bytes[i] = rnd(r->topo->nodes[i].mem_total / MiB + 1) * MiB;
		r->busy[i] = (double)rnd(120) / 100.0;
	}
	r->machine = (struct np_policy_machine){.topo = r->topo,
						.node_free = r->free_bytes,
						.node_busy = r->busy,
						.kernel_numa_balancing = rnd(8) == 0};
	np_config_init(&r->cfg);
	r->cfg.affinity = rnd(2) ? NP_AFFINITY_UNPINNED : NP_AFFINITY_NEVER;
	r->cfg.kernel_balancing = rnd(2) ? NP_KBAL_DEFER : NP_KBAL_IGNORE;
	r->cfg.node_mem_headroom_percent = (unsigned)rnd(31);
	r->cfg.locality_target_percent = 50 + (unsigned)rnd(51);
	r->cfg.hysteresis_periods = (unsigned)rnd(5);
	r->cfg.max_migrate_mb_per_scan = 1 + rnd(4096);
	np_policy_history_init(&r->hist);
}

static void random_task(struct random_case *r)
{
	unsigned nr_cpus = (unsigned)r->topo->max_cpu + 1;

	memset(&r->task, 0, sizeof(r->task));
	r->task.pid = 100;
	r->task.age_ms = 100000;
	r->task.has_details = true;
	strcpy(r->task.comm, "random");
	r->task.rss_bytes = 0;
	for (unsigned i = 0; i < r->spec.nr; i++) {
		r->node_bytes[i] = rnd(3) ? 0 : rnd(8192) * MiB;
		r->task.rss_bytes += r->node_bytes[i];
	}
	r->task.rss_bytes += 200 * MiB;
	r->task.nr_thread_samples = 1 + (unsigned)rnd(16);
	for (unsigned i = 0; i < r->task.nr_thread_samples; i++)
		r->threads[i] = (struct np_thread){
		    .tid = 100 + (int)i, .last_cpu = (int)rnd(nr_cpus), .cpu_ticks = rnd(1000)};
	r->task.threads = r->threads;
	r->task.last_cpu = r->threads[0].last_cpu;
	if (rnd(2)) {
		parse_cpus(&r->task.cpus_allowed, "0-63");
	} else {
		np_bitmap_zero(&r->task.cpus_allowed);
		while (np_bitmap_empty(&r->task.cpus_allowed))
			for (unsigned c = 0; c < nr_cpus; c++)
				if (rnd(2))
					np_bitmap_set(&r->task.cpus_allowed, c);
	}
	np_nodeset_zero(&r->task.mems_allowed);
	if (rnd(2))
		parse_nodes(&r->task.mems_allowed, "0-7");
	else
		for (unsigned n = 0; n < r->spec.nr; n++)
			if (rnd(2))
				np_nodeset_set(&r->task.mems_allowed, n);
	if (np_nodeset_empty(&r->task.mems_allowed))
		np_nodeset_set(&r->task.mems_allowed, (unsigned)rnd(r->spec.nr));
}

static unsigned violations;

static void violated(const char *what, const struct np_action *a)
{
	if (violations++ < 5)
		fprintf(stderr, "invariant broken: %s: %s %s \"%s\"\n", what,
			np_action_kind_name(a->kind), np_reason_name(a->reason), a->reason_text);
}

static void check_invariants(const struct random_case *r, const struct np_bitmap *allowed_cpus,
			     const struct np_action *a)
{
	const struct np_topology *topo = r->topo;
	bool acts = a->kind == NP_ACTION_MOVE || a->kind == NP_ACTION_SPREAD;
	uint64_t cap = r->cfg.max_migrate_mb_per_scan * MiB;
	unsigned cpu_nodes = 0;

	if (!a->reason_text[0] || strchr(a->reason_text, '\n'))
		violated("reason text empty or multi-line", a);
	if (!acts && (a->move_pages || a->set_affinity || a->move_bytes))
		violated("a keep or skip that moves something", a);
	if (a->move_bytes > cap || a->move_bytes > a->misplaced_bytes)
		violated("move larger than the cap or than what is misplaced", a);
	if (acts && a->partial != (a->misplaced_bytes > cap))
		violated("partial flag disagrees with the cap", a);
	if (acts && !a->move_pages && !a->set_affinity)
		violated("a move that does nothing", a);
	np_nodeset_for_each(id, &a->target_nodes)
	{
		const struct np_node *node = np_topology_node(topo, id);

		if (acts && (!node || !node->mem_total ||
			     !np_nodeset_test(&r->task.mems_allowed, (unsigned)id)))
			violated("target node outside Mems_allowed or without memory", a);
	}
	if (a->kind == NP_ACTION_MOVE && a->move_pages) {
		const struct np_node *node = np_topology_node(topo, a->target_node);
		uint64_t keep = node->mem_total / 100 * r->cfg.node_mem_headroom_percent;

		if (r->free_bytes[a->target_node] < a->misplaced_bytes ||
		    r->free_bytes[a->target_node] - a->misplaced_bytes < keep)
			violated("move into a node without headroom", a);
	}
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		struct np_bitmap on;

		np_bitmap_and(&on, &topo->nodes[i].cpus, allowed_cpus);
		cpu_nodes += !np_bitmap_empty(&on);
	}
	if (a->set_affinity) {
		if (r->cfg.affinity != NP_AFFINITY_UNPINNED)
			violated("affinity set with affinity=none", a);
		if (cpu_nodes < 2)
			violated("affinity changed for a task pinned to one node", a);
		if (np_bitmap_empty(&a->target_cpus) ||
		    !np_bitmap_subset(&a->target_cpus, allowed_cpus))
			violated("affinity outside the task's own allowed CPUs", a);
	}
}

/* Random machines, configs and tasks, five looks each with the history
 * carried over: whatever the policy decides must keep its promises. */
static void test_random_invariants(void)
{
	struct random_case *r = malloc(sizeof(*r));
	unsigned decisions = 0, moves = 0;

	for (unsigned m = 0; m < 300; m++) {
		struct np_bitmap allowed;

		random_machine(r);
		for (unsigned t = 0; t < 4; t++) {
			np_policy_history_init(&r->hist);
			random_task(r);
			allowed = r->task.cpus_allowed;
			for (unsigned look = 0; look < 5; look++) {
				struct np_policy_task in = {.task = &r->task,
							    .node_bytes = r->node_bytes,
							    .nr_node_slots = r->spec.nr,
							    .cpu_percent = (double)rnd(400),
							    .hist = &r->hist};
				struct np_action a;

				decide(&r->machine, &r->cfg, &in, &a);
				check_invariants(r, &allowed, &a);
				decisions++;
				moves += a.kind == NP_ACTION_MOVE || a.kind == NP_ACTION_SPREAD;
				/* What an actuator would do with the affinity. */
				if (a.set_affinity)
					r->task.cpus_allowed = a.target_cpus;
				/* And some noise in the next sample. */
				r->node_bytes[rnd(r->spec.nr)] += rnd(256) * MiB;
			}
		}
		np_topology_free(r->topo);
	}
	free(r);
	CHECK_INT(violations, 0);
	CHECK_INT(decisions, 300 * 4 * 5);
	/* The random inputs do exercise moves, not only skips. */
	CHECK(moves > decisions / 20);
}

static void test_names(void)
{
	for (int i = 0; i < NP_REASON_COUNT; i++) {
		CHECK(strcmp(np_reason_name((enum np_reason)i), "unknown") != 0);
		for (int j = 0; j < i; j++)
			CHECK(strcmp(np_reason_name((enum np_reason)i),
				     np_reason_name((enum np_reason)j)) != 0);
	}
	CHECK_STR(np_reason_name(NP_REASON_COUNT), "unknown");
	CHECK_STR(np_action_kind_name(NP_ACTION_SPREAD), "spread");
}

int main(void)
{
	test_table();
	test_decide_screens();
	test_unmovable();
	test_no_ping_pong();
	test_partial_continues();
	test_own_narrowing_is_not_pinning();
	test_idle_tasks_are_not_narrowed();
	test_launchers_are_not_narrowed();
	test_home_hold_and_outgrow();
	test_groups();
	test_bigger_than_home();
	test_split_needs_a_margin();
	test_threads_pinned_one_by_one();
	test_busy_threads_at_first_look();
	test_light_tasks_on_busy_nodes();
	test_wait_counts_in_demand();
	test_batch_accounts_planned_moves();
	test_names();
	test_random_invariants();
	return check_done();
}
