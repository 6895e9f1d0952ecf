/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

const char *np_human_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 "B", bytes);
		return buf;
	}
	while (v >= 1024 && u < (int)sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

static uint64_t task_node_bytes(const struct np_snap_task *rt, int node)
{
	return node >= 0 && (unsigned)node < rt->mem.nr_node_slots ? rt->mem.node_bytes[node] : 0;
}

/* Shown when the policy could place it. */
static bool has_locality(const struct np_snap_task *rt)
{
	return rt->home_node >= 0;
}

static void format_age(uint64_t ms, char *buf, size_t size)
{
	uint64_t s = ms / 1000;

	if (s < 60)
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "s", s, ms % 1000 / 100);
	else if (s < 3600)
		snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
	else
		snprintf(buf, size, "%" PRIu64 "d%02" PRIu64 "h", s / 86400, s / 3600 % 24);
}

/* A comm may hold newlines and other control bytes: show them as '?'. */
static void printable_comm(const char *comm, char *buf, size_t size)
{
	size_t i;

	for (i = 0; comm[i] && i + 1 < size; i++)
		buf[i] = (unsigned char)comm[i] < 0x20 || comm[i] == 0x7f ? '?' : comm[i];
	buf[i] = '\0';
}

static void write_topology_text(const struct np_snapshot *report, FILE *out)
{
	const struct np_topology *topo = report->topo;
	char cpus[64], total[16], free_[16], demand[24];
	unsigned ncpus = 0;

	for (unsigned i = 0; i < topo->nr_nodes; i++)
		ncpus += topo->nodes[i].nr_cpus;
	fprintf(out, "%u node%s, %u CPU%s, kernel NUMA balancing: %s\n\n", topo->nr_nodes,
		topo->nr_nodes == 1 ? "" : "s", ncpus, ncpus == 1 ? "" : "s",
		report->kernel_numa_balancing < 0    ? "absent"
		: report->kernel_numa_balancing == 0 ? "off"
						     : "on");
	fprintf(out, "%-5s %-12s %8s %8s %5s %9s  %s\n", "NODE", "CPUS", "TOTAL", "FREE", "LOAD",
		"DEMAND", "DISTANCES");
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		const struct np_node *node = &topo->nodes[i];

		if (np_bitmap_format_list(&node->cpus, cpus, sizeof(cpus)) >= sizeof(cpus))
			strcpy(cpus + sizeof(cpus) - 4, "...");
		/* The plan's CPU demand homed or running there, of its CPUs. */
		if (report->node_plan && node->nr_cpus)
			snprintf(demand, sizeof(demand), "%.1f/%u", report->node_plan[i].demand,
				 report->node_plan[i].cpus);
		else
			snprintf(demand, sizeof(demand), "-");
		fprintf(out, "%-5d %-12s %8s %8s %4.0f%% %9s ", node->id,
			node->nr_cpus ? cpus : "-",
			np_human_bytes(node->mem_total, total, sizeof(total)),
			np_human_bytes(node->mem_free, free_, sizeof(free_)),
			report->node_load[i] * 100, demand);
		for (unsigned j = 0; j < topo->nr_nodes; j++)
			fprintf(out, " %3u", topo->distance[i * topo->nr_nodes + j]);
		fputc('\n', out);
	}
}

static void write_decision_text(const struct np_snap_task *rt, FILE *out)
{
	const struct np_action *a = &rt->action;
	char what[48], size[16];

	if (!rt->has_decision) {
		fprintf(out, " %-16s\n", "-");
		return;
	}
	switch (a->kind) {
	case NP_ACTION_MOVE:
		if (a->widen)
			snprintf(what, sizeof(what), "widen");
		else if (!a->move_pages && a->set_affinity)
			snprintf(what, sizeof(what), "narrow->N%d", a->plan_home);
		else
			snprintf(what, sizeof(what), "%s %s->N%d",
				 a->set_affinity ? "home" : "move",
				 np_human_bytes(a->move_bytes, size, sizeof(size)), a->target_node);
		break;
	case NP_ACTION_SPREAD:
		snprintf(what, sizeof(what), "spread");
		break;
	default:
		snprintf(what, sizeof(what), "%s", np_action_kind_name(a->kind));
		break;
	}
	fprintf(out, " %-16s %s: %s\n", what, np_reason_name(a->reason), a->reason_text);
}

static void format_ago(const struct np_snapshot *report, uint64_t at_ms, char *buf, size_t size)
{
	format_age(report->now_ms >= at_ms ? report->now_ms - at_ms : 0, buf, size);
}

/* A status's columns of a task, before its decision: CPU since the look
 * before, looks, how long since the last, everything moved for it. */
static void write_live_columns(const struct np_snapshot *report, const struct np_snap_task *rt,
			       FILE *out)
{
	char ago[16], moved[16];

	format_ago(report, rt->live.look_ms, ago, sizeof(ago));
	fprintf(out, " %5.0f%% %5u %8s %8s", rt->live.cpu_percent, rt->live.looks, ago,
		np_human_bytes(rt->live.moved_bytes, moved, sizeof(moved)));
}

/* Its threads' homes, on one line. */
static void write_threads_line(const struct np_snap_threads *th, FILE *out)
{
	char own[16], shared[16], moved[16];

	if (th->sampling && !th->nr) {
		fprintf(out, "%7s thread homes: its threads' writes are being sampled\n", "");
		return;
	}
	if (!th->nr)
		return;
	fprintf(out, "%7s thread homes: %u thread%s (", "", th->nr, th->nr == 1 ? "" : "s");
	for (unsigned i = 0; i < th->nr && i < NP_SNAP_THREAD_HOMES; i++)
		fprintf(out, "%s%d on node %d", i ? ", " : "", th->tid[i], th->node[i]);
	fprintf(out, "%s); %s written by one thread alone, %s by several; %s moved\n",
		th->nr > NP_SNAP_THREAD_HOMES ? ", ..." : "",
		np_human_bytes(th->own_bytes, own, sizeof(own)),
		np_human_bytes(th->shared_bytes, shared, sizeof(shared)),
		np_human_bytes(th->moved_bytes, moved, sizeof(moved)));
}

/* A status's lines under a task: its last action, the mask the daemon
 * keeps it on, its threads' homes. */
static void write_live_lines(const struct np_snapshot *report, const struct np_snap_task *rt,
			     FILE *out)
{
	const struct np_snap_acted *la = &rt->live.last_action;
	const struct np_action *a = &rt->action;
	char ago[16], size[16], from[128], to[128];

	if (rt->live.acted) {
		const char *verb = la->widen				 ? "widen"
				   : la->set_affinity && !la->move_pages ? "narrow"
				   : la->set_affinity			 ? "home"
									 : "move";

		format_ago(report, la->at_ms, ago, sizeof(ago));
		if (la->target_node >= 0 && !la->widen)
			fprintf(out, "%7s last action %s ago: %s to node %d, %s moved, %s: %s: %s\n",
				"", ago, verb, la->target_node,
				np_human_bytes(la->moved_bytes, size, sizeof(size)),
				np_snap_outcome_name(la->outcome), np_reason_name(la->reason),
				la->reason_text);
		else
			fprintf(out, "%7s last action %s ago: %s, %s moved, %s: %s: %s\n", "", ago,
				verb, np_human_bytes(la->moved_bytes, size, sizeof(size)),
				np_snap_outcome_name(la->outcome), np_reason_name(la->reason),
				la->reason_text);
	}
	if (rt->live.last_sampled)
		fprintf(out, "%7s last look sampled (memory shown as of the read before): %s\n", "",
			a->reason_text);
	if (rt->has_decision && a->narrowed) {
		np_bitmap_format_list(&a->narrowed_from, from, sizeof(from));
		np_bitmap_format_list(&a->narrowed_to, to, sizeof(to));
		fprintf(out, "%7s narrowed: CPUs %s -> %s\n", "", from, to);
	}
	write_threads_line(&rt->threads, out);
}

int np_report_write_text(const struct np_snapshot *report, FILE *out)
{
	const struct np_topology *topo = report->topo;
	char buf[32], comm[NP_COMM_MAX];

	if (report->live) {
		format_ago(report, report->decided_ms, buf, sizeof(buf));
		fprintf(out,
			"Running daemon%s: %u task%s looked at; the nodes as last decided on, "
			"%s ago\n\n",
			report->dry_run ? " (dry run: it changes nothing)" : "",
			report->nr_tasks, report->nr_tasks == 1 ? "" : "s", buf);
	}
	write_topology_text(report, out);
	if (report->assumed_looks > 1)
		fprintf(out,
			"\nOne look: a first move of threads not pinned, which waits for %u looks"
			" that agree, is shown as if this one had lasted that long.\n",
			report->assumed_looks);
	fprintf(out, "\n%7s %-16s %8s %8s %4s %4s", "PID", "COMMAND", "AGE", "RSS", "THR", "RUN");
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		snprintf(buf, sizeof(buf), "N%d", topo->nodes[i].id);
		fprintf(out, " %8s", buf);
	}
	fprintf(out, " %6s", "LOCAL");
	if (report->live)
		fprintf(out, " %6s %5s %8s %8s", "CPU", "LOOKS", "LOOKED", "MOVED");
	fprintf(out, " %-16s %s\n", "DECISION", "WHY");
	for (unsigned t = 0; t < report->nr_tasks; t++) {
		const struct np_snap_task *rt = &report->tasks[t];

		printable_comm(rt->task.comm, comm, sizeof(comm));
		format_age(rt->task.age_ms, buf, sizeof(buf));
		fprintf(out, "%7d %-16.16s %8s", rt->task.pid, comm, buf);
		fprintf(out, " %8s %4u", np_human_bytes(rt->task.rss_bytes, buf, sizeof(buf)),
			rt->task.nr_threads);
		if (rt->run_node >= 0)
			fprintf(out, " %4d", rt->run_node);
		else
			fprintf(out, " %4s", "-");
		for (unsigned i = 0; i < topo->nr_nodes; i++)
			fprintf(out, " %8s",
				np_human_bytes(task_node_bytes(rt, topo->nodes[i].id), buf,
					       sizeof(buf)));
		if (has_locality(rt))
			fprintf(out, " %5.1f%%", rt->locality * 100);
		else
			fprintf(out, " %6s", "-");
		if (report->live)
			write_live_columns(report, rt, out);
		write_decision_text(rt, out);
		if (report->live)
			write_live_lines(report, rt, out);
	}
	if (!report->nr_tasks)
		fprintf(out, report->live ? "(no task looked at yet)\n"
					  : "(no task above the size threshold)\n");
	return ferror(out) ? -EIO : 0;
}

static json_object *json_u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static json_object *topology_json(const struct np_snapshot *report)
{
	const struct np_topology *topo = report->topo;
	json_object *obj = json_object_new_object(), *nodes = json_object_new_array();

	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		const struct np_node *node = &topo->nodes[i];
		json_object *n = json_object_new_object(), *cpus = json_object_new_array();
		json_object *dist = json_object_new_array();

		np_bitmap_for_each(cpu, &node->cpus)
		{
			json_object_array_add(cpus, json_object_new_int(cpu));
		}
		for (unsigned j = 0; j < topo->nr_nodes; j++)
			json_object_array_add(
			    dist, json_object_new_int((int)topo->distance[i * topo->nr_nodes + j]));
		json_object_object_add(n, "id", json_object_new_int(node->id));
		json_object_object_add(n, "cpus", cpus);
		json_object_object_add(n, "mem_total_bytes", json_u64(node->mem_total));
		json_object_object_add(n, "mem_free_bytes", json_u64(node->mem_free));
		json_object_object_add(n, "file_pages_bytes", json_u64(node->file_pages));
		json_object_object_add(n, "cpu_load", json_object_new_double(report->node_load[i]));
		json_object_object_add(
		    n, "plan_cpu_demand",
		    report->node_plan ? json_object_new_double(report->node_plan[i].demand) : NULL);
		json_object_object_add(n, "distances", dist);
		json_object_array_add(nodes, n);
	}
	json_object_object_add(obj, "nodes", nodes);
	json_object_object_add(obj, "kernel_numa_balancing",
			       report->kernel_numa_balancing < 0
				   ? NULL
				   : json_object_new_int(report->kernel_numa_balancing));
	return obj;
}

static json_object *node_map_json(const struct np_snap_task *rt, const uint64_t *bytes)
{
	json_object *obj = json_object_new_object();
	char key[16];

	for (unsigned n = 0; bytes && n < rt->mem.nr_node_slots; n++) {
		if (!bytes[n])
			continue;
		snprintf(key, sizeof(key), "%u", n);
		json_object_object_add(obj, key, json_u64(bytes[n]));
	}
	return obj;
}

static json_object *cpus_json(const struct np_bitmap *cpus)
{
	json_object *arr = json_object_new_array();

	np_bitmap_for_each(cpu, cpus)
	{
		json_object_array_add(arr, json_object_new_int(cpu));
	}
	return arr;
}

/* The machine-wide plan's part of a decision; null for a task whose
 * threads are not the daemon's to place. */
static json_object *plan_json(const struct np_action *a)
{
	json_object *obj;

	if (!a->planned && !a->set_affinity && !a->narrowed)
		return NULL;
	obj = json_object_new_object();
	json_object_object_add(obj, "home_node",
			       a->plan_home < 0 ? NULL : json_object_new_int(a->plan_home));
	json_object_object_add(
	    obj, "reason",
	    a->planned ? json_object_new_string(np_plan_reason_name(a->plan_reason)) : NULL);
	json_object_object_add(obj, "cpu_demand", json_object_new_double(a->demand));
	json_object_object_add(obj, "set_affinity", json_object_new_boolean(a->set_affinity));
	json_object_object_add(obj, "widen", json_object_new_boolean(a->widen));
	json_object_object_add(obj, "affinity_from",
			       a->set_affinity ? cpus_json(&a->from_cpus) : NULL);
	json_object_object_add(obj, "affinity_to",
			       a->set_affinity ? cpus_json(&a->target_cpus) : NULL);
	json_object_object_add(obj, "narrowed_from",
			       a->narrowed ? cpus_json(&a->narrowed_from) : NULL);
	json_object_object_add(obj, "narrowed_to", a->narrowed ? cpus_json(&a->narrowed_to) : NULL);
	return obj;
}

static json_object *ago_json(const struct np_snapshot *report, uint64_t at_ms)
{
	return json_u64(report->now_ms >= at_ms ? report->now_ms - at_ms : 0);
}

/* Its threads' homes; null when it has none and none is being sampled. */
static json_object *threads_json(const struct np_snap_threads *th)
{
	json_object *obj, *arr;

	if (!th->nr && !th->sampling)
		return NULL;
	obj = json_object_new_object();
	arr = json_object_new_array();
	for (unsigned i = 0; i < th->nr && i < NP_SNAP_THREAD_HOMES; i++) {
		json_object *one = json_object_new_object();

		json_object_object_add(one, "tid", json_object_new_int(th->tid[i]));
		json_object_object_add(one, "node", json_object_new_int(th->node[i]));
		json_object_array_add(arr, one);
	}
	json_object_object_add(obj, "count", json_object_new_int((int)th->nr));
	json_object_object_add(obj, "threads", arr);
	json_object_object_add(obj, "sampling", json_object_new_boolean(th->sampling));
	json_object_object_add(obj, "own_bytes", json_u64(th->own_bytes));
	json_object_object_add(obj, "shared_bytes", json_u64(th->shared_bytes));
	json_object_object_add(obj, "moved_bytes", json_u64(th->moved_bytes));
	return obj;
}

/* A status's own fields of a task. */
static json_object *live_json(const struct np_snapshot *report, const struct np_snap_task *rt)
{
	const struct np_snap_acted *la = &rt->live.last_action;
	json_object *obj = json_object_new_object(), *last = NULL;

	json_object_object_add(obj, "cpu_percent", json_object_new_double(rt->live.cpu_percent));
	json_object_object_add(obj, "looks", json_object_new_int((int)rt->live.looks));
	json_object_object_add(obj, "last_look_ago_ms", ago_json(report, rt->live.look_ms));
	json_object_object_add(obj, "sampled_looks",
			       json_object_new_int((int)rt->live.sampled_looks));
	json_object_object_add(
	    obj, "last_look",
	    json_object_new_string(rt->live.last_sampled ? "sampled" : "numa_maps"));
	json_object_object_add(obj, "moved_bytes", json_u64(rt->live.moved_bytes));
	if (rt->live.acted) {
		last = json_object_new_object();
		json_object_object_add(last, "decision",
				       json_object_new_string(np_action_kind_name(la->kind)));
		json_object_object_add(last, "reason",
				       json_object_new_string(np_reason_name(la->reason)));
		json_object_object_add(last, "reason_text",
				       json_object_new_string(la->reason_text));
		json_object_object_add(last, "target_node",
				       la->target_node < 0 ? NULL
							   : json_object_new_int(la->target_node));
		json_object_object_add(last, "set_affinity",
				       json_object_new_boolean(la->set_affinity));
		json_object_object_add(last, "widen", json_object_new_boolean(la->widen));
		json_object_object_add(last, "move_pages", json_object_new_boolean(la->move_pages));
		json_object_object_add(last, "outcome",
				       json_object_new_string(np_snap_outcome_name(la->outcome)));
		json_object_object_add(last, "moved_bytes", json_u64(la->moved_bytes));
		json_object_object_add(last, "ago_ms", ago_json(report, la->at_ms));
	}
	json_object_object_add(obj, "last_action", last);
	json_object_object_add(obj, "thread_homes", threads_json(&rt->threads));
	return obj;
}

static json_object *task_json(const struct np_snapshot *report, const struct np_snap_task *rt)
{
	json_object *obj = json_object_new_object();

	json_object_object_add(obj, "pid", json_object_new_int(rt->task.pid));
	json_object_object_add(obj, "comm", json_object_new_string(rt->task.comm));
	json_object_object_add(obj, "age_ms", json_u64(rt->task.age_ms));
	json_object_object_add(obj, "rss_bytes", json_u64(rt->task.rss_bytes));
	json_object_object_add(obj, "threads", json_object_new_int((int)rt->task.nr_threads));
	json_object_object_add(obj, "run_node",
			       rt->run_node < 0 ? NULL : json_object_new_int(rt->run_node));
	json_object_object_add(obj, "home_node",
			       rt->home_node < 0 ? NULL : json_object_new_int(rt->home_node));
	json_object_object_add(obj, "node_bytes", node_map_json(rt, rt->mem.node_bytes));
	json_object_object_add(obj, "anon_node_bytes", node_map_json(rt, rt->mem.anon_bytes));
	json_object_object_add(obj, "movable_node_bytes", node_map_json(rt, rt->mem.movable_bytes));
	json_object_object_add(obj, "locality",
			       has_locality(rt) ? json_object_new_double(rt->locality) : NULL);
	if (rt->has_decision) {
		const struct np_action *a = &rt->action;

		json_object_object_add(obj, "decision",
				       json_object_new_string(np_action_kind_name(a->kind)));
		json_object_object_add(obj, "reason",
				       json_object_new_string(np_reason_name(a->reason)));
		json_object_object_add(obj, "reason_text", json_object_new_string(a->reason_text));
		json_object_object_add(obj, "target_node",
				       a->target_node < 0 ? NULL
							  : json_object_new_int(a->target_node));
		json_object_object_add(obj, "move_bytes", json_u64(a->move_bytes));
		json_object_object_add(obj, "plan", plan_json(a));
	}
	if (report->live)
		json_object_object_add(obj, "live", live_json(report, rt));
	return obj;
}

/* Print @root as the report's JSON and free it; -EIO if the print fails,
 * else @err. */
static int print_json(FILE *out, struct json_object *root, int err)
{
	if (fprintf(out, "%s\n",
		    json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_SPACED |
							     JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		err = -EIO;
	json_object_put(root);
	return err;
}

int np_report_write_json(const struct np_snapshot *report, FILE *out)
{
	json_object *root = json_object_new_object(), *tasks = json_object_new_array();
	int err = 0;

	json_object_object_add(root, "uptime_ms", json_u64(report->uptime_ms));
	json_object_object_add(root, "assumed_looks",
			       json_object_new_int((int)report->assumed_looks));
	if (report->live) {
		json_object *live = json_object_new_object();

		json_object_object_add(live, "dry_run", json_object_new_boolean(report->dry_run));
		json_object_object_add(live, "decided_ago_ms",
				       ago_json(report, report->decided_ms));
		json_object_object_add(root, "live", live);
	}
	json_object_object_add(root, "topology", topology_json(report));
	for (unsigned t = 0; t < report->nr_tasks; t++)
		json_object_array_add(tasks, task_json(report, &report->tasks[t]));
	json_object_object_add(root, "tasks", tasks);
	return print_json(out, root, err);
}

static uint64_t row_bytes(const struct np_cgroup_usage *row, int node)
{
	if (node < 0 || (unsigned)node >= row->nr_node_slots)
		return 0;
	return row->anon_bytes[node] + row->file_bytes[node];
}

int np_report_write_cgroups_text(const struct np_snapshot *snap,
				 const struct np_cgroup_usage *rows, size_t nr, FILE *out)
{
	const struct np_topology *topo = snap->topo;
	char buf[32], cpus[64], mems[64];

	write_topology_text(snap, out);
	fprintf(out, "\n%5s", "TASKS");
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		snprintf(buf, sizeof(buf), "N%d", topo->nodes[i].id);
		fprintf(out, " %8s", buf);
	}
	fprintf(out, " %8s  %-12s %-8s %-17s %s\n", "TOTAL", "CPUS", "MEMS", "SOURCE", "CGROUP");
	for (size_t r = 0; r < nr; r++) {
		const struct np_cgroup_usage *row = &rows[r];
		uint64_t total = 0;

		fprintf(out, "%5u", row->nr_tasks);
		for (unsigned n = 0; n < row->nr_node_slots; n++)
			total += row_bytes(row, (int)n);
		for (unsigned i = 0; i < topo->nr_nodes; i++)
			fprintf(out, " %8s",
				np_human_bytes(row_bytes(row, topo->nodes[i].id), buf, sizeof(buf)));
		if (np_bitmap_empty(&row->cpuset_cpus))
			strcpy(cpus, "-");
		else if (np_bitmap_format_list(&row->cpuset_cpus, cpus, sizeof(cpus)) >=
			 sizeof(cpus))
			strcpy(cpus + sizeof(cpus) - 4, "...");
		if (np_nodeset_empty(&row->cpuset_mems))
			strcpy(mems, "-");
		else if (np_nodeset_format_list(&row->cpuset_mems, mems, sizeof(mems)) >=
			 sizeof(mems))
			strcpy(mems + sizeof(mems) - 4, "...");
		fprintf(out, " %8s  %-12s %-8s %-17s %s\n",
			np_human_bytes(total, buf, sizeof(buf)), cpus, mems,
			np_cgroup_source_name(row->source), row->path ? row->path : "(none)");
	}
	if (!nr)
		fprintf(out, "(no task above the size threshold)\n");
	return ferror(out) ? -EIO : 0;
}

static json_object *slots_json(const uint64_t *a, const uint64_t *b, unsigned nr_slots)
{
	json_object *obj = json_object_new_object();
	char key[16];

	for (unsigned n = 0; n < nr_slots; n++) {
		uint64_t v = a[n] + (b ? b[n] : 0);

		if (!v)
			continue;
		snprintf(key, sizeof(key), "%u", n);
		json_object_object_add(obj, key, json_u64(v));
	}
	return obj;
}

static json_object *cgroup_json(const struct np_cgroup_usage *row)
{
	json_object *obj = json_object_new_object(), *pids = json_object_new_array();
	json_object *mems = NULL;

	for (unsigned i = 0; i < row->nr_tasks; i++)
		json_object_array_add(pids, json_object_new_int(row->pids[i]));
	if (!np_nodeset_empty(&row->cpuset_mems)) {
		mems = json_object_new_array();
		np_nodeset_for_each(node, &row->cpuset_mems)
		{
			json_object_array_add(mems, json_object_new_int(node));
		}
	}
	json_object_object_add(obj, "path", row->path ? json_object_new_string(row->path) : NULL);
	json_object_object_add(obj, "pids", pids);
	json_object_object_add(obj, "rss_bytes", json_u64(row->rss_bytes));
	json_object_object_add(obj, "source",
			       json_object_new_string(np_cgroup_source_name(row->source)));
	json_object_object_add(obj, "node_bytes",
			       slots_json(row->anon_bytes, row->file_bytes, row->nr_node_slots));
	json_object_object_add(obj, "anon_node_bytes",
			       slots_json(row->anon_bytes, NULL, row->nr_node_slots));
	json_object_object_add(obj, "file_node_bytes",
			       slots_json(row->file_bytes, NULL, row->nr_node_slots));
	json_object_object_add(obj, "cpuset_cpus",
			       np_bitmap_empty(&row->cpuset_cpus) ? NULL
								  : cpus_json(&row->cpuset_cpus));
	json_object_object_add(obj, "cpuset_mems", mems);
	return obj;
}

int np_report_write_cgroups_json(const struct np_snapshot *snap,
				 const struct np_cgroup_usage *rows, size_t nr, FILE *out)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array();
	int err = 0;

	json_object_object_add(root, "uptime_ms", json_u64(snap->uptime_ms));
	json_object_object_add(root, "topology", topology_json(snap));
	for (size_t r = 0; r < nr; r++)
		json_object_array_add(arr, cgroup_json(&rows[r]));
	json_object_object_add(root, "cgroups", arr);
	return print_json(out, root, err);
}
