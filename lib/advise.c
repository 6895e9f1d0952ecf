/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "advise.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define MiB (1024ull * 1024)

int np_advise_parse(const char *arg, struct np_advise_request *req, char *err, size_t err_len)
{
	const char *colon = strchr(arg, ':');
	const char *mib_text = colon ? colon + 1 : "";
	size_t vcpus_len = colon ? (size_t)(colon - arg) : strlen(arg);
	uint64_t vcpus = 0, mib = 0;
	bool vcpus_ok, mib_ok;
	int n = 0;

	err[0] = '\0';
	if (!colon) {
		snprintf(err, err_len, "'%s' is not VCPUS:MIB", arg);
		return -EINVAL;
	}
	vcpus_ok = np_parse_u64(arg, colon, &vcpus) && vcpus >= 1 && vcpus <= NP_ADVISE_MAX_VCPUS;
	mib_ok = np_parse_u64(mib_text, mib_text + strlen(mib_text), &mib) && mib >= 1 &&
		 mib <= UINT64_MAX / MiB;
	if (!vcpus_ok)
		n = snprintf(err, err_len, "VCPUS '%.*s' is not a number of CPUs (1..%d)",
			     (int)vcpus_len, arg, NP_ADVISE_MAX_VCPUS);
	if (!mib_ok && (size_t)n < err_len)
		snprintf(err + n, err_len - (size_t)n, "%sMIB '%s' is not a size in MiB (1 or more)",
			 n ? "; " : "", mib_text);
	if (!vcpus_ok || !mib_ok)
		return -EINVAL;
	req->vcpus = (unsigned)vcpus;
	req->mib = mib;
	return 0;
}

void np_advise_nodes(const struct np_topology *topo, const double *load,
		     const struct np_config *cfg, struct np_advise_node *out)
{
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		const struct np_node *node = &topo->nodes[i];
		uint64_t keep = np_policy_headroom(node, cfg);
		double busy = load[i] < 0 ? 0 : load[i] > 1 ? 1 : load[i];

		out[i] = (struct np_advise_node){
		    .id = node->id,
		    .free_cpus = node->nr_cpus * (1 - busy),
		    .mem_room = node->mem_free > keep ? node->mem_free - keep : 0,
		};
	}
}

/* One candidate: the nodes grown from @seed until they have the room. */
struct candidate {
	bool *in;
	unsigned nr;
	bool fits;
	unsigned distance; /* from the seed, over its nodes */
	double cpus, spare;
	uint64_t room;
};

static bool has_room(const struct candidate *c, const struct np_advise_request *req)
{
	/* A CPU's worth less a rounding error still holds a vCPU. */
	return c->cpus + 1e-9 >= req->vcpus && c->room >= req->mib * MiB;
}

static void grow(const struct np_topology *topo, const struct np_advise_node *nodes,
		 const struct np_advise_request *req, unsigned seed, struct candidate *c)
{
	unsigned nr = topo->nr_nodes;
	uint64_t total = 0, cpus = 0;

	memset(c->in, 0, nr * sizeof(*c->in));
	c->nr = 0;
	c->distance = 0;
	c->cpus = 0;
	c->room = 0;
	for (unsigned next = seed;;) {
		c->in[next] = true;
		c->nr++;
		c->distance += topo->distance[seed * nr + next];
		c->cpus += nodes[next].free_cpus;
		c->room += nodes[next].mem_room;
		total += topo->nodes[next].mem_total;
		cpus += topo->nodes[next].nr_cpus;
		c->fits = has_room(c, req);
		if (c->fits || c->nr == nr)
			break;
		/* The nearest node not in yet, from where it was grown. */
		next = nr;
		for (unsigned j = 0; j < nr; j++) {
			if (c->in[j])
				continue;
			if (next == nr || topo->distance[seed * nr + j] < topo->distance[seed * nr + next] ||
			    (topo->distance[seed * nr + j] == topo->distance[seed * nr + next] &&
			     nodes[j].mem_room > nodes[next].mem_room))
				next = j;
		}
	}
	/* What it has left on its scarcer side, as a share of what it has. */
	{
		double cpu_spare = cpus ? (c->cpus - req->vcpus) / (double)cpus : -1;
		double mem_spare = total ? ((double)c->room - (double)(req->mib * MiB)) / (double)total
					 : -1;

		c->spare = cpu_spare < mem_spare ? cpu_spare : mem_spare;
	}
}

static bool better(const struct candidate *a, const struct candidate *b)
{
	if (a->fits != b->fits)
		return a->fits;
	if (a->nr != b->nr)
		return a->nr < b->nr;
	if (a->distance != b->distance)
		return a->distance < b->distance;
	return a->spare > b->spare + 1e-12;
}

int np_advise(const struct np_topology *topo, const struct np_advise_node *nodes,
	      const struct np_advise_request *req, struct np_advice *out)
{
	unsigned nr = topo->nr_nodes;
	struct candidate best = {0}, c = {0};
	bool any = false;

	memset(out, 0, sizeof(*out));
	best.in = calloc(nr + 1, sizeof(*best.in));
	c.in = calloc(nr + 1, sizeof(*c.in));
	if (!best.in || !c.in) {
		free(best.in);
		free(c.in);
		return -ENOMEM;
	}
	/* Grown from a node with CPUs: a VM's vCPUs run somewhere. */
	for (unsigned seed = 0; seed < nr; seed++) {
		bool *keep;

		if (!topo->nodes[seed].nr_cpus)
			continue;
		grow(topo, nodes, req, seed, &c);
		if (any && !better(&c, &best))
			continue;
		keep = best.in;
		best = c;
		c.in = keep;
		any = true;
	}
	if (any) {
		out->fits = best.fits;
		for (unsigned i = 0; i < nr; i++)
			if (best.in[i])
				np_nodeset_set(&out->nodes, (unsigned)topo->nodes[i].id);
		out->free_cpus = best.cpus;
		out->mem_room = best.room;
	}
	free(best.in);
	free(c.in);
	return any ? 0 : -ENODEV;
}
