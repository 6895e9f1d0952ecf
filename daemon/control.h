/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct event_base;
struct evbuffer;
struct np_logger;

/*
 * The control socket: a Unix stream socket in the runtime directory that
 * `numaplaced --status` asks for the running daemon's view. One request
 * per connection, one line: "status" or "status json". The answer is a
 * line "ok" and the body, or one line "error: MESSAGE"; then the daemon
 * closes. Only root and the daemon's own user are answered (the socket is
 * 0600 in a 0700 directory, and each peer's credentials are checked), and
 * every connection is bounded: a request of at most
 * NP_CONTROL_REQUEST_MAX bytes, NP_CONTROL_DEADLINE_MS to be done, at most
 * NP_CONTROL_MAX_CONNECTIONS open at once, and a pause of
 * NP_CONTROL_ACCEPT_PAUSE_MS when accepting fails.
 */
#define NP_CONTROL_SOCKET "control"
#define NP_CONTROL_REQUEST_MAX 64
#define NP_CONTROL_DEADLINE_MS 5000
#define NP_CONTROL_MAX_CONNECTIONS 8
/* How long the socket stops accepting after accept(2) failed (out of file
 * descriptors, say): the listening socket stays readable, and trying again
 * at once would spin. */
#define NP_CONTROL_ACCEPT_PAUSE_MS 1000

struct np_control_request {
	bool json;
};

/* Parse the request in @buf (@len bytes, no terminator needed). Returns 0
 * with @req filled, -EAGAIN while no newline has come (and @len is under
 * NP_CONTROL_REQUEST_MAX), -EINVAL for anything else. */
int np_control_request_parse(const char *buf, size_t len, struct np_control_request *req);

/* Append the answer's body to @out. Returns 0, or -errno to answer an
 * error (-EAGAIN: no placement cycle has run yet). */
typedef int (*np_control_answer_fn)(void *data, const struct np_control_request *req,
				    struct evbuffer *out);

struct np_control;

/*
 * Listen on @dir/control and serve on @base. A socket nothing answers on
 * (left by a daemon that did not stop cleanly) is replaced; one that
 * answers belongs to a running daemon: -EADDRINUSE, and nothing is
 * touched. Returns 0, or -errno with the reason logged naming the path.
 */
int np_control_start(struct event_base *base, const char *dir, struct np_logger *log,
		     np_control_answer_fn answer, void *data, struct np_control **out);

/* Stop listening, drop open connections, remove the socket if it is
 * still ours, and free; NULL is accepted. */
void np_control_free(struct np_control *control);

/*
 * The client: ask the daemon serving @dir/control and copy the body of
 * its answer to @out. Returns 0; -ENOENT or -ECONNREFUSED when no daemon
 * answers there; -EREMOTEIO when it answered an error; other -errno. On
 * failure @msg gets one line saying why, naming the socket.
 */
int np_control_query(const char *dir, const struct np_control_request *req, FILE *out,
		     char *msg, size_t msg_size);
