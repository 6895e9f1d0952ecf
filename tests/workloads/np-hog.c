/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * np-hog: hold memory placed on chosen nodes and keep using it.
 *
 * The memory is split into one slice per thread; slice i is placed on the
 * i-th node of --node (cycling), or with --split in equal parts on every
 * node of --node, and touched by thread i, which runs on the i-th CPU of
 * --cpus (cycling) when that is given. With --policy=bind-once the policy
 * only places the first touch: it is dropped once the pages are in, and
 * they are free to move. Once every page is in,
 * the program prints "ready" and then touches every page again in passes,
 * printing each pass's duration: the slowest pass shows how long the task
 * stalled while somebody moved its pages. With --shm, thread 0 also writes
 * a shared mapping of a file (say in /dev/shm) at every pass: two hogs given
 * the same file write the same memory. SIGTERM or SIGINT ends it with a
 * summary line. SIGUSR1 asks each thread, at the end of its next pass, to
 * say how much of its own slice is on the node of the CPU it runs on
 * ("local thread I tid T node N pages P here H ms MS", MS the look's
 * time): the locality of its memory as that thread sees it, which no file
 * of /proc tells. Neither the look nor the child below counts in the
 * asked thread's pass (a sibling sharing its CPU may still be slowed by
 * it). SIGUSR2
 * asks thread 0, at the end of its next pass, to start "sleep 600" (which
 * inherits that thread's CPU mask, as any process a thread starts) and
 * say so ("child thread 0 tid T pid P cpus LIST", LIST the thread's mask
 * then).
 * The summary line gives its passes and its slowest pass, with the
 * second that pass began at on the monotonic clock.
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

struct hog_thread {
	pthread_t thread;
	int index;
	int node;
	int cpu;
	char *mem;
	size_t bytes;
	double slowest_ms;
	double slowest_at_ms; /* when it started (CLOCK_MONOTONIC) */
	unsigned long passes;
	unsigned reported; /* SIGUSR1s answered */
	unsigned children; /* SIGUSR2s answered (thread 0) */
};

struct hog {
	unsigned long mib;
	int nodes[WL_MAX_IDS];
	size_t node_count;
	int cpus[WL_MAX_IDS];
	size_t cpu_count;
	enum wl_policy policy;
	bool split;
	unsigned long threads;
	unsigned long pause_ms;
	unsigned long max_passes;
	bool quiet;
	const char *shm_path; /* --shm=PATH:MIB */
	unsigned long shm_mib;
	char *shm;
	pthread_barrier_t ready;
};

static struct hog hog = {
	.mib = 64,
	.policy = WL_POLICY_BIND,
	.threads = 1,
	.pause_ms = 100,
};

static atomic_bool stopping;
static atomic_uint locality_asked; /* SIGUSR1s so far */
static atomic_uint child_asked;	   /* SIGUSR2s so far */
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_stop(int sig)
{
	atomic_store(&stopping, true);
}

static void on_usr1(int sig)
{
	atomic_fetch_add(&locality_asked, 1);
}

static void on_usr2(int sig)
{
	atomic_fetch_add(&child_asked, 1);
}

extern char **environ;

/* Start "sleep 600" from this thread and say so, with the thread's mask
 * the child inherits. */
static void start_child(const struct hog_thread *t)
{
	char *argv[] = {"sleep", "600", NULL}, list[4096];
	size_t len = 0;
	cpu_set_t set;
	pid_t pid;
	int err;

	if (sched_getaffinity(0, sizeof(set), &set))
		wl_die("sched_getaffinity: %s", strerror(errno));
	list[0] = '\0';
	for (int cpu = 0; cpu < CPU_SETSIZE && len + 16 < sizeof(list); cpu++)
		if (CPU_ISSET(cpu, &set))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", len ? "," : "",
						cpu);
	err = posix_spawnp(&pid, "sleep", NULL, NULL, argv, environ);
	if (err)
		wl_die("starting sleep: %s", strerror(err));
	pthread_mutex_lock(&print_lock);
	printf("child thread %d tid %ld pid %d cpus %s\n", t->index, (long)syscall(SYS_gettid),
	       (int)pid, list);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

/*
 * Print where the pages of @t's slice are against the node it runs on, and
 * how long the look took (a query of every page: hundreds of ms for a big
 * slice in an emulated guest).
 */
static void report_locality(const struct hog_thread *t)
{
	double start = wl_now_ms();
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = t->bytes / page, here = 0, present = 0;
	void **pages = malloc(n * sizeof(*pages));
	int *status = malloc(n * sizeof(*status));
	int cpu = sched_getcpu(), node = cpu >= 0 ? numa_node_of_cpu(cpu) : -1;

	if (!pages || !status)
		wl_die("out of memory");
	for (size_t i = 0; i < n; i++)
		pages[i] = t->mem + i * page;
	if (move_pages(0, n, pages, NULL, status, 0) < 0)
		wl_die("move_pages: %s", strerror(errno));
	for (size_t i = 0; i < n; i++) {
		present += status[i] >= 0;
		here += status[i] >= 0 && status[i] == node;
	}
	pthread_mutex_lock(&print_lock);
	printf("local thread %d tid %ld node %d pages %zu here %zu ms %.1f\n", t->index,
	       (long)syscall(SYS_gettid), node, present, here, wl_now_ms() - start);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	free(pages);
	free(status);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: np-hog [options]\n"
		"  --mib=N          memory to hold, MiB (default 64)\n"
		"  --node=LIST      nodes for the threads' slices, e.g. 1 or 0,1 (default: none)\n"
		"  --policy=P       bind, preferred, local or bind-once (bind for the first\n"
		"                   touch, then no policy; default bind)\n"
		"  --split          each thread's slice in equal parts on all the --node nodes\n"
		"  --threads=N      threads, each with its own slice (default 1)\n"
		"  --cpus=LIST      CPU for each thread, cycling (default: not pinned)\n"
		"  --pause-ms=N     pause between passes (default 100)\n"
		"  --passes=N       stop after N passes (default: until SIGTERM)\n"
		"  --quiet          print only ready and the summary, not every pass\n"
		"  --shm=PATH:MIB   thread 0 also writes MIB of a shared mapping of PATH\n");
}

static void parse_args(int argc, char **argv)
{
	static const struct option options[] = {
		{"mib", required_argument, NULL, 'm'},
		{"node", required_argument, NULL, 'n'},
		{"policy", required_argument, NULL, 'p'},
		{"split", no_argument, NULL, 's'},
		{"threads", required_argument, NULL, 't'},
		{"cpus", required_argument, NULL, 'c'},
		{"pause-ms", required_argument, NULL, 'w'},
		{"passes", required_argument, NULL, 'P'},
		{"quiet", no_argument, NULL, 'q'},
		{"shm", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'm':
			hog.mib = wl_parse_ulong("mib", optarg);
			break;
		case 'n':
			hog.node_count = wl_parse_list("node", optarg, hog.nodes);
			break;
		case 'p':
			hog.policy = wl_parse_policy(optarg);
			break;
		case 's':
			hog.split = true;
			break;
		case 't':
			hog.threads = wl_parse_ulong("threads", optarg);
			break;
		case 'c':
			hog.cpu_count = wl_parse_list("cpus", optarg, hog.cpus);
			break;
		case 'w':
			hog.pause_ms = wl_parse_ulong("pause-ms", optarg);
			break;
		case 'P':
			hog.max_passes = wl_parse_ulong("passes", optarg);
			break;
		case 'q':
			hog.quiet = true;
			break;
		case 'S': {
			char *colon = strrchr(optarg, ':');

			if (!colon || colon == optarg)
				wl_die("--shm: expected PATH:MIB, not '%s'", optarg);
			*colon = '\0';
			hog.shm_path = optarg;
			hog.shm_mib = wl_parse_ulong("shm", colon + 1);
			if (hog.shm_mib < 1)
				wl_die("--shm: expected at least 1 MiB");
			break;
		}
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
	if (hog.threads < 1 || hog.threads > WL_MAX_IDS)
		wl_die("--threads: expected 1 to %d, not %lu", WL_MAX_IDS, hog.threads);
	if (hog.mib < 1 || hog.mib > (1UL << 30))
		wl_die("--mib: expected at least 1, not %lu", hog.mib);
}

static void *hog_thread_main(void *arg)
{
	struct hog_thread *t = arg;

	if (t->cpu >= 0)
		wl_pin_to_cpu(t->cpu);
	wl_touch(t->mem, t->bytes);
	if (t->index == 0 && hog.shm)
		wl_touch(hog.shm, hog.shm_mib << 20);
	if (hog.policy == WL_POLICY_BIND_ONCE)
		wl_drop_policy(t->mem, t->bytes);
	pthread_barrier_wait(&hog.ready);

	while (!atomic_load(&stopping) && (!hog.max_passes || t->passes < hog.max_passes)) {
		unsigned asked = atomic_load(&locality_asked);
		double start, took;

		if (asked != t->reported) {
			t->reported = asked;
			report_locality(t);
		}
		if (t->index == 0 && atomic_load(&child_asked) != t->children) {
			t->children = atomic_load(&child_asked);
			start_child(t);
		}
		/* A pass times the touches alone: what the thread was asked to
		 * do above is the observer's, not a stall of the task. */
		start = wl_now_ms();
		wl_touch(t->mem, t->bytes);
		if (t->index == 0 && hog.shm)
			wl_touch(hog.shm, hog.shm_mib << 20);
		took = wl_now_ms() - start;
		t->passes++;
		if (took > t->slowest_ms) {
			t->slowest_ms = took;
			t->slowest_at_ms = start;
		}
		if (!hog.quiet) {
			pthread_mutex_lock(&print_lock);
			printf("pass %lu thread %d ms %.1f\n", t->passes, t->index, took);
			fflush(stdout);
			pthread_mutex_unlock(&print_lock);
		}
		if (hog.pause_ms)
			usleep(hog.pause_ms * 1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct hog_thread *threads;
	size_t page = sysconf(_SC_PAGESIZE);
	size_t total, slice;
	struct sigaction sa = {.sa_handler = on_stop};
	double slowest = 0, slowest_at = 0;
	unsigned long passes = 0;
	int err;

	wl_set_prog(argv[0]);
	parse_args(argc, argv);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);

	total = hog.mib << 20;
	slice = (total / hog.threads + page - 1) / page * page;
	threads = calloc(hog.threads, sizeof(*threads));
	if (!threads)
		wl_die("out of memory");
	if (hog.shm_path) {
		int fd = open(hog.shm_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		size_t bytes = hog.shm_mib << 20;

		if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0)
			wl_die("--shm %s: %s", hog.shm_path, strerror(errno));
		hog.shm = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (hog.shm == MAP_FAILED)
			wl_die("--shm %s: mmap: %s", hog.shm_path, strerror(errno));
		close(fd);
	}
	pthread_barrier_init(&hog.ready, NULL, hog.threads + 1);
	for (unsigned long i = 0; i < hog.threads; i++) {
		struct hog_thread *t = &threads[i];

		t->index = (int)i;
		t->node = hog.node_count ? hog.nodes[i % hog.node_count] : -1;
		t->cpu = hog.cpu_count ? hog.cpus[i % hog.cpu_count] : -1;
		t->bytes = slice;
		if (hog.split && hog.node_count) {
			size_t part = (slice / hog.node_count + page - 1) / page * page;

			t->mem = wl_map_on_node(slice, -1, hog.policy);
			for (size_t k = 0; k < hog.node_count && k * part < slice; k++) {
				size_t len = slice - k * part < part ? slice - k * part : part;

				wl_place_on_node(t->mem + k * part, len, hog.nodes[k], hog.policy);
			}
		} else {
			t->mem = wl_map_on_node(slice, t->node, hog.policy);
		}
		err = pthread_create(&t->thread, NULL, hog_thread_main, t);
		if (err)
			wl_die("starting thread %lu: %s", i, strerror(err));
	}
	pthread_barrier_wait(&hog.ready);
	printf("ready pid %d mib %lu threads %lu\n", (int)getpid(), hog.mib, hog.threads);
	fflush(stdout);

	for (unsigned long i = 0; i < hog.threads; i++) {
		pthread_join(threads[i].thread, NULL);
		passes += threads[i].passes;
		if (threads[i].slowest_ms > slowest) {
			slowest = threads[i].slowest_ms;
			slowest_at = threads[i].slowest_at_ms;
		}
	}
	/* When it came, in seconds of the monotonic clock (the uptime, on a
	 * machine that never slept). */
	printf("done passes %lu slowest_ms %.1f at_s %.2f\n", passes, slowest, slowest_at / 1e3);
	free(threads);
	return 0;
}
