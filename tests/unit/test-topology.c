/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "topology.h"

#include <errno.h>
#include <stdarg.h>

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

static char last_log[512];

static void capture_log(void *data, int priority, const char *fmt, va_list args)
{
	vsnprintf(last_log, sizeof(last_log), fmt, args);
}

/* Node ids stop below NP_MAX_NODES: an online list naming 1024 is not one
 * the kernel can print. */
static void test_online_past_max_nodes(void)
{
	char root[] = "/tmp/np-topology-XXXXXX", path[128];
	struct np_ctx *ctx;
	struct np_topology *topo;
	FILE *f;

	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "mkdir -p %s/sys/devices/system/node", root);
	CHECK_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s/sys/devices/system/node/online", root);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("0,1024\n", f);
		fclose(f);
	}
	CHECK_INT(np_ctx_new(root, &ctx), 0);
	np_ctx_set_log_fn(ctx, capture_log, NULL);
	CHECK_INT(np_topology_read(ctx, &topo), -ERANGE);
	CHECK(strstr(last_log, "/sys/devices/system/node/online: not a node list: \"0,1024\"") !=
	      NULL);
	np_ctx_free(ctx);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK_INT(system(path), 0);
}

int main(void)
{
	test_handmade_4node();
	test_host();
	test_missing_root();
	test_online_past_max_nodes();
	return check_done();
}
