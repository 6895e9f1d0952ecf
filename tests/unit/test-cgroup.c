/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cgroup.h"
#include "check.h"

#include <errno.h>
#include <stdarg.h>

#define MiB (1024ull * 1024)

/* Parse from an exact-size heap copy, so a read past @len is caught by ASan. */
static int parse_exact(const char *text, struct np_numa_stat *st)
{
	size_t len = strlen(text);
	char *copy = malloc(len ? len : 1);
	int err;

	memcpy(copy, text, len);
	err = np_numa_stat_parse(copy, len, st);
	free(copy);
	return err;
}

static void test_parse(void)
{
	struct np_numa_stat st;

	/* As cgroup v2 prints it: bytes per node, anon and file among others. */
	CHECK_INT(parse_exact("anon N0=104857600 N1=52428800\n"
			      "file N0=10485760 N1=0\n"
			      "kernel_stack N0=16384 N1=16384\n"
			      "shmem N0=0 N1=0\n"
			      "file_mapped N0=4096 N1=0\n",
			      &st),
		  0);
	CHECK_INT(st.nr_node_slots, 2);
	CHECK_U64(st.anon_bytes[0], 100 * MiB);
	CHECK_U64(st.anon_bytes[1], 50 * MiB);
	CHECK_U64(st.file_bytes[0], 10 * MiB);
	CHECK_U64(st.file_bytes[1], 0);
	np_numa_stat_clear(&st);
	CHECK(!st.anon_bytes && !st.file_bytes && st.nr_node_slots == 0);

	/* Sparse node ids and no final newline; a missing file line is 0. */
	CHECK_INT(parse_exact("anon N0=1 N3=7", &st), 0);
	CHECK_INT(st.nr_node_slots, 4);
	CHECK_U64(st.anon_bytes[3], 7);
	CHECK_U64(st.anon_bytes[1], 0);
	CHECK_U64(st.file_bytes[3], 0);
	np_numa_stat_clear(&st);

	/* Empty: no memory anywhere. */
	CHECK_INT(parse_exact("", &st), 0);
	CHECK_INT(st.nr_node_slots, 0);
	np_numa_stat_clear(&st);

	/* Lines that are not anon or file are never looked into. */
	CHECK_INT(parse_exact("anon_thp whatever\nfile_dirty N0=x\nanon N0=5\n", &st), 0);
	CHECK_U64(st.anon_bytes[0], 5);
	np_numa_stat_clear(&st);

	/* Malformed anon or file lines: the line is named. */
	static const struct {
		const char *text;
		unsigned line;
	} bad[] = {
	    {"anon N0=12x\n", 1},
	    {"shmem N0=0\nfile N0=1 M1=2\n", 2},
	    {"anon N0=1 N0=2\n", 1},		     /* a node twice */
	    {"anon N0=1\nfile N0=0\nanon N0=3\n", 3}, /* a second anon line */
	    {"anon N1024=1\n", 1},		     /* above NP_MAX_NODES */
	    {"anon N=1\n", 1},
	    {"anon N0=\n", 1},
	    {"anon N0 1\n", 1},
	    {"file N0=18446744073709551616\n", 1},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(parse_exact(bad[i].text, &st), -EINVAL);
		CHECK_INT(st.bad_line, bad[i].line);
		CHECK(!st.anon_bytes && !st.file_bytes);
	}
}

static char last_log[512];

__attribute__((format(printf, 3, 0)))
static void capture_log(void *data, int priority, const char *fmt, va_list args)
{
	vsnprintf(last_log, sizeof(last_log), fmt, args);
}

/* Rows from a snapshot of tests/fixtures/cgroup-2node's cgroups: the
 * numa_stat of a cgroup that has one, the tasks' numa_maps summed where it
 * has none, is the root, or has a malformed one. */
static void test_usage(void)
{
	static const char *const cgroups[] = {
	    "/system.slice/cron.service", "/kubepods.slice/kubepods-pod2.slice/cri-containerd-ccc.scope",
	    "/system.slice/cron.service", "/", "/system.slice/bad.service", NULL,
	};
	struct np_snapshot snap = {0};
	struct np_snap_task tasks[6];
	uint64_t anon[6][2], all[6][2];
	struct np_cgroup_usage *rows;
	struct np_ctx *ctx;
	size_t nr;

	memset(tasks, 0, sizeof(tasks));
	for (int i = 0; i < 6; i++) {
		tasks[i].task.pid = 100 + i;
		tasks[i].task.rss_bytes = (uint64_t)(i + 1) * MiB;
		tasks[i].task.cgroup = (char *)cgroups[i];
		/* Each task: i MiB anon on node 0, 1 MiB of file on node 1. */
		anon[i][0] = (uint64_t)i * MiB;
		anon[i][1] = 0;
		all[i][0] = anon[i][0];
		all[i][1] = MiB;
		tasks[i].mem.nr_node_slots = 2;
		tasks[i].mem.anon_bytes = anon[i];
		tasks[i].mem.node_bytes = all[i];
	}
	np_nodeset_set(&tasks[1].task.cpuset_mems, 0);
	snap.tasks = tasks;
	snap.nr_tasks = 6;
	CHECK_INT(np_ctx_new(fixture("cgroup-2node"), &ctx), 0);
	np_ctx_set_log_fn(ctx, capture_log, NULL);
	CHECK_INT(np_cgroup_usage_read(ctx, &snap, &rows, &nr), 0);
	/* By path, tasks in no cgroup last. */
	CHECK_INT(nr, 5);
	if (nr == 5) {
		CHECK_STR(rows[0].path, "/");
		CHECK_INT(rows[0].source, NP_CGROUP_NUMA_MAPS);
		CHECK_U64(rows[0].anon_bytes[0], 3 * MiB);
		CHECK_STR(rows[1].path, "/kubepods.slice/kubepods-pod2.slice/cri-containerd-ccc.scope");
		CHECK_INT(rows[1].source, NP_CGROUP_NUMA_STAT);
		CHECK_U64(rows[1].anon_bytes[0], 0);
		CHECK_U64(rows[1].anon_bytes[1], 300 * MiB);
		CHECK(np_nodeset_test(&rows[1].cpuset_mems, 0));
		CHECK_STR(rows[2].path, "/system.slice/bad.service");
		CHECK_INT(rows[2].source, NP_CGROUP_NUMA_MAPS);
		CHECK_U64(rows[2].anon_bytes[0], 4 * MiB);
		CHECK(strstr(last_log, "bad.service/memory.numa_stat:1:") != NULL);
		/* Two tasks, their numa_maps summed: 0 + 2 MiB anon, 2 MiB file. */
		CHECK_STR(rows[3].path, "/system.slice/cron.service");
		CHECK_INT(rows[3].source, NP_CGROUP_NUMA_MAPS);
		CHECK_INT(rows[3].nr_tasks, 2);
		CHECK_INT(rows[3].pids[0], 100);
		CHECK_INT(rows[3].pids[1], 102);
		CHECK_U64(rows[3].rss_bytes, 4 * MiB);
		CHECK_U64(rows[3].anon_bytes[0], 2 * MiB);
		CHECK_U64(rows[3].file_bytes[1], 2 * MiB);
		CHECK(rows[4].path == NULL && rows[4].nr_tasks == 1 && rows[4].pids[0] == 105);
	}
	np_cgroup_usage_free(rows, nr);
	np_ctx_free(ctx);
}

int main(void)
{
	test_parse();
	test_usage();
	return check_done();
}
