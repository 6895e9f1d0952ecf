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

__attribute__((format(printf, 3, 0)))
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

static void test_meminfo_parse(void)
{
	static const char node_file[] = "Node 1 MemTotal:        8388608 kB\n"
					"Node 1 MemFree:         3145728 kB\n"
					"Node 1 MemUsed:         5242880 kB\n"
					"Node 1 FilePages:          2048 kB\n"
					"Node 1 HugePages_Total:     0\n";
	static const char proc_file[] = "MemTotal:       24571264 kB\n"
					"MemFree:         1234567 kB\n"
					"MemAvailable:   20000000 kB\n";
	struct np_node node = {.id = 1}, before;
	unsigned bad_line = 99;

	CHECK_INT(np_meminfo_parse(node_file, strlen(node_file), &node, &bad_line), 0);
	CHECK_INT(bad_line, 0);
	CHECK_INT(node.id, 1);
	CHECK_U64(node.mem_total, 8388608ull * 1024);
	CHECK_U64(node.mem_free, 3145728ull * 1024);
	CHECK_U64(node.file_pages, 2048ull * 1024);
	memset(&node, 0, sizeof(node));
	CHECK_INT(np_meminfo_parse(proc_file, strlen(proc_file), &node, &bad_line), 0);
	CHECK_U64(node.mem_total, 24571264ull * 1024);
	CHECK_U64(node.mem_free, 1234567ull * 1024);
	CHECK_U64(node.file_pages, 0);
	/* Nothing past @len is read: the buffer needs no NUL. */
	CHECK_INT(np_meminfo_parse("MemTotal: 4 kBxx", 14, &node, &bad_line), 0);
	CHECK_U64(node.mem_total, 4096);

	/* A bad value names its line and leaves the node as it was. */
	before = node;
	static const char *const bad[] = {
	    "MemTotal: 1 kB\nMemFree: -5 kB\n",	/* a sign */
	    "MemTotal: 1 kB\nMemFree: +5 kB\n",
	    "MemTotal: 1 kB\nMemFree: 5 MB\n",	/* another unit */
	    "MemTotal: 1 kB\nMemFree: 5\n",	/* none */
	    "MemTotal: 1 kB\nMemFree: kB\n",	/* no number */
	    "MemTotal: 1 kB\nMemFree: 1 2 kB\n",
	    "MemTotal: 1 kB\nMemFree: 18014398509481984 kB\n", /* 2^54 KiB: 2^64 bytes */
	    "MemTotal: 1 kB\nMemFree: 99999999999999999999 kB\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bad_line = 0;
		CHECK_INT(np_meminfo_parse(bad[i], strlen(bad[i]), &node, &bad_line), -EINVAL);
		CHECK_INT(bad_line, 2);
		CHECK(memcmp(&node, &before, sizeof(node)) == 0);
	}
	/* 2^54 - 1 KiB is the most that fits in bytes. */
	CHECK_INT(np_meminfo_parse("MemTotal: 18014398509481983 kB", 30, &node, &bad_line), 0);
	CHECK_U64(node.mem_total, UINT64_MAX - 1023);
	/* No MemTotal line: bad_line 0. */
	bad_line = 7;
	CHECK_INT(np_meminfo_parse("MemFree: 5 kB\n", 14, &node, &bad_line), -EINVAL);
	CHECK_INT(bad_line, 0);
	CHECK_INT(np_meminfo_parse("", 0, &node, &bad_line), -EINVAL);
	CHECK_INT(bad_line, 0);
}

static void test_distance_parse(void)
{
	unsigned d[4] = {1, 2, 3, 4};

	CHECK_INT(np_distance_parse("10 20 30 40\n", 12, 4, d), 0);
	CHECK_INT(d[0], 10);
	CHECK_INT(d[3], 40);
	CHECK_INT(np_distance_parse("10", 2, 1, d), 0);
	CHECK_INT(d[0], 10);
	CHECK_INT(np_distance_parse("255  1 \n", 8, 2, d), 0);
	CHECK_INT(d[0], 255);
	CHECK_INT(d[1], 1);

	static const struct {
		const char *text;
		unsigned n;
	} bad[] = {
	    {"10 20 30\n", 2}, /* more numbers than online nodes */
	    {"10\n", 2},       /* fewer */
	    {"", 1},
	    {"10 0\n", 2},     /* 0 is no distance */
	    {"10 256\n", 2},   /* a distance is a byte */
	    {"10 -20\n", 2},
	    {"10 +20\n", 2},
	    {"10,20\n", 2},
	    {"10\t20\n", 2},
	    {"10 20\n", 0},
	    {"10 99999999999999999999999\n", 2},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d[0] = d[1] = 7;
		CHECK_INT(np_distance_parse(bad[i].text, strlen(bad[i].text), bad[i].n, d), -EINVAL);
		CHECK(d[0] == 7 && d[1] == 7);
	}
	CHECK_INT(np_distance_parse("10", 2, NP_MAX_NODES + 1, d), -EINVAL);
}

/* A tree whose node 1 has a bad meminfo line: the message names the file
 * and the line, and the topology is not read. */
static void test_bad_meminfo_message(void)
{
	char root[] = "/tmp/np-topology-XXXXXX", cmd[512];
	struct np_ctx *ctx;
	struct np_topology *topo;

	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd),
		 "d=%s/sys/devices/system/node && mkdir -p $d/node0 && echo 0 > $d/online && "
		 "echo 0 > $d/node0/cpulist && echo 10 > $d/node0/distance && "
		 "printf 'Node 0 MemTotal: 1024 kB\\nNode 0 MemFree: 12x kB\\n' > $d/node0/meminfo",
		 root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(np_ctx_new(root, &ctx), 0);
	np_ctx_set_log_fn(ctx, capture_log, NULL);
	CHECK_INT(np_topology_read(ctx, &topo), -EINVAL);
	CHECK(strstr(last_log, "/sys/devices/system/node/node0/meminfo:2: bad value: "
			       "\"Node 0 MemFree: 12x kB\"") != NULL);
	np_ctx_free(ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

int main(void)
{
	test_handmade_4node();
	test_host();
	test_missing_root();
	test_online_past_max_nodes();
	test_meminfo_parse();
	test_distance_parse();
	test_bad_meminfo_message();
	return check_done();
}
