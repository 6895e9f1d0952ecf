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
