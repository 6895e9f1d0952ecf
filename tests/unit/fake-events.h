/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The process connector's datagrams as the kernel sends them, for tests
 * that parse them or feed them to a socket a source follows
 * (np_proc_events_adopt). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

/* One netlink message holding one connector message holding @pe, cut to
 * @event_len bytes of it; appended at @buf + *len. */
static inline void put_event(unsigned char *buf, size_t *len, const struct proc_event *pe,
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

static inline struct proc_event fork_event(int parent, int child_pid, int child_tgid)
{
	struct proc_event pe = {.what = PROC_EVENT_FORK};

	pe.event_data.fork.parent_pid = parent;
	pe.event_data.fork.parent_tgid = parent;
	pe.event_data.fork.child_pid = child_pid;
	pe.event_data.fork.child_tgid = child_tgid;
	return pe;
}

static inline struct proc_event pid_event(unsigned what, int pid, int tgid)
{
	struct proc_event pe = {.what = what};

	/* exec, exit and comm put pid and tgid first alike */
	pe.event_data.exit.process_pid = pid;
	pe.event_data.exit.process_tgid = tgid;
	return pe;
}

/* One event in a datagram of its own, written to @fd; false if it was not. */
static inline bool send_event(int fd, const struct proc_event *pe)
{
	unsigned char buf[256];
	size_t len = 0;

	put_event(buf, &len, pe, sizeof(*pe), 0, 0);
	return send(fd, buf, len, 0) == (ssize_t)len;
}
