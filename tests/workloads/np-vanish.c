/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * np-vanish: hold memory on a node, keep touching it, and exit at once on
 * SIGUSR1 (or after --after-ms), so a test can make a task disappear while
 * another process is reading or migrating it. The exit happens inside the
 * signal handler, in the middle of whatever the task was doing.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

static void on_usr1(int sig)
{
	static const char msg[] = "vanishing\n";

	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(0);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: np-vanish [options]\n"
		     "  --mib=N        memory to hold, MiB (default 64)\n"
		     "  --node=N       bind it to node N (default: no policy)\n"
		     "  --after-ms=N   exit by itself after N ms (default: only on SIGUSR1)\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"mib", required_argument, NULL, 'm'},
		{"node", required_argument, NULL, 'n'},
		{"after-ms", required_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct sigaction sa = {.sa_handler = on_usr1};
	unsigned long mib = 64, after_ms = 0;
	int node = -1, opt;
	size_t bytes;
	char *mem;
	double deadline;

	wl_set_prog(argv[0]);
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'm':
			mib = wl_parse_ulong("mib", optarg);
			break;
		case 'n':
			node = (int)wl_parse_ulong("node", optarg);
			if (node >= WL_MAX_IDS)
				wl_die("--node: %d is too large", node);
			break;
		case 'a':
			after_ms = wl_parse_ulong("after-ms", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		wl_die("unexpected argument '%s'", argv[optind]);
	if (mib < 1 || mib > (1UL << 30))
		wl_die("--mib: expected at least 1, not %lu", mib);

	sigaction(SIGUSR1, &sa, NULL);
	bytes = mib << 20;
	mem = wl_map_on_node(bytes, node, WL_POLICY_BIND);
	wl_touch(mem, bytes);
	printf("ready pid %d mib %lu\n", (int)getpid(), mib);
	fflush(stdout);
	deadline = after_ms ? wl_now_ms() + after_ms : 0;
	while (!deadline || wl_now_ms() < deadline)
		wl_touch(mem, bytes);
	printf("vanishing after %lu ms\n", after_ms);
	return 0;
}
