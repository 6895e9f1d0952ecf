/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "fake-events.h"
#include "procevents.h"
#include "task.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

struct seen {
	int tgids[16];
	bool exited[16];
	unsigned long long time_ns[16];
	unsigned nr;
	bool ack;
	unsigned seq, ack_no, err;
};

static void record(void *data, const struct np_proc_event *ev)
{
	struct seen *s = data;

	if (ev->kind == NP_PROC_ACK) {
		s->ack = true;
		s->seq = ev->seq;
		s->ack_no = ev->ack;
		s->err = ev->err;
	} else if (s->nr < 16) {
		s->exited[s->nr] = ev->exited;
		s->time_ns[s->nr] = ev->time_ns;
		s->tgids[s->nr++] = ev->tgid;
	}
}

/* What a process changes and what does not: forks of processes, execs,
 * exits and renames of main threads count; threads and other kinds do not. */
static void test_parse_kinds(void)
{
	unsigned char buf[4096];
	size_t len = 0;
	struct proc_event pe;
	struct seen s = {0};

	pe = fork_event(1, 100, 100); /* a process */
	pe.timestamp_ns = 123456789012ull;
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	pe = fork_event(100, 101, 100); /* a thread of it */
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	pe = pid_event(PROC_EVENT_EXEC, 101, 100); /* exec from a thread */
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	pe = pid_event(PROC_EVENT_COMM, 100, 100);
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	pe = pid_event(PROC_EVENT_COMM, 102, 100); /* a thread renamed */
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	pe = pid_event(PROC_EVENT_UID, 100, 100);
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	pe = pid_event(PROC_EVENT_EXIT, 101, 100); /* a thread's exit */
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	pe = pid_event(PROC_EVENT_EXIT, 100, 100);
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	/* An older kernel's shorter exit event (no parent fields). */
	pe = pid_event(PROC_EVENT_EXIT, 200, 200);
	put_event(buf, &len, &pe, offsetof(struct proc_event, event_data) + 16, 0, 0);
	CHECK_INT(np_proc_events_parse(buf, len, record, &s), 0);
	CHECK_INT(s.nr, 5);
	CHECK(s.nr == 5 && s.tgids[0] == 100 && s.tgids[1] == 100 && s.tgids[2] == 100 &&
	      s.tgids[3] == 100 && s.tgids[4] == 200);
	/* Only the main thread's exits say so. */
	CHECK(!s.exited[0] && !s.exited[1] && !s.exited[2] && s.exited[3] && s.exited[4]);
	/* The kernel's stamp comes with each: a fork's is the birth. */
	CHECK(s.time_ns[0] == 123456789012ull && s.time_ns[1] == 0);
	CHECK(!s.ack);

	/* The answer to a subscription, refused. */
	len = 0;
	memset(&s, 0, sizeof(s));
	pe = (struct proc_event){.what = PROC_EVENT_NONE};
	pe.event_data.ack.err = EPERM;
	put_event(buf, &len, &pe, sizeof(pe), 77, 1);
	CHECK_INT(np_proc_events_parse(buf, len, record, &s), 0);
	CHECK(s.ack && s.seq == 77 && s.ack_no == 1 && s.err == EPERM && s.nr == 0);
}

/* Odd datagrams: every length checked, nothing read past the end, lost
 * messages said. */
static void test_parse_bad(void)
{
	unsigned char buf[4096], *copy;
	size_t len = 0;
	struct proc_event pe = fork_event(1, 300, 300);
	struct nlmsghdr nlh;
	struct seen s = {0};

	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	/* Every cut of a good message but the whole is an error or nothing;
	 * under ASan a read past the end is caught (the copy is exact). */
	for (size_t cut = 0; cut < len; cut++) {
		int err;

		copy = malloc(cut ? cut : 1);
		memcpy(copy, buf, cut);
		memset(&s, 0, sizeof(s));
		err = np_proc_events_parse(copy, cut, record, &s);
		CHECK(err == -EINVAL || (err == 0 && cut < NLMSG_HDRLEN));
		CHECK_INT(s.nr, 0);
		free(copy);
	}
	/* An event too short for its fields. */
	len = 0;
	put_event(buf, &len, &pe, offsetof(struct proc_event, event_data) + 8, 0, 0);
	CHECK_INT(np_proc_events_parse(buf, len, record, &s), -EINVAL);
	/* A connector length past the message. */
	len = 0;
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	buf[NLMSG_HDRLEN + offsetof(struct cn_msg, len)] += 8;
	CHECK_INT(np_proc_events_parse(buf, len, record, &s), -EINVAL);
	/* Messages were lost. */
	nlh = (struct nlmsghdr){.nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_OVERRUN};
	memcpy(buf, &nlh, sizeof(nlh));
	CHECK_INT(np_proc_events_parse(buf, NLMSG_HDRLEN, record, &s), -ENOBUFS);
	/* Another connector's message is passed over; the one after counts,
	 * also at an odd address. */
	len = 1;
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	buf[1 + NLMSG_HDRLEN] = CN_IDX_PROC + 1;
	pe = fork_event(1, 301, 301);
	put_event(buf, &len, &pe, sizeof(pe), 0, 0);
	memset(&s, 0, sizeof(s));
	CHECK_INT(np_proc_events_parse(buf + 1, len - 1, record, &s), 0);
	CHECK(s.nr == 1 && s.tgids[0] == 301);
	/* Arbitrary bytes never crash it. */
	srand(7);
	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(rand() % 200);

		copy = malloc(n ? n : 1);
		for (size_t i = 0; i < n; i++)
			copy[i] = (unsigned char)rand();
		if (n >= 4 && round % 2) { /* a plausible length, for depth */
			unsigned l = (unsigned)(rand() % (int)(n + 1));

			memcpy(copy, &l, sizeof(l));
		}
		(void)np_proc_events_parse(copy, n, record, &s);
		free(copy);
	}
}

/* ---- the running machine ---- */

static const struct np_task *find(const struct np_task_list *list, int pid)
{
	for (unsigned i = 0; i < list->nr; i++)
		if (list->tasks[i].pid == pid)
			return &list->tasks[i];
	return NULL;
}

static bool has_pid(const struct np_task_list *list, int pid)
{
	return find(list, pid) != NULL;
}

static enum np_task_keep keep_all(void *data, int pid, uint64_t start_ticks)
{
	return NP_TASK_KEEP;
}

/* Keeps every record but pid *data's, which is read. */
static enum np_task_keep keep_but(void *data, int pid, uint64_t start_ticks)
{
	return pid == *(const int *)data ? NP_TASK_READ : NP_TASK_KEEP;
}

static pid_t pausing_child(void)
{
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	return child;
}

/* With the connector, a scan knows of a process forked since the last one
 * and of one gone, without listing /proc. */
static void test_live_source(void)
{
	struct np_ctx *ctx;
	struct np_proc_events *ev;
	struct np_task_source *src;
	struct np_task_list list = {0};
	const struct np_task *t;
	struct np_task first;
	pid_t child;
	int err, reread;

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	err = np_proc_events_open(ctx, &ev);
	if (err) {
		printf("skipped: no process connector here (%s)\n", strerror(-err));
		np_ctx_free(ctx);
		return;
	}
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	np_task_source_set_keep(src, keep_all, NULL);
	np_task_source_use_events(src, ev, 3600 * 1000);
	CHECK(np_task_source_events_fd(src) >= 0);
	CHECK_INT(np_task_source_scan(src, &list), 0); /* a listing */
	CHECK(has_pid(&list, getpid()) && list.nr_kept == 0 && list.listed_proc);
	/* What a listing names is a process: one read of its stat. */
	CHECK(find(&list, getpid()) && !find(&list, getpid())->stat_identified);

	child = pausing_child();
	CHECK(child > 0);
	/* The fork's event is there once fork returns; no listing needed.
	 * The child is read through libproc2 here, to compare its figures
	 * with our reader's below. */
	CHECK_INT(np_task_source_take_events(src), 0);
	np_task_source_read_named_by_libproc2(src, true);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	np_task_source_read_named_by_libproc2(src, false);
	/* Read: the child (new, so with its thread group checked); kept:
	 * this process (nothing changed). */
	t = find(&list, child);
	CHECK(t && !t->stat_kept && t->stat_identified);
	CHECK(t && t->ppid == getpid());
	CHECK(find(&list, getpid()) && find(&list, getpid())->stat_kept);
	CHECK(!list.listed_proc);
	/* Read again as the same process, with our parser: the same
	 * figures (the child may have been reaching pause() at the first
	 * read: its state, pages and CPU time may have moved on since). */
	if (t) {
		first = *t;
		reread = child;
		np_task_source_set_keep(src, keep_but, &reread);
		CHECK_INT(np_task_source_scan(src, &list), 0);
		t = find(&list, child);
		CHECK(t && !t->stat_kept && !t->stat_identified);
		CHECK(t && strcmp(t->comm, first.comm) == 0);
		CHECK(t && t->start_ticks == first.start_ticks && t->ppid == getpid());
		CHECK(t && t->child_cpu_ticks == first.child_cpu_ticks);
		CHECK(t && t->nr_threads == first.nr_threads);
		CHECK(t && (t->state == 'S' || t->state == 'R') && t->flags == first.flags);
		CHECK(t && t->rss_bytes >= first.rss_bytes && t->cpu_ticks >= first.cpu_ticks);
		np_task_source_set_keep(src, keep_all, NULL);
	}
	/* Named by an event, then by none: kept at the next scan, though no
	 * listing has given it an inode. */
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(find(&list, child) && find(&list, child)->stat_kept);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(!has_pid(&list, child) && has_pid(&list, getpid()));
	printf("live: %u processes, %u kept\n", list.nr, list.nr_kept);

	np_task_list_clear(&list);
	np_task_source_free(src); /* closes the connector */
	np_ctx_free(ctx);
}

/* With a first-read delay, a process the connector names is not listed
 * (nor read) until it is that old (its fork's stamp, or the last scan if
 * that is later); one that exits before is never listed; a listing lists
 * young processes all the same. */
static void test_live_first_read_delay(void)
{
	struct np_ctx *ctx;
	struct np_proc_events *ev;
	struct np_task_source *src;
	struct np_task_list list = {0};
	uint64_t listed_ms;
	pid_t brief, lasting;

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	if (np_proc_events_open(ctx, &ev)) {
		printf("skipped: no process connector here\n");
		np_ctx_free(ctx);
		return;
	}
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	np_task_source_set_keep(src, keep_all, NULL);
	np_task_source_use_events(src, ev, 3600 * 1000);
	np_task_source_set_first_read_delay(src, 400);
	CHECK_INT(np_task_source_scan(src, &list), 0); /* a listing */
	listed_ms = list.uptime_ms;

	brief = pausing_child();
	lasting = pausing_child();
	CHECK(brief > 0 && lasting > 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(!has_pid(&list, brief) && !has_pid(&list, lasting));
	kill(brief, SIGKILL);
	waitpid(brief, NULL, 0);
	usleep(100 * 1000);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	/* A loaded machine may have slept past the delay. */
	CHECK(!has_pid(&list, lasting) || list.uptime_ms - listed_ms >= 400);
	CHECK(!has_pid(&list, brief));
	usleep(400 * 1000);
	/* Past the delay: the one alive is read, the one gone never was. */
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(has_pid(&list, lasting) && !has_pid(&list, brief));

	/* A listing does not wait. */
	brief = pausing_child();
	CHECK(brief > 0);
	np_task_source_set_resync(src, 3600 * 1000);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(list.listed_proc && has_pid(&list, brief));
	kill(brief, SIGKILL);
	waitpid(brief, NULL, 0);
	kill(lasting, SIGKILL);
	waitpid(lasting, NULL, 0);

	np_task_list_clear(&list);
	np_task_source_free(src);
	np_ctx_free(ctx);
}

/* The pids of @list, which a later scan may miss: the machine's other
 * processes exit and are reaped while a test runs (meson runs tests side
 * by side). */
static int *listed_pids(const struct np_task_list *list, unsigned *nr)
{
	int *pids = calloc(list->nr + 1, sizeof(*pids));

	*nr = 0;
	for (unsigned i = 0; pids && i < list->nr; i++)
		pids[(*nr)++] = list->tasks[i].pid;
	CHECK(pids != NULL);
	return pids;
}

/* How many of @pids @list no longer holds. */
static unsigned gone_since(const struct np_task_list *list, const int *pids, unsigned nr)
{
	unsigned gone = 0;

	for (unsigned i = 0; i < nr; i++)
		gone += !has_pid(list, pids[i]);
	return gone;
}

struct named_thread {
	int tid;
	int stop; /* a pipe's read end: the thread ends once the write end is closed */
};

static int named_thread(void *arg)
{
	struct named_thread *t = arg;
	char c;

	__atomic_store_n(&t->tid, gettid(), __ATOMIC_RELEASE);
	return read(t->stop, &c, 1) < 0;
}

/* On the running machine, a pid that only an event named is read as a
 * process when its status says it leads its thread group: a thread's id
 * opens under /proc too (only readdir leaves threads out), so an event
 * whose pid a thread took since would otherwise be read as a process of
 * its own, the thread's figures under it. */
static void test_live_named_thread(void)
{
	struct named_thread t = {0};
	struct np_ctx *ctx;
	struct np_proc_events *ev;
	struct np_task_source *src;
	struct np_task_list list = {0};
	struct proc_event pe;
	const struct np_task *c;
	thrd_t thread;
	int sv[2], stop[2], *listed;
	unsigned nr_listed;
	pid_t child, fresh;

	CHECK_INT(pipe(stop), 0);
	t.stop = stop[0];
	if (thrd_create(&thread, named_thread, &t) != thrd_success) {
		printf("skipped: no thread\n");
		close(stop[0]);
		close(stop[1]);
		return;
	}
	while (!__atomic_load_n(&t.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	child = pausing_child();
	CHECK(child > 0);
	CHECK_INT(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_INT(np_ctx_new("/", &ctx), 0);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	np_task_source_set_keep(src, keep_all, NULL);
	CHECK_INT(np_proc_events_adopt(sv[0], &ev), 0);
	np_task_source_use_events(src, ev, 3600 * 1000);
	CHECK_INT(np_task_source_scan(src, &list), 0); /* a listing */
	CHECK(list.listed_proc && !has_pid(&list, t.tid) && has_pid(&list, child));
	listed = listed_pids(&list, &nr_listed);

	/* The thread's id named as a new process's (a fork event), a child
	 * forked since the listing as the new process it is, and the listed
	 * child as changed (an exec event). */
	fresh = pausing_child();
	CHECK(fresh > 0);
	pe = fork_event(getpid(), t.tid, t.tid);
	CHECK(send_event(sv[1], &pe));
	pe = fork_event(getpid(), fresh, fresh);
	CHECK(send_event(sv[1], &pe));
	pe = pid_event(PROC_EVENT_EXEC, child, child);
	CHECK(send_event(sv[1], &pe));
	np_task_source_set_keep(src, keep_but, &child);
	CHECK_INT(np_task_source_take_events(src), 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(!list.listed_proc);
	/* The thread: its status names this process: left out, as gone; so
	 * is any other process the listing held that has gone since and was
	 * read again (a zombie, one listed under inode 1): a kept record stays
	 * in the list, so the listed pids missing now are those. */
	CHECK(!has_pid(&list, t.tid));
	CHECK_INT(list.nr_vanished, 1 + gone_since(&list, listed, nr_listed));
	free(listed);
	/* The child: the same process as listed (its start time), read
	 * with its stat alone. */
	c = find(&list, child);
	CHECK(c && !c->stat_kept && !c->stat_identified && c->ppid == getpid());
	/* The new child: read with its status, which names it its own
	 * leader. */
	c = find(&list, fresh);
	CHECK(c && !c->stat_kept && c->stat_identified && c->ppid == getpid());
	CHECK(has_pid(&list, getpid()));

	kill(fresh, SIGKILL);
	waitpid(fresh, NULL, 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(stop[1]);
	thrd_join(thread, NULL);
	close(stop[0]);
	close(sv[1]);
	np_task_list_clear(&list);
	np_task_source_free(src);
	np_ctx_free(ctx);
}

/* ---- what a scan owes, with events from a socket the test writes ---- */

/* proc/PID/stat in state @state, started at tick 100. */
static int put_stat(const char *proc, int pid, char state)
{
	char dir[512], line[256];

	snprintf(dir, sizeof(dir), "%s/%d", proc, pid);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	snprintf(line, sizeof(line),
		 "%d (w) %c 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100"
		 " 1000 10 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 pid, state);
	return put_file(dir, "stat", line);
}

/* The uptime the next scan reads: @ms after 100 s. */
static void set_uptime(const char *proc, uint64_t ms)
{
	char text[64];

	snprintf(text, sizeof(text), "%llu.%03llu 0\n", (unsigned long long)(100 + ms / 1000),
		 (unsigned long long)(ms % 1000));
	CHECK_INT(put_file(proc, "uptime", text), 0);
}

static unsigned long long monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* After a scan at uptime 3600 that listed 10, 20 and 30. Ends with a
 * scan at 10400 that lists 40 and 42. */
static void test_born_after_scan(const char *proc, struct np_task_source *src,
				 struct np_task_list *list, int fd)
{
	struct np_scan_owed owed = {0};
	struct proc_event pe;
	unsigned long long early;

	/* Born at least 200 ms after the scan, by the clock the kernel
	 * stamps with. */
	usleep(200 * 1000);
	CHECK_INT(put_stat(proc, 40, 'S'), 0);
	pe = fork_event(1, 40, 40);
	pe.timestamp_ns = monotonic_ns();
	CHECK(send_event(fd, &pe));
	/* 1,100 ms after the scan it is less than 1,000 ms old. */
	CHECK(!np_task_source_owes_scan(src, 1100, NULL));
	set_uptime(proc, 4700);
	CHECK_INT(np_task_source_scan(src, list), 0);
	CHECK(!has_pid(list, 40));
	/* Its own age is what counts: owed once it is old enough. */
	CHECK(np_task_source_owes_scan(src, 4000, &owed));
	CHECK(owed.pid == 40 && owed.why && strcmp(owed.why, "a new process's first read") == 0);
	set_uptime(proc, 8000);
	CHECK_INT(np_task_source_scan(src, list), 0);
	CHECK(has_pid(list, 40));

	/* A stamp from the future is taken as now: the process is read
	 * once it could be the delay old, not never. */
	CHECK_INT(put_stat(proc, 41, 'S'), 0);
	pe = fork_event(1, 41, 41);
	pe.timestamp_ns = monotonic_ns() + 3600ull * 1000000000ull;
	CHECK(send_event(fd, &pe));
	CHECK(np_task_source_owes_scan(src, 30000, &owed) && owed.pid == 41);
	pe = pid_event(PROC_EVENT_EXIT, 41, 41);
	CHECK(send_event(fd, &pe));
	CHECK(!np_task_source_owes_scan(src, 30000, NULL));
	set_uptime(proc, 9000);
	CHECK_INT(np_task_source_scan(src, list), 0);
	CHECK(has_pid(list, 40) && !has_pid(list, 41));
	/* Two events name a new one, the later-stamped first: its wait runs
	 * from the earlier. */
	early = monotonic_ns();
	usleep(600 * 1000);
	CHECK_INT(put_stat(proc, 42, 'S'), 0);
	pe = pid_event(PROC_EVENT_COMM, 42, 42);
	pe.timestamp_ns = monotonic_ns();
	CHECK(send_event(fd, &pe));
	pe = fork_event(1, 42, 42);
	pe.timestamp_ns = early;
	CHECK(send_event(fd, &pe));
	/* 1,400 ms after the scan: 1,000 ms after the later stamp at most,
	 * short of it by up to 400 ms of slowness before the earlier. */
	set_uptime(proc, 10400);
	CHECK_INT(np_task_source_scan(src, list), 0);
	CHECK(has_pid(list, 42));
}

/* A scan is owed when a listing is due, when a listed process was named,
 * when a new one's wait for its first read ends, and while a zombie is
 * listed; not for a new process that exits before its first read, which
 * is then never listed, though its stat is there to read. */
static void test_owes_scan(void)
{
	char root[] = "/tmp/np-events-XXXXXX", proc[64], cmd[96];
	struct np_ctx *ctx;
	struct np_proc_events *ev;
	struct np_task_source *src;
	struct np_task_list list = {0};
	struct proc_event pe;
	struct np_scan_owed owed = {0};
	int sv[2];

	CHECK(mkdtemp(root) != NULL);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	CHECK_INT(mkdir(proc, 0755), 0);
	CHECK_INT(put_stat(proc, 10, 'S') | put_stat(proc, 20, 'S'), 0);
	set_uptime(proc, 0);
	CHECK_INT(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_INT(np_ctx_new(root, &ctx), 0);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	np_task_source_set_keep(src, keep_all, NULL);
	CHECK_INT(np_proc_events_adopt(sv[0], &ev), 0);
	/* Before the first scan, and without events, a scan is owed. */
	CHECK(np_task_source_owes_scan(src, 0, NULL));
	np_task_source_use_events(src, ev, 60000);
	np_task_source_set_first_read_delay(src, 1000);
	CHECK(np_task_source_owes_scan(src, 0, NULL));
	CHECK_INT(np_task_source_scan(src, &list), 0); /* the first: a listing */
	CHECK(list.listed_proc && list.nr == 2);
	CHECK(!np_task_source_owes_scan(src, 500, NULL));
	CHECK(np_task_source_owes_scan(src, 60000, NULL)); /* the listing's resync */

	/* A listed process named: read at the next scan. */
	pe = pid_event(PROC_EVENT_EXEC, 20, 20);
	CHECK(send_event(sv[1], &pe));
	CHECK(np_task_source_owes_scan(src, 500, &owed));
	CHECK(owed.pid == 20 && owed.why && strcmp(owed.why, "a process changed") == 0);
	set_uptime(proc, 500);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(!list.listed_proc && list.nr == 2 && list.nr_kept == 1);
	CHECK(!np_task_source_owes_scan(src, 0, NULL));

	/* A new one waits for its first read, then is owed one. */
	CHECK_INT(put_stat(proc, 30, 'S'), 0);
	pe = fork_event(1, 30, 30);
	CHECK(send_event(sv[1], &pe));
	CHECK(!np_task_source_owes_scan(src, 999, NULL));
	CHECK(np_task_source_owes_scan(src, 1000, NULL));
	/* It exits first: nothing is owed, and no scan reads it. */
	pe = pid_event(PROC_EVENT_EXIT, 30, 30);
	CHECK(send_event(sv[1], &pe));
	CHECK(!np_task_source_owes_scan(src, 1000, NULL));
	set_uptime(proc, 1500);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(!list.listed_proc && list.nr == 2 && !has_pid(&list, 30));

	/* The same from the wait of a scan that heard of it. */
	pe = fork_event(1, 30, 30);
	CHECK(send_event(sv[1], &pe));
	set_uptime(proc, 1600);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(!has_pid(&list, 30));
	CHECK(!np_task_source_owes_scan(src, 100, NULL));
	CHECK(np_task_source_owes_scan(src, 1000, NULL)); /* heard of at 1500 */
	pe = pid_event(PROC_EVENT_EXIT, 30, 30);
	CHECK(send_event(sv[1], &pe));
	CHECK(!np_task_source_owes_scan(src, 1000, NULL));
	set_uptime(proc, 2600);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(list.nr == 2 && !has_pid(&list, 30));

	/* One that lives on is read once its wait is over. */
	pe = fork_event(1, 30, 30);
	CHECK(send_event(sv[1], &pe));
	set_uptime(proc, 3600);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(list.nr == 3 && has_pid(&list, 30));
	CHECK(!np_task_source_owes_scan(src, 100, NULL));

	/* A fork stamped after the last scan: its wait runs from its birth,
	 * not from that scan. */
	test_born_after_scan(proc, src, &list, sv[1]);

	/* A listed process's exit is owed a scan; the zombie it leaves is
	 * read at each scan, but its reap sends nothing: no scan is owed. */
	CHECK_INT(put_stat(proc, 10, 'Z'), 0);
	pe = pid_event(PROC_EVENT_EXIT, 10, 10);
	CHECK(send_event(sv[1], &pe));
	CHECK(np_task_source_owes_scan(src, 100, NULL));
	set_uptime(proc, 10500);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(find(&list, 10) && find(&list, 10)->state == 'Z');
	CHECK(!np_task_source_owes_scan(src, 100, NULL));

	/* Events no longer followed: every scan is owed. */
	np_task_source_stop_events(src);
	CHECK(np_task_source_owes_scan(src, 100, NULL));

	close(sv[1]);
	np_task_list_clear(&list);
	np_task_source_free(src);
	np_ctx_free(ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

int main(void)
{
	test_parse_kinds();
	test_parse_bad();
	test_live_source();
	test_live_first_read_delay();
	test_live_named_thread();
	test_owes_scan();
	return check_done();
}
