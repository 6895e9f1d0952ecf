/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

struct renderer {
	unsigned calls;
	int fail;
};

static int render(void *data, struct evbuffer *out)
{
	struct renderer *r = data;

	r->calls++;
	if (r->fail)
		return r->fail;
	evbuffer_add_printf(out,
			    "# HELP numaplaced_scans_total Scans done.\n"
			    "# TYPE numaplaced_scans_total counter\n"
			    "numaplaced_scans_total %u\n",
			    r->calls);
	return 0;
}

struct response {
	char raw[16384];
	char status[128];
	char content_type[128];
	const char *body;
};

static void header_value(const char *raw, const char *name, char *out, size_t size)
{
	const char *p = strcasestr(raw, name);

	out[0] = '\0';
	if (p && (p = strchr(p, ':')))
		snprintf(out, size, "%.*s", (int)strcspn(p + 2, "\r\n"), p + 2);
}

/* Send @request to the endpoint with a plain socket, running the event loop
 * until the server closes the connection. Returns 0 or -1 on a timeout. */
static int fetch(struct event_base *base, uint16_t port, const char *request, struct response *resp)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
	size_t used = 0;
	time_t deadline = time(NULL) + 10;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char *end;

	memset(resp, 0, sizeof(*resp));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    write(fd, request, strlen(request)) != (ssize_t)strlen(request))
		goto fail;
	while (time(NULL) < deadline) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		event_base_loop(base, EVLOOP_NONBLOCK);
		if (poll(&pfd, 1, 10) <= 0)
			continue;
		n = read(fd, resp->raw + used, sizeof(resp->raw) - 1 - used);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	resp->raw[used] = '\0';
	snprintf(resp->status, sizeof(resp->status), "%.*s", (int)strcspn(resp->raw, "\r\n"),
		 resp->raw);
	header_value(resp->raw, "\r\nContent-Type", resp->content_type, sizeof(resp->content_type));
	end = strstr(resp->raw, "\r\n\r\n");
	resp->body = end ? end + 4 : "";
	return used ? 0 : -1;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Start the endpoint on @spec, parsed as the config parses it. */
static int start(struct event_base *base, const char *spec, struct renderer *r,
		 struct np_metrics **out)
{
	struct np_listen_addr addr;
	int err = np_listen_addr_parse(spec, &addr);

	return err ? err : np_metrics_start(base, &addr, render, r, out);
}

static void test_serve(void)
{
	struct event_base *base = event_base_new();
	struct renderer r = {0};
	struct np_metrics *metrics = NULL, *other = NULL;
	struct response resp;
	struct np_listen_addr none = {.family = AF_UNSPEC};
	char expect[64];
	size_t body_len;
	uint16_t port;

	CHECK(base != NULL);
	CHECK_INT(np_metrics_start(base, &none, render, &r, &metrics), -EINVAL);
	CHECK(metrics == NULL);
	CHECK_INT(start(base, "127.0.0.1:0", &r, &metrics), 0);
	CHECK(metrics != NULL);
	if (!metrics)
		return;
	port = np_metrics_port(metrics);
	printf("metrics endpoint bound to 127.0.0.1:%u\n", port);
	CHECK(port != 0);

	/* The same port twice: the socket error comes back. */
	{
		char spec[32];

		snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
		CHECK_INT(start(base, spec, &r, &other), -EADDRINUSE);
	}

	CHECK_INT(fetch(base, port,
			"GET /metrics HTTP/1.1\r\nHost: localhost\r\n"
			"Connection: close\r\n\r\n",
			&resp),
		  0);
	CHECK_STR(resp.status, "HTTP/1.1 200 OK");
	CHECK_STR(resp.content_type, "text/plain; version=0.0.4; charset=utf-8");
	CHECK_STR(resp.body, "# HELP numaplaced_scans_total Scans done.\n"
			     "# TYPE numaplaced_scans_total counter\n"
			     "numaplaced_scans_total 1\n");
	CHECK_INT(r.calls, 1);
	body_len = strlen(resp.body);

	/* HTTP/1.0 closes by default; each scrape renders afresh. */
	CHECK_INT(fetch(base, port, "GET /metrics HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 200 OK");
	CHECK(strstr(resp.body, "numaplaced_scans_total 2\n") != NULL);

	CHECK_INT(fetch(base, port, "GET /metrics?name=x HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 200 OK");

	CHECK_INT(fetch(base, port, "GET / HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 404 Not Found");
	CHECK_STR(resp.content_type, "text/plain; charset=utf-8");
	CHECK_INT(fetch(base, port, "GET /metrics/x HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 404 Not Found");

	/* HEAD has the headers and no body. */
	CHECK_INT(fetch(base, port, "HEAD /metrics HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 200 OK");
	CHECK_STR(resp.body, "");
	snprintf(expect, sizeof(expect), "\r\nContent-Length: %zu\r\n", body_len);
	CHECK(strstr(resp.raw, expect) != NULL);

	/* Only reading is served. */
	CHECK_INT(fetch(base, port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n", &resp),
		  0);
	CHECK(strstr(resp.status, " 501 ") != NULL);
	CHECK_INT(r.calls, 4);

	/* The daemon cannot render: 500, not a half answer. */
	r.fail = -ENOMEM;
	CHECK_INT(fetch(base, port, "GET /metrics HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 500 Internal Server Error");
	CHECK(strstr(resp.body, "numaplaced_scans_total") == NULL);

	np_metrics_free(metrics);
	/* The port is free again. */
	{
		char spec[32];

		snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
		CHECK_INT(start(base, spec, &r, &other), 0);
		np_metrics_free(other);
	}
	event_base_free(base);
}

/* An IPv4-mapped address, which the config accepts, binds: as the IPv4
 * address it maps. */
static void test_v4_mapped(void)
{
	struct event_base *base = event_base_new();
	struct renderer r = {0};
	struct np_metrics *metrics = NULL;
	struct response resp;

	CHECK(base != NULL);
	CHECK_INT(start(base, "[::ffff:127.0.0.1]:0", &r, &metrics), 0);
	if (!metrics)
		return;
	CHECK_INT(fetch(base, np_metrics_port(metrics), "GET /metrics HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 200 OK");
	np_metrics_free(metrics);
	event_base_free(base);
}

int main(void)
{
	test_serve();
	test_v4_mapped();
	return check_done();
}
