/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * idle-tasks: hold N idle tasks for the daemon to list, as processes
 * (--processes N: N children that sleep) or as threads of this process
 * (--threads N). Prints "ready" once all exist and keeps them until its
 * standard input closes or it gets SIGTERM; every child goes with it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "idle-tasks: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void on_term(int sig)
{
	(void)sig; /* the read below ends with EINTR */
}

static void *idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	unsigned long n;
	bool threads;
	char *end, c;
	pid_t *kids = NULL;

	if (argc != 3 || (strcmp(argv[1], "--processes") && strcmp(argv[1], "--threads"))) {
		fprintf(stderr, "usage: idle-tasks --processes N | --threads N\n");
		return 2;
	}
	threads = !strcmp(argv[1], "--threads");
	errno = 0;
	n = strtoul(argv[2], &end, 10);
	if (errno || end == argv[2] || *end || n > 100000) {
		fprintf(stderr, "idle-tasks: %s: not a count from 0 to 100000\n", argv[2]);
		return 2;
	}
	if (threads) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 << 10);
		for (unsigned long i = 0; i < n; i++) {
			pthread_t t;
			int err = pthread_create(&t, &attr, idle_thread, NULL);

			if (err) {
				errno = err;
				die("pthread_create");
			}
		}
	} else {
		kids = calloc(n ? n : 1, sizeof(*kids));
		if (!kids)
			die("calloc");
		for (unsigned long i = 0; i < n; i++) {
			kids[i] = fork();
			if (kids[i] < 0)
				die("fork");
			if (kids[i] == 0) {
				/* Gone with the parent, whatever ends it. */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() == 1)
					_exit(0);
				for (;;)
					pause();
			}
		}
	}
	printf("ready %lu %s\n", n, threads ? "threads" : "processes");
	fflush(stdout);
	{
		struct sigaction sa = {.sa_handler = on_term}; /* no SA_RESTART */

		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
	}
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	for (unsigned long i = 0; kids && i < n; i++)
		kill(kids[i], SIGKILL);
	for (unsigned long i = 0; kids && i < n; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	return 0;
}
