/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "runsample.h"
#include "task.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

/* ---- rings as the kernel writes them ---- */

#define RING 256 /* bytes: small, so that records cross its end */

struct ring {
	unsigned char buf[RING];
	uint64_t head; /* where the next record goes */
};

static void put(struct ring *r, const void *rec, size_t len)
{
	for (size_t i = 0; i < len; i++)
		r->buf[(r->head + i) % RING] = ((const unsigned char *)rec)[i];
	r->head += len;
}

static void put_sample(struct ring *r, uint32_t pid, uint32_t tid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
	} rec = {{PERF_RECORD_SAMPLE, 0, sizeof(rec)}, pid, tid};

	put(r, &rec, sizeof(rec));
}

static void put_other(struct ring *r, uint32_t type, uint16_t size)
{
	unsigned char rec[64] = {0};
	struct perf_event_header h = {type, 0, size};

	memcpy(rec, &h, sizeof(h));
	put(r, rec, size);
}

struct seen {
	int pids[4096];
	unsigned nr;
};

static void on_run(void *data, int pid)
{
	struct seen *s = data;

	if (s->nr < sizeof(s->pids) / sizeof(s->pids[0]))
		s->pids[s->nr++] = pid;
}

/* The live test's: only the two children are kept, whatever else runs. */
static pid_t watched[2];

static void on_watched_run(void *data, int pid)
{
	if (pid == watched[0] || pid == watched[1])
		on_run(data, pid);
}

static void test_parse(void)
{
	/* Not where the kernel would start (it aligns to 8), so that a pid
	 * straddles the end. */
	struct ring r = {.head = RING - 10};
	uint64_t tail = r.head;
	static struct seen s;

	put_sample(&r, 100, 101); /* its pid straddles the end */
	put_sample(&r, 0, 0);	  /* the idle task */
	put_sample(&r, 200, 200);
	put_other(&r, PERF_RECORD_THROTTLE, 24);
	put_sample(&r, 300, 302);
	CHECK_INT(np_run_records_parse(r.buf, RING, tail, r.head, on_run, &s), 0);
	CHECK_INT(s.nr, 3);
	CHECK(s.nr == 3 && s.pids[0] == 100 && s.pids[1] == 200 && s.pids[2] == 300);

	/* Lost samples: the others are still reported, and the caller told. */
	tail = r.head;
	s.nr = 0;
	put_sample(&r, 400, 400);
	put_other(&r, PERF_RECORD_LOST, 24);
	put_sample(&r, 500, 500);
	CHECK_INT(np_run_records_parse(r.buf, RING, tail, r.head, on_run, &s), -ENOBUFS);
	CHECK(s.nr == 2 && s.pids[0] == 400 && s.pids[1] == 500);

	/* Nothing new: nothing reported. */
	s.nr = 0;
	CHECK_INT(np_run_records_parse(r.buf, RING, r.head, r.head, on_run, &s), 0);
	CHECK_INT(s.nr, 0);

	/* A ring too full to have recorded a loss: the samples in it are
	 * reported, and the caller told some may be missing. */
	tail = r.head;
	s.nr = 0;
	for (unsigned i = 0; i < 14; i++) /* 224 bytes: room for a loss's 24 */
		put_sample(&r, 600 + i, 600 + i);
	CHECK_INT(np_run_records_parse(r.buf, RING, tail, r.head, on_run, &s), 0);
	put_sample(&r, 700, 700); /* 240: not */
	s.nr = 0;
	CHECK_INT(np_run_records_parse(r.buf, RING, tail, r.head, on_run, &s), -ENOBUFS);
	CHECK(s.nr == 15 && s.pids[14] == 700);
}

static void test_parse_bad(void)
{
	struct ring r = {0};
	static struct seen s;

	/* More than the ring holds, a size that is not a power of two. */
	CHECK_INT(np_run_records_parse(r.buf, RING, 0, RING + 8, on_run, &s), -EINVAL);
	CHECK_INT(np_run_records_parse(r.buf, 100, 0, 8, on_run, &s), -EINVAL);
	/* A record shorter than its header, one longer than what is there,
	 * half a header, a sample without its pid: those before are
	 * reported. */
	put_sample(&r, 7, 7);
	put_other(&r, PERF_RECORD_SAMPLE, 4);
	CHECK_INT(np_run_records_parse(r.buf, RING, 0, r.head, on_run, &s), -EINVAL);
	CHECK(s.nr == 1 && s.pids[0] == 7);
	r.head = 0;
	put_other(&r, PERF_RECORD_SAMPLE, 48);
	CHECK_INT(np_run_records_parse(r.buf, RING, 0, 24, on_run, &s), -EINVAL);
	CHECK_INT(np_run_records_parse(r.buf, RING, 0, 4, on_run, &s), -EINVAL);
	r.head = 0;
	put_other(&r, PERF_RECORD_SAMPLE, 8);
	CHECK_INT(np_run_records_parse(r.buf, RING, 0, r.head, on_run, &s), -EINVAL);
}

/* ---- the live machine ---- */

static pid_t child(bool spin)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (spin)
			for (volatile unsigned long i = 0;; i++)
				;
		pause();
		_exit(0);
	}
	return pid;
}

/* Whether @pid waits (state S in its stat): past its start, in pause(). */
static bool waiting(pid_t pid)
{
	char path[64], buf[1024];
	struct np_stat st;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	return len > 0 && np_stat_parse(buf, (size_t)len, &st) == 0 && st.state == 'S';
}

static bool has(const struct seen *s, int pid)
{
	for (unsigned i = 0; i < s->nr; i++)
		if (s->pids[i] == pid)
			return true;
	return false;
}

/* A process that spins is sampled within half a second at 100 Hz; one
 * that waits in pause() never is. */
static void test_live(void)
{
	long nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct np_run_sampler *s = NULL;
	struct np_bitmap cpus, none;
	struct np_ctx *ctx, *fixture;
	static struct seen seen;
	char root[] = "/tmp/np-runs-XXXXXX";
	pid_t busy, idle;
	int err;

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	np_bitmap_zero(&cpus);
	for (long c = 0; c < nr_cpus; c++)
		np_bitmap_set(&cpus, (unsigned)c);
	/* Under a fixture root there is nothing to sample. */
	CHECK(mkdtemp(root) != NULL);
	CHECK_INT(np_ctx_new(root, &fixture), 0);
	CHECK_INT(np_run_sampler_open(fixture, &cpus, 10, 1000, &s), -EOPNOTSUPP);
	np_ctx_free(fixture);
	rmdir(root);
	CHECK_INT(np_run_sampler_open(ctx, &cpus, 0, 1000, &s), -EINVAL);
	/* No CPU sampled: a sampler that would vouch for every task. */
	np_bitmap_zero(&none);
	CHECK_INT(np_run_sampler_open(ctx, &none, 10, 1000, &s), -ENODEV);
	err = np_run_sampler_open(ctx, &cpus, 100, 1000, &s);
	if (err == -EPERM || err == -EACCES || err == -EOPNOTSUPP) {
		printf("skipped: no CPU samples here (%s)\n", strerror(-err));
		np_ctx_free(ctx);
		return;
	}
	CHECK_INT(err, 0);
	if (err) {
		np_ctx_free(ctx);
		return;
	}
	CHECK(np_bitmap_equal(np_run_sampler_cpus(s), &cpus));

	busy = child(true);
	idle = child(false);
	watched[0] = busy;
	watched[1] = idle;
	CHECK(busy > 0 && idle > 0);
	for (int i = 0; i < 50 && !has(&seen, busy); i++) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		nanosleep(&ts, NULL);
		CHECK_INT(np_run_sampler_drain(s, on_watched_run, &seen), 0);
	}
	CHECK(has(&seen, busy));
	/* The idle one ran only between its fork and pause(): samples of it
	 * are unlikely but possible; a drain after it waits has none. */
	for (int i = 0; i < 500 && !waiting(idle); i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	CHECK(waiting(idle));
	seen.nr = 0;
	{
		struct timespec ts = {0, 300 * 1000 * 1000};

		CHECK_INT(np_run_sampler_drain(s, on_watched_run, &seen), 0);
		seen.nr = 0;
		nanosleep(&ts, NULL);
		CHECK_INT(np_run_sampler_drain(s, on_watched_run, &seen), 0);
	}
	CHECK(!has(&seen, idle));
	CHECK(has(&seen, busy));
	kill(busy, SIGKILL);
	kill(idle, SIGKILL);
	waitpid(busy, NULL, 0);
	waitpid(idle, NULL, 0);
	np_run_sampler_close(s);
	np_run_sampler_close(NULL);
	np_ctx_free(ctx);
}

int main(void)
{
	test_parse();
	test_parse_bad();
	test_live();
	return check_done();
}
