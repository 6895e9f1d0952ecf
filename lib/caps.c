/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "caps.h"

#include <errno.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

/*
 * What each one is checked for, as the kernel does it (mm/migrate.c,
 * kernel/sched/syscalls.c, fs/proc/base.c):
 *   - /proc/PID/numa_maps and /proc/PID/maps open with a PTRACE_MODE_READ
 *     check, and since Linux 4.13 move_pages(2) and migrate_pages(2) make
 *     the same check on the target: another user's task needs
 *     CAP_SYS_PTRACE.
 *   - sched_setaffinity(2) on another user's task needs CAP_SYS_NICE; so do
 *     migrate_pages(2) to nodes outside the task's cpuset and moving pages
 *     other processes share too (MPOL_MF_MOVE_ALL, which the daemon never
 *     asks of move_pages).
 */
static const struct {
	int cap;
	const char *name;
	const char *without;
} needed[] = {
    {CAP_SYS_PTRACE, "CAP_SYS_PTRACE",
     "the numa_maps of other users' tasks cannot be read nor their pages moved: those tasks "
     "are left where they are, each refusal counted in numaplaced_permission_denied_total"},
    {CAP_SYS_NICE, "CAP_SYS_NICE",
     "the CPU affinity of other users' tasks cannot be set: their threads keep their masks "
     "and are not narrowed to a home node, each refusal counted in "
     "numaplaced_permission_denied_total"},
};

int np_caps_effective(uint64_t *out)
{
	struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};

	if (syscall(SYS_capget, &header, data) < 0)
		return -errno;
	*out = data[0].effective | (uint64_t)data[1].effective << 32;
	return 0;
}

unsigned np_caps_log_missing(const struct np_ctx *ctx, uint64_t effective)
{
	unsigned missing = 0;

	for (unsigned i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (effective & (1ull << needed[i].cap))
			continue;
		np_log(ctx, LOG_WARNING, "no %s: %s", needed[i].name, needed[i].without);
		missing++;
	}
	return missing;
}

void np_caps_check(const struct np_ctx *ctx)
{
	uint64_t effective;
	int err;

	if (!np_ctx_is_live(ctx))
		return;
	err = np_caps_effective(&effective);
	if (err)
		np_log(ctx, LOG_WARNING, "cannot read the capabilities it holds: %s",
		       strerror(-err));
	else
		np_caps_log_missing(ctx, effective);
}
