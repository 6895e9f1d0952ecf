/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "listen.h"

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

/* Listen on @addr (parsed by the config: np_listen_addr_parse) and serve on
 * @base, calling @render for each GET /metrics. Returns 0, or -errno from the
 * socket (-EADDRINUSE, say); -EINVAL for no address. */
int np_metrics_start(struct event_base *base, const struct np_listen_addr *addr,
		     np_metrics_render_fn render, void *data, struct np_metrics **out);

/* The bound TCP port (the real one when the address asked for port 0). */
uint16_t np_metrics_port(const struct np_metrics *metrics);

/* Stop listening, drop open connections and free; NULL is accepted. */
void np_metrics_free(struct np_metrics *metrics);
