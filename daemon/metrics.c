/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metrics.h"

#include <arpa/inet.h>
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

static bool parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

int np_metrics_parse_listen(const char *spec, struct sockaddr_storage *addr, socklen_t *addr_len,
			    const char **why)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *host_start = spec;
	size_t host_len;
	uint16_t port;

	*why = "expected HOST:PORT, such as 127.0.0.1:9464 or [::1]:9464";
	memset(addr, 0, sizeof(*addr));
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		host_start = spec + 1;
		host_len = (size_t)(close - host_start);
		colon = close + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return -EINVAL;
		host_len = (size_t)(colon - spec);
	}
	if (host_len == 0 || host_len >= sizeof(host))
		return -EINVAL;
	memcpy(host, host_start, host_len);
	host[host_len] = '\0';
	if (!parse_port(colon + 1, &port)) {
		*why = "the port is not a number from 0 to 65535";
		return -EINVAL;
	}
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");

	if (spec[0] != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*addr_len = sizeof(*in4);
		if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
			goto not_loopback;
	} else if (spec[0] == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*addr_len = sizeof(*in6);
		if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) &&
		    !(IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127))
			goto not_loopback;
	} else {
		*why = "the host is not an IP address (IPv6 goes in brackets)";
		return -EINVAL;
	}
	*why = NULL;
	return 0;

not_loopback:
	*why = "not a loopback address: the endpoint has no authentication, so it only "
	       "listens on 127.0.0.0/8 or ::1";
	return -EADDRNOTAVAIL;
}

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

int np_metrics_start(struct event_base *base, const char *spec, np_metrics_render_fn render,
		     void *data, struct np_metrics **out, const char **why)
{
	struct sockaddr_storage addr;
	struct np_metrics *metrics;
	socklen_t addr_len;
	int fd, err;

	err = np_metrics_parse_listen(spec, &addr, &addr_len, why);
	if (err < 0)
		return err;
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
