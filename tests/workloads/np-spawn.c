/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * np-spawn: start many short-lived processes, each holding a little memory
 * (optionally on a chosen node) for a short time, so that a scanner sees
 * tasks appear and vanish between and during its readings.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

struct spawn {
	unsigned long count;
	unsigned long parallel;
	unsigned long mib;
	unsigned long life_ms;
	int node;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: np-spawn [options]\n"
		     "  --count=N      processes to start in all (default 100)\n"
		     "  --parallel=N   at most N alive at once (default 4)\n"
		     "  --mib=N        memory each one touches, MiB (default 4)\n"
		     "  --node=N       bind that memory to node N (default: no policy)\n"
		     "  --life-ms=N    how long each one lives after touching (default 50)\n");
}

static void parse_args(int argc, char **argv, struct spawn *sp)
{
	static const struct option options[] = {
		{"count", required_argument, NULL, 'c'},
		{"parallel", required_argument, NULL, 'p'},
		{"mib", required_argument, NULL, 'm'},
		{"node", required_argument, NULL, 'n'},
		{"life-ms", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			sp->count = wl_parse_ulong("count", optarg);
			break;
		case 'p':
			sp->parallel = wl_parse_ulong("parallel", optarg);
			break;
		case 'm':
			sp->mib = wl_parse_ulong("mib", optarg);
			break;
		case 'n':
			sp->node = (int)wl_parse_ulong("node", optarg);
			if (sp->node >= WL_MAX_IDS)
				wl_die("--node: %d is too large", sp->node);
			break;
		case 'l':
			sp->life_ms = wl_parse_ulong("life-ms", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		wl_die("unexpected argument '%s'", argv[optind]);
	if (!sp->parallel)
		wl_die("--parallel: expected at least 1");
	if (sp->mib > (1UL << 20))
		wl_die("--mib: %lu is too large", sp->mib);
}

static void child_main(const struct spawn *sp)
{
	size_t bytes = sp->mib << 20;

	prctl(PR_SET_NAME, "np-spawn-child");
	if (bytes)
		wl_touch(wl_map_on_node(bytes, sp->node, WL_POLICY_BIND), bytes);
	usleep(sp->life_ms * 1000);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct spawn sp = {.count = 100, .parallel = 4, .mib = 4, .life_ms = 50, .node = -1};
	unsigned long started = 0, alive = 0, failed = 0;
	double start;
	int status;

	wl_set_prog(argv[0]);
	parse_args(argc, argv, &sp);
	start = wl_now_ms();
	while (started < sp.count || alive) {
		if (started < sp.count && alive < sp.parallel) {
			pid_t pid = fork();

			if (pid < 0)
				wl_die("fork: %s", strerror(errno));
			if (pid == 0)
				child_main(&sp);
			started++;
			alive++;
			continue;
		}
		if (wait(&status) < 0)
			wl_die("wait: %s", strerror(errno));
		alive--;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	printf("done processes %lu failed %lu ms %.0f\n", started, failed, wl_now_ms() - start);
	return failed ? 1 : 0;
}
