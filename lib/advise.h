/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "config.h"
#include "topology.h"

/*
 * Placement advice for a task not started yet: which nodes would hold
 * VCPUS busy CPUs and MIB MiB now, asked as numad's "-w VCPUS:MIB" is
 * (libvirt's placement='auto' runs that and reads back a node list). The
 * answer comes from the daemon's own view: each node's CPUs less its
 * measured load, and its free memory above node_mem_headroom_percent, as
 * the planner counts them.
 *
 * The smallest set of nodes that has the room, grown from each node in
 * turn by adding the nearest next (ties: the one with more memory room);
 * between sets of the same size, the most compact (least distance from
 * where it was grown), then the one left with the most to spare on its
 * scarcer side (CPUs or memory, as a share of what the set has), then the
 * lowest node. When not even every node together has the room, every node.
 */

/* What is asked: CPUs to keep busy and memory. */
struct np_advise_request {
	unsigned vcpus;
	uint64_t mib;
};

/* The largest VCPUS accepted: every CPU the daemon can count. */
#define NP_ADVISE_MAX_VCPUS NP_MAX_CPUS

/* Parse "VCPUS:MIB" (both whole decimal numbers, VCPUS 1..NP_ADVISE_MAX_VCPUS,
 * MIB 1.. up to what fits in bytes). Returns 0, or -EINVAL with one line
 * in @err naming every bad part and its value. Pure. */
int np_advise_parse(const char *arg, struct np_advise_request *req, char *err, size_t err_len);

/* One node as the advice counts it. */
struct np_advise_node {
	int id;
	double free_cpus;  /* its CPUs less the busy share measured on them */
	uint64_t mem_room; /* free memory above its headroom */
};

struct np_advice {
	struct np_nodeset nodes; /* the answer */
	bool fits;		 /* false: no set has the room, every node is given */
	double free_cpus;	 /* over the answer's nodes */
	uint64_t mem_room;
};

/* Each node of @topo as counted (@load[i] is topo->nodes[i]'s busy share,
 * 0..1) into @out[0..topo->nr_nodes-1]. Pure. */
void np_advise_nodes(const struct np_topology *topo, const double *load,
		     const struct np_config *cfg, struct np_advise_node *out);

/* The advice for @req over @topo and its counted @nodes. Pure; returns 0,
 * -ENOMEM, or -ENODEV for a machine with no node that has CPUs. */
int np_advise(const struct np_topology *topo, const struct np_advise_node *nodes,
	      const struct np_advise_request *req, struct np_advice *out);
