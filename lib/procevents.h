/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "context.h"

/*
 * The kernel's process connector (netlink, NETLINK_CONNECTOR, CN_IDX_PROC):
 * a datagram per fork, exec, exit or rename of every task on the machine,
 * which tells the task source which processes changed since its last scan
 * without listing /proc. Listening takes CAP_NET_ADMIN (the kernel checks it
 * against the initial user namespace) and the initial network namespace
 * (the kernel sends in that one only); without either, the source lists
 * /proc at every scan as before. Events can be lost (the socket's buffer
 * overflows under a fork storm): the reader says so and the source lists
 * /proc again.
 */
struct np_proc_events;

enum np_proc_event_kind {
	NP_PROC_CHANGED, /* a process was made, exec'd, renamed, or its main thread exited */
	NP_PROC_ACK,	 /* the answer to a subscription */
};

struct np_proc_event {
	enum np_proc_event_kind kind;
	int tgid;	   /* NP_PROC_CHANGED: the process */
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
 * -EPERM without CAP_NET_ADMIN, or another -errno (logged at info by the
 * caller: the fallback is a listing). */
int np_proc_events_open(struct np_ctx *ctx, struct np_proc_events **out);

/* Unsubscribe and close; NULL is accepted. */
void np_proc_events_close(struct np_proc_events *ev);

/* The socket, for a caller that wants to drain it as events arrive. */
int np_proc_events_fd(const struct np_proc_events *ev);

/* Read every datagram waiting, without blocking, and report its events.
 * Returns 0, or -ENOBUFS when events were lost since the last drain (the
 * caller must list /proc again), or another -errno. */
int np_proc_events_drain(struct np_proc_events *ev, np_proc_event_fn fn, void *data);
