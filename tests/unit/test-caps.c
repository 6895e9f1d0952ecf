/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "caps.h"
#include "check.h"
#include "context.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <syslog.h>

static char logged[2048];
static unsigned nr_logged;

__attribute__((format(printf, 3, 0)))
static void keep(void *data, int priority, const char *fmt, va_list args)
{
	size_t n = strlen(logged);

	CHECK_INT(priority, LOG_WARNING);
	vsnprintf(logged + n, sizeof(logged) - n - 1, fmt, args);
	strcat(logged, "\n");
	nr_logged++;
}

static unsigned missing(uint64_t effective, struct np_ctx *ctx)
{
	logged[0] = '\0';
	nr_logged = 0;
	return np_caps_log_missing(ctx, effective);
}

/* One warning per capability missing, naming it and what is lost; none
 * with both (whatever else the set holds or lacks). */
static void test_missing(void)
{
	const uint64_t ptrace = 1ull << CAP_SYS_PTRACE, nice = 1ull << CAP_SYS_NICE;
	struct np_ctx *ctx;

	CHECK_INT(np_ctx_new(fixture("engine-2node"), &ctx), 0);
	np_ctx_set_log_fn(ctx, keep, NULL);

	CHECK_INT(missing(ptrace | nice, ctx), 0);
	CHECK_INT(nr_logged, 0);
	CHECK_INT(missing(~0ull, ctx), 0);

	CHECK_INT(missing(nice, ctx), 1);
	CHECK_INT(nr_logged, 1);
	CHECK(strncmp(logged, "no CAP_SYS_PTRACE: the numa_maps of other users' tasks cannot be "
			      "read nor their pages moved",
		      80) == 0);

	CHECK_INT(missing(ptrace, ctx), 1);
	CHECK(strncmp(logged, "no CAP_SYS_NICE: the CPU affinity of other users' tasks cannot be "
			      "set",
		      69) == 0);

	CHECK_INT(missing(0, ctx), 2);
	CHECK_INT(nr_logged, 2);
	CHECK(strstr(logged, "no CAP_SYS_PTRACE") && strstr(logged, "no CAP_SYS_NICE"));
	CHECK(strstr(logged, "numaplaced_permission_denied_total") != NULL);

	/* A fixture root is read with no privilege at all: nothing to say. */
	logged[0] = '\0';
	nr_logged = 0;
	np_caps_check(ctx);
	CHECK_INT(nr_logged, 0);
	np_ctx_free(ctx);
}

/* The set read back is the process's own: its bits are capabilities that
 * exist, and what is missing from it is what the live check says. */
static void test_effective(void)
{
	uint64_t eff = 0;
	struct np_ctx *ctx;
	unsigned expect;

	CHECK_INT(np_caps_effective(&eff), 0);
	CHECK_U64(eff >> (CAP_LAST_CAP + 1), 0);
	expect = !(eff & (1ull << CAP_SYS_PTRACE)) + !(eff & (1ull << CAP_SYS_NICE));
	CHECK_INT(np_ctx_new("/", &ctx), 0);
	np_ctx_set_log_fn(ctx, keep, NULL);
	logged[0] = '\0';
	nr_logged = 0;
	np_caps_check(ctx);
	CHECK_INT(nr_logged, expect);
	np_ctx_free(ctx);
}

/* A refusal is no vanished task, and a vanished task no refusal. */
static void test_error_kinds(void)
{
	CHECK(np_is_permission_error(-EACCES) && np_is_permission_error(EPERM));
	CHECK(!np_is_vanished_error(-EACCES) && !np_is_vanished_error(-EPERM));
	CHECK(np_is_vanished_error(-ESRCH) && np_is_vanished_error(ENOENT));
	CHECK(!np_is_permission_error(-ESRCH) && !np_is_permission_error(-ENOENT));
}

int main(void)
{
	test_missing();
	test_effective();
	test_error_kinds();
	return check_done();
}
