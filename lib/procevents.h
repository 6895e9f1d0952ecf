/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "context.h"

/*
 * The kernel's process connector (netlink, NETLINK_CONNECTOR, CN_IDX_PROC):
 * a datagram per fork, exec, exit or rename of every task on the machine,
 * which tells the task source which processes changed since its last scan
 * without listing /proc. Listening takes the initial network, user and pid
 * namespaces (the kernel sends in the first only, and ignores subscribers
 * outside the others) and, up to Linux 6.5, CAP_NET_ADMIN; without them,
 * the source lists /proc at every scan as before. Events can be lost (the
 * socket's buffer overflows under a fork storm): the reader says so and
 * the source lists /proc again. The kernel may also drop one when it is
 * short of memory, without a word: the periodic listing is the bound on
 * that.
 */
struct np_proc_events;

enum np_proc_event_kind {
	NP_PROC_CHANGED, /* a process was made, exec'd, renamed, or its main thread exited */
	NP_PROC_ACK,	 /* the answer to a subscription */
};

struct np_proc_event {
	enum np_proc_event_kind kind;
	int tgid;    /* NP_PROC_CHANGED: the process */
	bool exited; /* NP_PROC_CHANGED: its main thread exited */
	/* NP_PROC_CHANGED: when it happened, as the kernel stamps it
	 * (CLOCK_MONOTONIC, ns); for a fork, the new process's birth. */
	unsigned long long time_ns;
	unsigned seq, ack; /* NP_PROC_ACK: the kernel's number; the request's ack + 1 */
	unsigned err;	   /* NP_PROC_ACK: 0, or the errno it was refused with */
};

typedef void (*np_proc_event_fn)(void *data, const struct np_proc_event *ev);

/* Parse one datagram of @len bytes as the connector sends it (pure): one or
 * more netlink messages, each a connector message holding one proc_event.
 * A fork that made a process (not a thread), an exec, the exit or rename of
 * a process's main thread are reported as changes of that process; events
 * about other threads, and of other kinds (uid, gid, sid, ptrace,
 * coredump), are passed over. Returns 0, -ENOBUFS when the kernel says
 * messages were lost (NLMSG_OVERRUN), or -EINVAL for a message that does
 * not parse (nothing after it is reported). */
int np_proc_events_parse(const void *buf, size_t len, np_proc_event_fn fn, void *data);

/* Subscribe to the process connector on the live machine. Returns 0,
 * -EOPNOTSUPP under a fixture root or where the kernel has no connector,
 * -EPERM without CAP_NET_ADMIN (which kernels up to 6.5 ask for),
 * -ETIMEDOUT when the kernel does not answer in a second (it ignores
 * subscribers outside the initial user and pid namespaces), or another
 * -errno (ECONNREFUSED in a network namespace of its own); the caller's
 * fallback is a listing. */
int np_proc_events_open(struct np_ctx *ctx, struct np_proc_events **out);

/* Follow connector datagrams that arrive on @fd, a socket someone else
 * subscribed (tests write them into one end of a socketpair): taken over,
 * closed by np_proc_events_close without a word to the kernel. Returns 0
 * or -ENOMEM (@fd is then left open). */
int np_proc_events_adopt(int fd, struct np_proc_events **out);

/* Unsubscribe and close; NULL is accepted. */
void np_proc_events_close(struct np_proc_events *ev);

/* The socket, for a caller that wants to drain it as events arrive. */
int np_proc_events_fd(const struct np_proc_events *ev);

/* Read the datagrams waiting, without blocking, at most 4,096, and report
 * their events. Returns 0 when none is left, 1 when some are, -ENOBUFS when
 * events were lost since the last drain (the caller must list /proc
 * again), or another -errno (the socket is of no more use; events may have
 * been lost). */
int np_proc_events_drain(struct np_proc_events *ev, np_proc_event_fn fn, void *data);
