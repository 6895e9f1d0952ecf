/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <sys/socket.h>

struct event_base;
struct evbuffer;

/*
 * The optional metrics endpoint: GET /metrics on a loopback address, served
 * by libevent's evhttp on the daemon's event loop. The body comes from the
 * daemon (Prometheus text format), so this module knows nothing about the
 * counters themselves.
 */
struct np_metrics;

/* Append the metrics text to @out. Returns 0, or -errno to answer 500. */
typedef int (*np_metrics_render_fn)(void *data, struct evbuffer *out);

/* Parse a metrics_listen value: "127.0.0.1:9464", "[::1]:9464" or
 * "localhost:9464"; port 0 picks a free one. Only loopback addresses are
 * accepted: the endpoint has no authentication. Returns 0, -EINVAL (not
 * HOST:PORT) or -EADDRNOTAVAIL (not loopback); *@why says which in words. */
int np_metrics_parse_listen(const char *spec, struct sockaddr_storage *addr, socklen_t *addr_len,
			    const char **why);

/* Listen on @spec and serve on @base, calling @render for each GET
 * /metrics. Returns 0 or -errno (*@why then explains a parse error, or is
 * NULL for a socket error such as -EADDRINUSE). */
int np_metrics_start(struct event_base *base, const char *spec, np_metrics_render_fn render,
		     void *data, struct np_metrics **out, const char **why);

/* The bound TCP port (the real one when the spec asked for port 0). */
uint16_t np_metrics_port(const struct np_metrics *metrics);

/* Stop listening, drop open connections and free; NULL is accepted. */
void np_metrics_free(struct np_metrics *metrics);
