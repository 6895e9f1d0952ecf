/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "snapshot.h"

#include <stdlib.h>

void np_snap_task_clear(struct np_snap_task *st)
{
	np_task_clear(&st->task);
	np_task_memory_clear(&st->mem);
	free(st->share_keys);
	st->share_keys = NULL;
	st->nr_share_keys = 0;
}

void np_snapshot_free(struct np_snapshot *snap)
{
	if (!snap)
		return;
	for (unsigned i = 0; i < snap->nr_tasks; i++)
		np_snap_task_clear(&snap->tasks[i]);
	free(snap->tasks);
	free(snap->node_load);
	free(snap->node_plan);
	np_topology_free(snap->topo);
	free(snap);
}

const char *np_snap_outcome_name(enum np_snap_outcome outcome)
{
	static const char *const names[] = {
	    [NP_SNAP_NOT_ACTED] = "not_acted", [NP_SNAP_DONE] = "done",
	    [NP_SNAP_NO_EFFECT] = "no_effect", [NP_SNAP_DEFERRED] = "deferred",
	    [NP_SNAP_FAILED] = "failed",       [NP_SNAP_STARTED] = "started",
	};

	return (unsigned)outcome < sizeof(names) / sizeof(names[0]) ? names[outcome] : "unknown";
}
