/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "topology.h"

#include <errno.h>

static void test_handmade_4node(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;

	CHECK_INT(np_ctx_new(fixture("handmade-4node"), &ctx), 0);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(topo->nr_nodes, 4);
	CHECK_INT(topo->nodes[3].id, 3);
	CHECK_INT(topo->nodes[3].nr_cpus, 0); /* memory-only node */
	CHECK_U64(topo->nodes[3].mem_total, 8388608ull * 1024);
	CHECK_U64(topo->nodes[2].mem_total, 0); /* CPUs, no memory */
	CHECK_INT(topo->nodes[2].nr_cpus, 2);
	CHECK_U64(topo->nodes[1].mem_free, 3145728ull * 1024);
	CHECK_U64(topo->nodes[1].file_pages, 2048ull * 1024);
	CHECK_INT(np_topology_distance(topo, 0, 1), 16);
	CHECK_INT(np_topology_distance(topo, 2, 3), 28);
	CHECK_INT(np_topology_distance(topo, 3, 3), 10);
	CHECK_INT(np_topology_distance(topo, 0, 9), 0);
	CHECK_INT(np_topology_cpu_node(topo, 5), 2);
	CHECK_INT(np_topology_cpu_node(topo, 6), -1);
	CHECK_INT(topo->max_cpu, 5);
	CHECK(np_topology_node(topo, 7) == NULL);
	np_topology_free(topo);
	np_ctx_free(ctx);
}

static void test_host(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;

	CHECK_INT(np_ctx_new(fixture("host"), &ctx), 0);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(topo->nr_nodes, 1);
	CHECK(topo->nodes[0].nr_cpus >= 1);
	CHECK(topo->nodes[0].mem_total > topo->nodes[0].mem_free);
	CHECK_INT(np_topology_distance(topo, 0, 0), 10);
	np_topology_free(topo);
	np_ctx_free(ctx);
}

static void test_missing_root(void)
{
	struct np_ctx *ctx;

	CHECK_INT(np_ctx_new("/nonexistent/root", &ctx), -ENOENT);
}

int main(void)
{
	test_handmade_4node();
	test_host();
	test_missing_root();
	return check_done();
}
