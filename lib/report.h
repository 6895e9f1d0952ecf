/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cgroup.h"
#include "snapshot.h"

/*
 * The report: a snapshot (lib/snapshot.h) formatted for people, as aligned
 * columns like numastat -p for the whole machine, or as JSON. Formatting
 * only: what is in it is the engine's.
 */

/* Aligned columns with human sizes. Returns 0 or -EIO. */
int np_report_write_text(const struct np_snapshot *snap, FILE *out);

/* The same data as JSON. Returns 0 or -EIO. */
int np_report_write_json(const struct np_snapshot *snap, FILE *out);

/* --by-cgroup: the topology as above, then one line per cgroup of @rows
 * (np_cgroup_usage_read of @snap): its tasks, memory per node, cpuset,
 * where the figures come from, and its path. Returns 0 or -EIO. */
int np_report_write_cgroups_text(const struct np_snapshot *snap,
				 const struct np_cgroup_usage *rows, size_t nr, FILE *out);

/* The same as JSON. Returns 0 or -EIO. */
int np_report_write_cgroups_json(const struct np_snapshot *snap,
				 const struct np_cgroup_usage *rows, size_t nr, FILE *out);

/* Format @bytes as "512.0M", "1.2G", "64K" into @buf, for columns. */
const char *np_human_bytes(uint64_t bytes, char *buf, size_t size);
