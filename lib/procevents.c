/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procevents.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

/* What the socket may hold before the kernel drops events: a fork, an exec
 * and an exit take ~1 KiB each of buffer (skb truesize), so 8 MiB is some
 * 2,500 short processes between two drains. Raised past rmem_max with
 * SO_RCVBUFFORCE, which the daemon's CAP_NET_ADMIN allows. */
#define RCVBUF_BYTES (8 << 20)
/* Datagrams one drain reads at most (one event each, ~100 bytes). */
#define DRAIN_MAX 4096
/* How long np_proc_events_open waits for the kernel to answer. */
#define ACK_WAIT_MS 1000

struct np_proc_events {
	int fd;
	unsigned tag; /* the subscription's, in its ack field */
	bool adopted; /* np_proc_events_adopt: not ours to unsubscribe */
};

/* Report one connector message's event, if it is one we follow. */
static void report(const struct proc_event *pe, const struct cn_msg *cn, np_proc_event_fn fn,
		   void *data)
{
	struct np_proc_event ev = {
	    .kind = NP_PROC_CHANGED, .tgid = -1, .time_ns = pe->timestamp_ns};

	switch (pe->what) {
	case PROC_EVENT_NONE:
		ev = (struct np_proc_event){.kind = NP_PROC_ACK,
					    .seq = cn->seq,
					    .ack = cn->ack,
					    .err = pe->event_data.ack.err};
		break;
	case PROC_EVENT_FORK:
		if (pe->event_data.fork.child_pid == pe->event_data.fork.child_tgid)
			ev.tgid = pe->event_data.fork.child_tgid;
		break;
	case PROC_EVENT_EXEC:
		/* An exec from any thread leaves one thread, the leader. */
		ev.tgid = pe->event_data.exec.process_tgid;
		break;
	case PROC_EVENT_EXIT:
		/* The main thread's exit: the process is gone, or a zombie
		 * leader whose other threads live on; a read tells which. */
		if (pe->event_data.exit.process_pid == pe->event_data.exit.process_tgid) {
			ev.tgid = pe->event_data.exit.process_tgid;
			ev.exited = true;
		}
		break;
	case PROC_EVENT_COMM:
		if (pe->event_data.comm.process_pid == pe->event_data.comm.process_tgid)
			ev.tgid = pe->event_data.comm.process_tgid;
		break;
	default:
		break;
	}
	if (ev.kind == NP_PROC_ACK || ev.tgid > 0)
		fn(data, &ev);
}

int np_proc_events_parse(const void *buf, size_t len, np_proc_event_fn fn, void *data)
{
	const unsigned char *p = buf;

	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr nlh;
		struct cn_msg cn;
		struct proc_event pe;
		size_t payload, step;

		memcpy(&nlh, p, sizeof(nlh)); /* the buffer need not be aligned */
		if (nlh.nlmsg_len < NLMSG_HDRLEN || nlh.nlmsg_len > len)
			return -EINVAL;
		if (nlh.nlmsg_type == NLMSG_OVERRUN)
			return -ENOBUFS;
		payload = nlh.nlmsg_len - NLMSG_HDRLEN;
		if (nlh.nlmsg_type == NLMSG_DONE && payload >= sizeof(cn)) {
			memcpy(&cn, p + NLMSG_HDRLEN, sizeof(cn));
			if (cn.len > payload - sizeof(cn))
				return -EINVAL;
			/* A message too short for the fields its kind has is
			 * not one the kernel sent. */
			if (cn.id.idx == CN_IDX_PROC && cn.id.val == CN_VAL_PROC) {
				if (cn.len <
				    offsetof(struct proc_event, event_data) + 4 * sizeof(int))
					return -EINVAL;
				memset(&pe, 0, sizeof(pe));
				memcpy(&pe, p + NLMSG_HDRLEN + sizeof(cn),
				       cn.len < sizeof(pe) ? cn.len : sizeof(pe));
				report(&pe, &cn, fn, data);
			}
		} else if (nlh.nlmsg_type == NLMSG_DONE || nlh.nlmsg_type == NLMSG_ERROR) {
			return -EINVAL;
		}
		step = NLMSG_ALIGN(nlh.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

/* Ask the kernel to send (@op PROC_CN_MCAST_LISTEN) or stop (IGNORE). */
static int send_op(struct np_proc_events *ev, enum proc_cn_mcast_op op)
{
	/* Header, connector message and the operation back to back, as the
	 * kernel reads them (cn_msg ends in a flexible array, so the three
	 * are laid out by hand rather than as members of one struct). */
	unsigned char msg[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(op)];
	struct nlmsghdr nlh = {
		.nlmsg_len = sizeof(msg),
		.nlmsg_type = NLMSG_DONE,
		.nlmsg_pid = (unsigned)getpid(),
	};
	/* The kernel numbers what it sends itself (seq), but answers with
	 * the request's ack + 1: that tells our answer from another's. */
	struct cn_msg cn = {
		.id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC},
		.ack = ev->tag,
		.len = sizeof(op),
	};
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};

	memcpy(msg, &nlh, sizeof(nlh));
	memcpy(msg + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(msg + NLMSG_HDRLEN + sizeof(cn), &op, sizeof(op));
	if (sendto(ev->fd, msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* Receive one datagram from the kernel into @buf; -EAGAIN when none waits. */
static ssize_t receive(const struct np_proc_events *ev, void *buf, size_t size)
{
	for (;;) {
		struct sockaddr_nl from;
		socklen_t from_len = sizeof(from);
		ssize_t n =
		    recvfrom(ev->fd, buf, size, MSG_DONTWAIT, (struct sockaddr *)&from, &from_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		/* Only the kernel (port 0) speaks for the connector; an
		 * adopted socket's peer is whoever was given it. */
		if (ev->adopted || (from_len == sizeof(from) && from.nl_pid == 0))
			return n;
	}
}

struct ack_wait {
	unsigned tag;
	bool seen;
	unsigned err;
};

static void on_ack(void *data, const struct np_proc_event *ev)
{
	struct ack_wait *w = data;

	/* The kernel answers every listener's subscription to every listener:
	 * ours is the one that carries our tag, plus one. */
	if (ev->kind == NP_PROC_ACK && ev->ack == w->tag + 1) {
		w->seen = true;
		w->err = ev->err;
	}
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for the kernel's answer to our subscription. */
static int wait_ack(struct np_proc_events *ev)
{
	struct ack_wait w = {.tag = ev->tag};
	uint64_t deadline = monotonic_ms() + ACK_WAIT_MS;
	char buf[4096];

	while (!w.seen) {
		struct pollfd pfd = {.fd = ev->fd, .events = POLLIN};
		uint64_t now = monotonic_ms();
		ssize_t n;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR)
			return -errno;
		n = receive(ev, buf, sizeof(buf));
		if (n == -EAGAIN || n == -ENOBUFS)
			continue;
		if (n < 0)
			return (int)n;
		np_proc_events_parse(buf, (size_t)n, on_ack, &w);
	}
	return w.err ? -(int)w.err : 0;
}

int np_proc_events_open(struct np_ctx *ctx, struct np_proc_events **out)
{
	struct sockaddr_nl addr = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
	struct np_proc_events *ev;
	int size = RCVBUF_BYTES, err;

	if (!np_ctx_is_live(ctx))
		return -EOPNOTSUPP;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->tag = ((unsigned)getpid() << 12 ^ (unsigned)monotonic_ms()) & 0x7fffffff;
	ev->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (ev->fd < 0) {
		err = errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT ? -EOPNOTSUPP : -errno;
		free(ev);
		return err;
	}
	if (setsockopt(ev->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(ev->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	err = bind(ev->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ? -errno : 0;
	if (!err)
		err = send_op(ev, PROC_CN_MCAST_LISTEN);
	if (!err)
		err = wait_ack(ev);
	if (err) {
		close(ev->fd);
		free(ev);
		return err;
	}
	*out = ev;
	return 0;
}

int np_proc_events_adopt(int fd, struct np_proc_events **out)
{
	struct np_proc_events *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return -ENOMEM;
	ev->fd = fd;
	ev->adopted = true;
	*out = ev;
	return 0;
}

void np_proc_events_close(struct np_proc_events *ev)
{
	if (!ev)
		return;
	/* The kernel counts listeners: sending stops when none is left. */
	if (!ev->adopted)
		(void)send_op(ev, PROC_CN_MCAST_IGNORE);
	close(ev->fd);
	free(ev);
}

int np_proc_events_fd(const struct np_proc_events *ev)
{
	return ev->fd;
}

int np_proc_events_drain(struct np_proc_events *ev, np_proc_event_fn fn, void *data)
{
	char buf[16384];
	bool lost = false;

	/* Bounded: under a storm of clones and exits the queue may refill as
	 * fast as it is read, and the loop must get on with its work. */
	for (unsigned reads = 0;; reads++) {
		ssize_t n;
		int err;

		if (reads == DRAIN_MAX)
			return lost ? -ENOBUFS : 1;
		n = receive(ev, buf, sizeof(buf));
		if (n == -EAGAIN)
			break;
		if (n == -ENOBUFS) {
			lost = true; /* the queue goes on after the gap */
			continue;
		}
		if (n < 0)
			return lost ? -ENOBUFS : (int)n;
		err = np_proc_events_parse(buf, (size_t)n, fn, data);
		if (err == -ENOBUFS)
			lost = true;
		else if (err)
			lost = true; /* a message we cannot read: its event is lost */
	}
	return lost ? -ENOBUFS : 0;
}
