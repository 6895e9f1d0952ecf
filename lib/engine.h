/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "config.h"
#include "context.h"
#include "report.h"
#include "scheduler.h"
#include "stats.h"

/*
 * One placement cycle, from observation to action: topology and tasks are
 * read, the scan scheduler picks the tasks whose numa_maps to read, the
 * policy decides, the actuator acts (or, dry, records). The daemon calls
 * np_engine_tick() from its timer; the one-shot report is a single tick in
 * report mode. The engine owns every piece of per-task state.
 */
struct np_engine;

struct np_engine_params {
	struct np_ctx *ctx;     /* must outlive the engine */
	struct np_clock *clock; /* must outlive the engine */
	bool dry_run;           /* decide and record, change nothing */
	/* One-shot report: no scan budget, and every user task at or above
	 * report_min_rss_bytes is shown with its memory (also those the
	 * daemon would not read yet, which say why). */
	bool report;
	uint64_t report_min_rss_bytes;
	/* Asked between actions and between migration batches: true ends the
	 * cycle early (the daemon's SIGTERM). NULL: never. */
	bool (*should_stop)(void *data);
	void *stop_data;
};

/* Create an engine with @cfg (copied). Returns 0 or -errno; a live context is
 * needed unless dry_run is set. */
int np_engine_new(const struct np_engine_params *params, const struct np_config *cfg,
		  struct np_engine **out);
void np_engine_free(struct np_engine *engine);

/* Apply a reloaded configuration whole (SIGHUP). Returns 0, or -EINVAL with
 * the old one still in force. */
int np_engine_set_config(struct np_engine *engine, const struct np_config *cfg);

/* Run one cycle. With @snapshot, also hand back what the cycle saw and
 * decided (the caller frees it with np_report_free): in report mode every
 * shown task, otherwise the tasks read this tick. Returns 0 or -errno (the
 * machine could not be observed at all). */
int np_engine_tick(struct np_engine *engine, struct np_report **snapshot);

struct np_stats *np_engine_stats(struct np_engine *engine);
const struct np_sched_counters *np_engine_sched_counters(const struct np_engine *engine);

/* Called with every cycle's task list as observed, before anything else
 * happens to it (--record writes it to a trace). A non-zero return fails the
 * cycle. */
typedef int (*np_engine_observer_fn)(void *data, const struct np_task_list *list);
void np_engine_set_observer(struct np_engine *engine, np_engine_observer_fn fn, void *data);

/* Number of tasks the engine keeps state for. */
unsigned np_engine_tracked(const struct np_engine *engine);
