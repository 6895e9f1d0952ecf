/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "listen.h"

struct event_base;
struct evbuffer;
struct np_logger;

/*
 * The optional metrics endpoint: GET /metrics on a loopback address, served
 * on the daemon's event loop, one request per connection. The body comes
 * from the daemon (Prometheus text format), so this module knows nothing
 * about the counters themselves.
 *
 * Any local user can connect, so what a connection may cost is bounded: a
 * few connections at once, each with an absolute deadline and a request head
 * of at most NP_METRICS_MAX_REQUEST bytes. When all are taken, a new one
 * pushes out the oldest that has not sent a whole request: a scraper sends
 * its request with the connect and is answered at once, so clients that
 * dribble or hold cannot keep it out, where refusing new connections would
 * let them.
 */
struct np_metrics;

/* The most connections open at once, and never more than a quarter of the
 * open-file limit: the other three quarters are the placement cycle's. */
#define NP_METRICS_MAX_CONNECTIONS 16
/* From accept to the last byte of the answer, whatever the client sends. */
#define NP_METRICS_DEADLINE_MS 5000
/* The request line and headers: a scraper's GET is a few hundred bytes. */
#define NP_METRICS_MAX_REQUEST 8192
/* How long the endpoint stops accepting after accept(2) failed for lack of
 * file descriptors (or memory), rather than retrying at once, forever. */
#define NP_METRICS_ACCEPT_PAUSE_MS 1000

/* Append the metrics text to @out. Returns 0, or -errno to answer 500. */
typedef int (*np_metrics_render_fn)(void *data, struct evbuffer *out);

/* Listen on @addr (parsed by the config: np_listen_addr_parse) and serve on
 * @base, calling @render for each GET /metrics; what goes wrong with clients
 * is logged to @log. Returns 0, or -errno from the socket (-EADDRINUSE, say);
 * -EINVAL for no address. */
int np_metrics_start(struct event_base *base, const struct np_listen_addr *addr,
		     np_metrics_render_fn render, void *data, struct np_logger *log,
		     struct np_metrics **out);

/* Replace the limits above (tests use small ones); a 0 keeps a limit as it
 * is. Open connections keep the deadline they were given. */
void np_metrics_set_limits(struct np_metrics *metrics, unsigned max_connections,
			   unsigned deadline_ms, unsigned accept_pause_ms);

/* The bound TCP port (the real one when the address asked for port 0). */
uint16_t np_metrics_port(const struct np_metrics *metrics);

/* Connections open now (for tests). */
unsigned np_metrics_connections(const struct np_metrics *metrics);

/* Stop listening, drop open connections and free; NULL is accepted. */
void np_metrics_free(struct np_metrics *metrics);
