/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metrics.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct np_metrics {
	struct evhttp *http;
	np_metrics_render_fn render;
	void *data;
	uint16_t port;
};

static void reply_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evbuffer *body = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; charset=utf-8");
	if (body)
		evbuffer_add_printf(body, "%s\n", text);
	evhttp_send_reply(req, code, reason, body);
	if (body)
		evbuffer_free(body);
}

static void serve_metrics(struct evhttp_request *req, void *arg)
{
	struct np_metrics *metrics = arg;
	struct evbuffer *body = evbuffer_new();

	if (!body || metrics->render(metrics->data, body) < 0) {
		reply_text(req, HTTP_INTERNAL, "Internal Server Error", "metrics unavailable");
		if (body)
			evbuffer_free(body);
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  NP_METRICS_CONTENT_TYPE);
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		/* libevent 2.1 would send the body after a HEAD too: give
		 * its length only. */
		char len[32];

		snprintf(len, sizeof(len), "%zu", evbuffer_get_length(body));
		evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Length", len);
		evbuffer_drain(body, evbuffer_get_length(body));
	}
	evhttp_send_reply(req, HTTP_OK, "OK", body);
	evbuffer_free(body);
}

static void serve_not_found(struct evhttp_request *req, void *arg)
{
	reply_text(req, HTTP_NOTFOUND, "Not Found", "not found: the metrics are at /metrics");
}

/* A listening socket of our own rather than evhttp_bind_socket, which
 * resolves names and would not tell us about a non-loopback address. */
static int listen_on(const struct sockaddr_storage *addr, socklen_t addr_len, uint16_t *port)
{
	int one = 1, fd;

	fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)addr, addr_len) < 0 || listen(fd, 16) < 0) {
		int err = -errno;

		close(fd);
		return err;
	} else {
		struct sockaddr_storage bound;
		socklen_t len = sizeof(bound);

		getsockname(fd, (struct sockaddr *)&bound, &len);
		*port =
		    ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						      : ((struct sockaddr_in *)&bound)->sin_port);
	}
	return fd;
}

int np_metrics_start(struct event_base *base, const struct np_listen_addr *listen_addr,
		     np_metrics_render_fn render, void *data, struct np_metrics **out)
{
	struct sockaddr_storage addr;
	struct np_metrics *metrics;
	socklen_t addr_len;
	int fd;

	if (listen_addr->family == AF_UNSPEC)
		return -EINVAL;
	addr_len = np_listen_addr_sockaddr(listen_addr, &addr);
	metrics = calloc(1, sizeof(*metrics));
	if (!metrics)
		return -ENOMEM;
	metrics->render = render;
	metrics->data = data;
	metrics->http = evhttp_new(base);
	if (!metrics->http) {
		free(metrics);
		return -ENOMEM;
	}
	/* A scraper sends a small GET; anything else is cut short. */
	evhttp_set_allowed_methods(metrics->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(metrics->http, 8192);
	evhttp_set_max_body_size(metrics->http, 0);
	evhttp_set_timeout(metrics->http, 10);
	evhttp_set_cb(metrics->http, "/metrics", serve_metrics, metrics);
	evhttp_set_gencb(metrics->http, serve_not_found, metrics);

	fd = listen_on(&addr, addr_len, &metrics->port);
	if (fd < 0 || !evhttp_accept_socket_with_handle(metrics->http, fd)) {
		if (fd >= 0)
			close(fd);
		np_metrics_free(metrics);
		return fd < 0 ? fd : -ENOMEM;
	}
	*out = metrics;
	return 0;
}

uint16_t np_metrics_port(const struct np_metrics *metrics)
{
	return metrics->port;
}

void np_metrics_free(struct np_metrics *metrics)
{
	if (!metrics)
		return;
	/* Frees the bound socket and every open connection. */
	evhttp_free(metrics->http);
	free(metrics);
}
