/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "advise.h"
#include "check.h"
#include "task.h"

#include <errno.h>
#include <math.h>

#define MiB (1024ull * 1024)

static void test_parse(void)
{
	static const struct {
		const char *arg;
		int err;
		unsigned vcpus;
		uint64_t mib;
		const char *text;
	} cases[] = {
	    {"4:2048", 0, 4, 2048, ""},
	    {"1:1", 0, 1, 1, ""},
	    {"8192:1", 0, 8192, 1, ""},
	    {"8193:1", -EINVAL, 0, 0, "VCPUS '8193' is not a number of CPUs (1..8192)"},
	    {"0:x", -EINVAL, 0, 0,
	     "VCPUS '0' is not a number of CPUs (1..8192); MIB 'x' is not a size in MiB (1 or more)"},
	    {"4", -EINVAL, 0, 0, "'4' is not VCPUS:MIB"},
	    {"", -EINVAL, 0, 0, "'' is not VCPUS:MIB"},
	    {"4:", -EINVAL, 0, 0, "MIB '' is not a size in MiB (1 or more)"},
	    {" 4:1", -EINVAL, 0, 0, "VCPUS ' 4' is not a number of CPUs (1..8192)"},
	    {"4:1 ", -EINVAL, 0, 0, "MIB '1 ' is not a size in MiB (1 or more)"},
	    {"+4:1", -EINVAL, 0, 0, "VCPUS '+4' is not a number of CPUs (1..8192)"},
	    /* More MiB than bytes can count. */
	    {"1:17592186044416", -EINVAL, 0, 0, "MIB '17592186044416' is not a size"},
	    {"1:17592186044415", 0, 1, 17592186044415ull, ""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct np_advise_request req = {0};
		char err[256];

		CHECK_INT(np_advise_parse(cases[i].arg, &req, err, sizeof(err)), cases[i].err);
		CHECK(strncmp(err, cases[i].text, strlen(cases[i].text)) == 0);
		if (!cases[i].err) {
			CHECK_INT(req.vcpus, cases[i].vcpus);
			CHECK_U64(req.mib, cases[i].mib);
			CHECK_STR(err, "");
		}
	}
}

/* advise-4node as the daemon counts it: see tests/cli/test-advise.sh for
 * the same machine from the command line. */
static void test_fixture(void)
{
	static const struct {
		unsigned vcpus;
		uint64_t mib;
		const char *nodes;
		bool fits;
	} cases[] = {
	    {1, 1024, "2", true},   {2, 512, "0", true},    {2, 2048, "0-1", true},
	    {3, 1024, "2-3", true}, {1, 4096, "0-2", true}, {7, 100, "0-3", false},
	};
	struct np_config cfg;
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_task_source *src;
	struct np_advise_node nodes[4];
	double load[4];

	np_config_init(&cfg);
	CHECK_INT(np_ctx_new(fixture("advise-4node"), &ctx), 0);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(topo->nr_nodes, 4);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	CHECK_INT(np_task_source_node_load(src, topo, load), 0);
	np_advise_nodes(topo, load, &cfg, nodes);
	/* 4 GiB / 100 * 10 of headroom each: 429496720 bytes. */
	CHECK_U64(nodes[0].mem_room, 1024 * MiB - 429496720);
	CHECK_U64(nodes[3].mem_room, 512 * MiB - 429496720);
	CHECK(fabs(nodes[1].free_cpus) < 1e-9 && fabs(nodes[2].free_cpus - 1) < 1e-9);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct np_advise_request req = {cases[i].vcpus, cases[i].mib};
		struct np_advice advice;
		struct np_nodeset want;

		np_nodeset_parse_list(&want, cases[i].nodes, strlen(cases[i].nodes));
		CHECK_INT(np_advise(topo, nodes, &req, &advice), 0);
		CHECK(np_nodeset_equal(&advice.nodes, &want));
		CHECK_INT(advice.fits, cases[i].fits);
	}

	/* A node without CPUs is never where a set is grown from, but it may
	 * lend its memory: node 1 as memory only, 2 vCPUs and 3000 MiB come
	 * from 0 and its nearest, 1 (2.0 CPUs, 3276.8 MiB). */
	{
		struct np_advise_request req = {2, 3000};
		struct np_advice advice;

		topo->nodes[1].nr_cpus = 0;
		CHECK_INT(np_advise(topo, nodes, &req, &advice), 0);
		CHECK(advice.fits && np_nodeset_weight(&advice.nodes) == 2 &&
		      np_nodeset_test(&advice.nodes, 0) && np_nodeset_test(&advice.nodes, 1));
		/* No node with CPUs at all: nothing to advise. */
		for (unsigned i = 0; i < topo->nr_nodes; i++)
			topo->nodes[i].nr_cpus = 0;
		CHECK_INT(np_advise(topo, nodes, &req, &advice), -ENODEV);
	}
	np_task_source_free(src);
	np_topology_free(topo);
	np_ctx_free(ctx);
	np_config_free(&cfg);
}

int main(void)
{
	test_parse();
	test_fixture();
	return check_done();
}
