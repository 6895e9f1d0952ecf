/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "procevents.h"
#include "task.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

/* ---- datagrams as the kernel sends them ---- */

/* One netlink message holding one connector message holding @pe, cut to
 * @event_len bytes of it; appended at @buf + *len. */
static void put_event(unsigned char *buf, size_t *len, const struct proc_event *pe,
		      size_t event_len, unsigned seq, unsigned ack)
{
	struct nlmsghdr nlh = {.nlmsg_type = NLMSG_DONE};
	struct cn_msg cn = {.id = {CN_IDX_PROC, CN_VAL_PROC}, .seq = seq, .ack = ack};

	cn.len = (unsigned short)event_len;
	nlh.nlmsg_len = (unsigned)(NLMSG_HDRLEN + sizeof(cn) + event_len);
	memcpy(buf + *len, &nlh, sizeof(nlh));
	memcpy(buf + *len + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(buf + *len + NLMSG_HDRLEN + sizeof(cn), pe, event_len);
	*len += NLMSG_ALIGN(nlh.nlmsg_len);
}

static struct proc_event fork_event(int parent, int child_pid, int child_tgid)
{
	struct proc_event pe = {.what = PROC_EVENT_FORK};

	pe.event_data.fork.parent_pid = parent;
	pe.event_data.fork.parent_tgid = parent;
	pe.event_data.fork.child_pid = child_pid;
	pe.event_data.fork.child_tgid = child_tgid;
	return pe;
}

static struct proc_event pid_event(unsigned what, int pid, int tgid)
{
	struct proc_event pe = {.what = what};

	/* exec, exit and comm put pid and tgid first alike */
	pe.event_data.exit.process_pid = pid;
	pe.event_data.exit.process_tgid = tgid;
	return pe;
}

struct seen {
	int tgids[16];
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
	pid_t child;
	int err;

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

	child = pausing_child();
	CHECK(child > 0);
	/* The fork's event is there once fork returns; no listing needed. */
	CHECK_INT(np_task_source_take_events(src), 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	/* Read: the child (new); kept: this process (nothing changed). */
	CHECK(find(&list, child) && !find(&list, child)->stat_kept);
	CHECK(find(&list, getpid()) && find(&list, getpid())->stat_kept);
	CHECK(!list.listed_proc);
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
 * (nor read) until the delay has passed since the scan before the one that
 * heard of it; one that exits before is never listed (its open fails); a
 * listing lists young processes all the same. */
static void test_live_first_read_delay(void)
{
	struct np_ctx *ctx;
	struct np_proc_events *ev;
	struct np_task_source *src;
	struct np_task_list list = {0};
	uint64_t listed_ms;
	unsigned vanished;
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
	vanished = list.nr_vanished;
	usleep(400 * 1000);
	/* Past the delay: the one alive is read, the one gone never was
	 * (its read found it gone). */
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(has_pid(&list, lasting) && !has_pid(&list, brief));
	CHECK(vanished + list.nr_vanished >= 1);

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

int main(void)
{
	test_parse_kinds();
	test_parse_bad();
	test_live_source();
	test_live_first_read_delay();
	return check_done();
}
