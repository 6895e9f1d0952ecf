/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "log.h"
#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
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

/* Start the endpoint on @spec, parsed as the config parses it, logging to
 * @log (NULL: nowhere). */
static int start_logged(struct event_base *base, const char *spec, struct renderer *r,
			struct np_logger *log, struct np_metrics **out)
{
	struct np_listen_addr addr;
	int err = np_listen_addr_parse(spec, &addr);

	return err ? err : np_metrics_start(base, &addr, render, r, log, out);
}

static int start(struct event_base *base, const char *spec, struct renderer *r,
		 struct np_metrics **out)
{
	return start_logged(base, spec, r, NULL, out);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

/* Run the loop for @ms. */
static void run_for(struct event_base *base, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* A client connected to @port that has sent nothing. */
static int connect_client(uint16_t port)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* True when the server closed @fd's connection (what it sent before is left
 * unread). */
static bool peer_closed(int fd)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* Everything @log wrote to @f so far. */
static const char *log_text(FILE *f)
{
	static char buf[16384];
	size_t n;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fseek(f, 0, SEEK_END);
	return buf;
}

static unsigned count_of(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
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
	CHECK_INT(np_metrics_start(base, &none, render, &r, NULL, &metrics), -EINVAL);
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

/* A client that sends a byte every 50 ms is cut off at the deadline, which
 * counts from the connect: the bytes do not push it back. */
static void test_deadline(void)
{
	struct event_base *base = event_base_new();
	struct renderer r = {0};
	struct np_metrics *metrics = NULL;
	const char *slow = "GET /metrics HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	double t0, closed_after = -1;
	int fd;

	CHECK_INT(start(base, "127.0.0.1:0", &r, &metrics), 0);
	if (!metrics)
		return;
	np_metrics_set_limits(metrics, 0, 300, 0);
	fd = connect_client(np_metrics_port(metrics));
	CHECK(fd >= 0);
	t0 = now_ms();
	for (size_t i = 0; i < strlen(slow) && closed_after < 0; i++) {
		if (send(fd, slow + i, 1, MSG_NOSIGNAL) != 1 || peer_closed(fd))
			closed_after = now_ms() - t0;
		run_for(base, 50);
	}
	printf("a client sending a byte every 50 ms: closed after %.0f ms (deadline 300 ms)\n",
	       closed_after);
	CHECK(closed_after >= 250 && closed_after < 1000);
	CHECK_INT(np_metrics_connections(metrics), 0);
	CHECK_INT(r.calls, 0);
	close(fd);
	np_metrics_free(metrics);
	event_base_free(base);
}

/* A head longer than NP_METRICS_MAX_REQUEST gets 431 and the connection
 * closes; a request line that is no HTTP gets 400 at once. */
static void test_request_size(void)
{
	struct event_base *base = event_base_new();
	struct renderer r = {0};
	struct np_metrics *metrics = NULL;
	struct response resp;
	static char big[NP_METRICS_MAX_REQUEST + 2048];
	size_t off;

	CHECK_INT(start(base, "127.0.0.1:0", &r, &metrics), 0);
	if (!metrics)
		return;
	off = (size_t)snprintf(big, sizeof(big), "GET /metrics HTTP/1.1\r\nX-Big: ");
	memset(big + off, 'a', sizeof(big) - off - 1);
	CHECK_INT(fetch(base, np_metrics_port(metrics), big, &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.1 431 Request Header Fields Too Large");
	CHECK_INT(fetch(base, np_metrics_port(metrics), "\x16\x03\x01 hello\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.1 400 Bad Request");
	CHECK_INT(r.calls, 0);
	np_metrics_free(metrics);
	event_base_free(base);
}

/* With every connection taken, a new one pushes out the oldest that has not
 * sent a whole request; a scraper still gets its answer. */
static void test_connection_cap(void)
{
	struct event_base *base = event_base_new();
	struct renderer r = {0};
	struct np_metrics *metrics = NULL;
	struct response resp;
	struct np_logger *log = NULL;
	FILE *logf = tmpfile();
	int idle[5];
	uint16_t port;

	CHECK(logf != NULL);
	CHECK_INT(np_logger_new(logf, NP_LOG_FORMAT_JOURNAL, &log), 0);
	CHECK_INT(start_logged(base, "127.0.0.1:0", &r, log, &metrics), 0);
	if (!metrics)
		return;
	np_metrics_set_limits(metrics, 4, 0, 0);
	port = np_metrics_port(metrics);
	for (int i = 0; i < 4; i++) {
		idle[i] = connect_client(port);
		CHECK(idle[i] >= 0);
		run_for(base, 20);
	}
	CHECK_INT(np_metrics_connections(metrics), 4);
	for (int i = 0; i < 4; i++)
		CHECK(!peer_closed(idle[i]));
	CHECK_STR(log_text(logf), "");

	idle[4] = connect_client(port);
	run_for(base, 20);
	CHECK_INT(np_metrics_connections(metrics), 4);
	CHECK(peer_closed(idle[0]));
	for (int i = 1; i < 5; i++)
		CHECK(!peer_closed(idle[i]));

	/* The scraper pushes out the next oldest, and is answered. */
	CHECK_INT(fetch(base, port, "GET /metrics HTTP/1.0\r\n\r\n", &resp), 0);
	CHECK_STR(resp.status, "HTTP/1.0 200 OK");
	CHECK(peer_closed(idle[1]));
	for (int i = 2; i < 5; i++)
		CHECK(!peer_closed(idle[i]));
	/* Said once while the endpoint stays full, not once per connection. */
	CHECK_INT(count_of(log_text(logf), "4 connections open, the most allowed"), 1);
	CHECK_INT(count_of(log_text(logf), "\n"), 1);
	printf("log: %s", log_text(logf));

	for (int i = 0; i < 5; i++)
		close(idle[i]);
	run_for(base, 20);
	CHECK_INT(np_metrics_connections(metrics), 0);
	np_metrics_free(metrics);
	np_logger_free(log);
	fclose(logf);
	event_base_free(base);
}

static double cpu_time_ms(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000;
}

/* Out of file descriptors, the endpoint stops accepting for a while instead
 * of retrying accept(2) on every turn of the loop, and serves the waiting
 * client once descriptors are free again. */
static void test_accept_pause(void)
{
	struct event_base *base = event_base_new();
	struct renderer r = {0};
	struct np_metrics *metrics = NULL;
	struct np_logger *log = NULL;
	FILE *logf = tmpfile();
	struct rlimit saved, low;
	struct rusage before, after;
	int client, fillers[4096], nr_fillers = 0, spare;
	const char *get = "GET /metrics HTTP/1.0\r\n\r\n";
	char reply[256] = "";
	double cpu_ms;
	ssize_t n;

	CHECK(logf != NULL);
	CHECK_INT(np_logger_new(logf, NP_LOG_FORMAT_JOURNAL, &log), 0);
	CHECK_INT(start_logged(base, "127.0.0.1:0", &r, log, &metrics), 0);
	if (!metrics)
		return;
	np_metrics_set_limits(metrics, 0, 0, 200);
	client = connect_client(np_metrics_port(metrics));
	CHECK(client >= 0);
	CHECK(send(client, get, strlen(get), 0) == (ssize_t)strlen(get));

	/* Use up every descriptor the limit allows. */
	CHECK_INT(getrlimit(RLIMIT_NOFILE, &saved), 0);
	spare = dup(0);
	low = saved;
	low.rlim_cur = (rlim_t)spare + 64;
	close(spare);
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nr_fillers < (int)(sizeof(fillers) / sizeof(fillers[0])) &&
	       (fillers[nr_fillers] = dup(0)) >= 0)
		nr_fillers++;
	CHECK(errno == EMFILE);

	getrusage(RUSAGE_SELF, &before);
	run_for(base, 500);
	getrusage(RUSAGE_SELF, &after);
	cpu_ms = cpu_time_ms(&after) - cpu_time_ms(&before);
	printf("500 ms out of descriptors: %.1f ms of CPU, %u accept failures logged\n", cpu_ms,
	       count_of(log_text(logf), "cannot accept a connection"));
	/* One try per 200 ms pause: 2 or 3 in 500 ms, not one per turn. */
	CHECK(count_of(log_text(logf), "cannot accept a connection: Too many open files; "
				       "not accepting for 200 ms") >= 2);
	CHECK(count_of(log_text(logf), "cannot accept a connection") <= 3);
	CHECK(count_of(log_text(logf), "suppressed") == 0);
	CHECK(cpu_ms < 100);
	CHECK_INT(r.calls, 0);

	while (nr_fillers > 0)
		close(fillers[--nr_fillers]);
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &saved), 0);
	run_for(base, 300);
	n = recv(client, reply, sizeof(reply) - 1, MSG_DONTWAIT);
	CHECK(n > 0 && strncmp(reply, "HTTP/1.0 200 OK\r\n", 17) == 0);
	CHECK_INT(r.calls, 1);
	close(client);
	np_metrics_free(metrics);
	np_logger_free(log);
	fclose(logf);
	event_base_free(base);
}

int main(void)
{
	test_serve();
	test_v4_mapped();
	test_deadline();
	test_request_size();
	test_connection_cap();
	test_accept_pause();
	return check_done();
}
