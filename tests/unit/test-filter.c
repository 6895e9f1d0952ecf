/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "config.h"
#include "filter.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct filter_case {
	const char *name;
	const char *comm;
	int pid;
	const char *cgroup;
	bool has_details;
	char *const *exclude_comm, *const *include_comm;
	char *const *exclude_cgroup, *const *include_cgroup;
	bool exclude_pid_4242;
	bool excluded;
	const char *text;
};

static char *const ssh_glob[] = {"ssh*", NULL};
static char *const db_globs[] = {"postgres", "mysqld", NULL};
static char *const system_slice[] = {"/system.slice/", NULL};
static char *const user_slice[] = {"/user.slice", NULL};
static char *const besteffort[] = {"/kubepods.slice/*besteffort*", NULL};
static char *const any_pod_db[] = {"/kubepods.slice/*/*-pod?.slice/cri-containerd-db*.scope", NULL};
static char *const bracket[] = {"/machine.slice/machine-qemu[0-9]*", NULL};

static const struct filter_case cases[] = {
    {"an ordinary task passes", "worker", 4242, "/user.slice/app", true, .excluded = false},
    {"exclude_pid", "worker", 4242, .exclude_pid_4242 = true, .excluded = true,
     .text = "pid 4242 is in exclude_pid"},
    {"another pid passes exclude_pid", "worker", 4243, .exclude_pid_4242 = true},
    {"exclude_comm glob", "sshd", 4242, .exclude_comm = ssh_glob, .excluded = true,
     .text = "comm \"sshd\" matches exclude_comm \"ssh*\""},
    {"include_comm that does not match", "worker", 4242, .include_comm = db_globs,
     .excluded = true, .text = "comm \"worker\" matches no include_comm pattern"},
    {"include_comm that matches", "mysqld", 4242, .include_comm = db_globs},
    {"exclude_cgroup covers its subtree", "worker", 4242, "/system.slice/cron.service", true,
     .exclude_cgroup = system_slice, .excluded = true,
     .text = "cgroup /system.slice/cron.service is under exclude_cgroup /system.slice"},
    {"exclude_cgroup matches whole components only", "worker", 4242, "/system.slice2/x.service",
     true, .exclude_cgroup = system_slice, .excluded = false},
    {"include_cgroup that does not match", "worker", 4242, "/system.slice/x.service", true,
     .include_cgroup = user_slice, .excluded = true},
    {"include_cgroup exact", "worker", 4242, "/user.slice", true, .include_cgroup = user_slice,
     .excluded = false},
    /* Globs: a wildcard stays within a component, and what a pattern
     * matches covers the cgroups below it. */
    {"exclude_cgroup glob covers the pods it matches and their containers", "worker", 4242,
     "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-a.scope",
     true, .exclude_cgroup = besteffort, .excluded = true,
     .text = "cgroup /kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/"
	     "cri-containerd-a.scope is under exclude_cgroup /kubepods.slice/*besteffort*"},
    {"exclude_cgroup glob leaves other pods", "worker", 4242,
     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice", true,
     .exclude_cgroup = besteffort, .excluded = false},
    {"a '*' does not cross a '/'", "worker", 4242, "/kubepods.slice/x/kubepods-besteffort.slice",
     true, .exclude_cgroup = besteffort, .excluded = false},
    {"include_cgroup glob over several components", "worker", 4242,
     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7.slice/"
     "cri-containerd-db42.scope",
     true, .include_cgroup = any_pod_db, .excluded = false},
    {"include_cgroup glob that does not match", "worker", 4242,
     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod17.slice/"
     "cri-containerd-db42.scope",
     true, .include_cgroup = any_pod_db, .excluded = true},
    {"bracket expressions", "worker", 4242, "/machine.slice/machine-qemu7-vm.scope/vcpu0", true,
     .exclude_cgroup = bracket, .excluded = true},
    {"bracket expressions that do not match", "worker", 4242, "/machine.slice/machine-lxc-c1.scope",
     true, .exclude_cgroup = bracket, .excluded = false},
    /* Without details the cgroup is unknown: the cgroup rules wait for
     * them rather than excluding everything. */
    {"cgroup rules wait for details", "worker", 4242, NULL, false, .include_cgroup = user_slice},
    {"no cgroup line is in no cgroup", "worker", 4242, NULL, true, .include_cgroup = user_slice,
     .excluded = true, .text = "cgroup (unknown) is under no include_cgroup"},
};

static struct np_strv strv(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return (struct np_strv){.v = (char **)v, .n = n};
}

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct filter_case *c = &cases[i];
		struct np_config cfg;
		struct np_task task = {0};
		struct np_filter *f;
		int excluded_pid = 4242, before = check_failures;
		char why[256] = "";

		np_config_init(&cfg);
		cfg.exclude_comm = strv(c->exclude_comm);
		cfg.include_comm = strv(c->include_comm);
		cfg.exclude_cgroup = strv(c->exclude_cgroup);
		cfg.include_cgroup = strv(c->include_cgroup);
		if (c->exclude_pid_4242) {
			cfg.exclude_pid = &excluded_pid;
			cfg.nr_exclude_pid = 1;
		}
		/* The filter keeps copies: the config's lists may go. */
		CHECK_INT(np_filter_new(&cfg, &f), 0);
		task.pid = c->pid;
		snprintf(task.comm, sizeof(task.comm), "%s", c->comm);
		task.has_details = c->has_details;
		task.cgroup = (char *)c->cgroup;
		CHECK_INT(np_filter_needs_cgroup(f), c->exclude_cgroup || c->include_cgroup);
		CHECK_INT(np_filter_excludes(f, &task, why, sizeof(why)), c->excluded);
		if (c->text)
			CHECK_STR(why, c->text);
		if (check_failures != before)
			fprintf(stderr, "  in filter case \"%s\": \"%s\"\n", c->name, why);
		np_filter_free(f);
	}
}

/* Many excluded pids: looked up, not scanned, whatever their order. */
static void test_many_pids(void)
{
	int pids[100];
	struct np_config cfg;
	struct np_filter *f;
	struct np_task task = {0};

	for (int i = 0; i < 100; i++)
		pids[i] = (i * 37) % 100 + 1000;
	np_config_init(&cfg);
	cfg.exclude_pid = pids;
	cfg.nr_exclude_pid = 100;
	CHECK_INT(np_filter_new(&cfg, &f), 0);
	for (int pid = 990; pid < 1110; pid++) {
		task.pid = pid;
		CHECK_INT(np_filter_excludes(f, &task, NULL, 0), pid >= 1000 && pid < 1100);
	}
	np_filter_free(f);
}

/* The daemon's own pid is excluded, whatever the config includes. */
static void test_self(void)
{
	static char *const include[] = {"numaplaced", NULL};
	struct np_config cfg;
	struct np_filter *f;
	struct np_task task = {.pid = 4321};
	char why[128];

	np_config_init(&cfg);
	cfg.include_comm = strv(include);
	strcpy(task.comm, "numaplaced");
	CHECK_INT(np_filter_new(&cfg, &f), 0);
	CHECK(!np_filter_excludes(f, &task, NULL, 0));
	np_filter_set_self(f, 4321);
	CHECK(np_filter_excludes(f, &task, why, sizeof(why)));
	CHECK_STR(why, "pid 4321 is this daemon");
	task.pid = 4322;
	CHECK(!np_filter_excludes(f, &task, NULL, 0));
	np_filter_free(f);
}

int main(void)
{
	test_cases();
	test_many_pids();
	test_self();
	return check_done();
}
