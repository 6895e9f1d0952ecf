/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "task.h"

/*
 * Which tasks the configuration leaves to the daemon: exclude_pid,
 * include_comm/exclude_comm (fnmatch(3) globs) and
 * include_cgroup/exclude_cgroup (fnmatch(3) globs over cgroup paths with
 * FNM_PATHNAME, covering the cgroups below what they match:
 * "/system.slice" covers "/system.slice/cron.service", not
 * "/system.slice2"; "/kubepods.slice/kubepods-*.slice" covers the
 * BestEffort and Burstable pods and their containers). Compiled once from
 * a config; the scan scheduler, the policy and --replay all ask this one
 * filter.
 */
struct np_filter;

/* Compile the filter settings of @cfg (copied). Returns 0 or -ENOMEM. */
int np_filter_new(const struct np_config *cfg, struct np_filter **out);

/* Free; NULL is accepted. */
void np_filter_free(struct np_filter *filter);

/* Exclude @pid too, whatever the config says: the daemon's own pid, so
 * that it never moves its own pages or narrows its own threads (0: none,
 * as under a fixture root or in a replay). Kept until the filter is
 * freed: a filter made for a new config needs it again. */
void np_filter_set_self(struct np_filter *filter, int pid);

/* True when the filter has cgroup rules, so a task's cgroup must be known
 * (np_task_read_details) before the filter can pass it. */
bool np_filter_needs_cgroup(const struct np_filter *filter);

/*
 * Whether @task is excluded. The pid and comm rules are always checked; the
 * cgroup rules when @task->has_details (a task without a cgroup line counts
 * as in no cgroup). A task without details passes the cgroup rules for now:
 * ask again once it has them. When excluded and @why is not NULL, one line
 * saying which rule, e.g. "comm \"sshd\" matches exclude_comm \"ssh*\"".
 */
bool np_filter_excludes(const struct np_filter *filter, const struct np_task *task, char *why,
			size_t len);
