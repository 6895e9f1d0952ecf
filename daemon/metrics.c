/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metrics.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <syslog.h>
#include <unistd.h>

#include "http.h"
#include "log.h"

#define NP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Connections waiting in the kernel for accept(2) (net.core.somaxconn caps
 * it): a burst of connects while the loop is busy, since a connect that finds
 * the queue full is retried by the client's TCP only a second later. */
#define NP_METRICS_BACKLOG SOMAXCONN

enum conn_state {
	CONN_READING,  /* the request head */
	CONN_WRITING,  /* the answer */
	CONN_DRAINING, /* answered: what the client still sends, until it closes */
};

struct conn {
	TAILQ_ENTRY(conn) link; /* in accept order: the oldest first */
	struct np_metrics *metrics;
	int fd;
	enum conn_state state;
	struct event io;	/* what the state waits for */
	struct event deadline;	/* set once, at accept */
	struct evbuffer *reply; /* from CONN_WRITING on */
	size_t len;
	char request[NP_METRICS_MAX_REQUEST];
};

struct np_metrics {
	struct event_base *base;
	struct np_logger *log;
	np_metrics_render_fn render;
	void *data;
	int listen_fd;
	uint16_t port;
	struct event accept_ev;
	struct event resume_ev; /* accepting again after a pause */
	TAILQ_HEAD(, conn) conns;
	unsigned nr_conns, max_conns;
	struct timeval deadline, accept_pause;
	unsigned accept_pause_ms; /* the same, for the log */
	bool full_logged;	  /* until the endpoint is half empty again */
};

static struct timeval ms_to_tv(unsigned ms)
{
	return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
}

/* The configured cap, but at most a quarter of the open-file limit, so that
 * connections cannot take the descriptors the placement cycle needs. */
static unsigned connection_cap(unsigned wanted)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 4 < wanted)
		wanted = (unsigned)(rl.rlim_cur / 4);
	return wanted ? wanted : 1;
}

static void conn_close(struct conn *c)
{
	struct np_metrics *m = c->metrics;

	event_del(&c->io);
	event_del(&c->deadline);
	close(c->fd);
	if (c->reply)
		evbuffer_free(c->reply);
	TAILQ_REMOVE(&m->conns, c, link);
	m->nr_conns--;
	if (m->nr_conns == 0 || m->nr_conns < m->max_conns / 2)
		m->full_logged = false;
	free(c);
}

/* Wait on @fd for @what in @cb from now on. */
static void conn_wait(struct conn *c, enum conn_state state, short what, event_callback_fn cb)
{
	c->state = state;
	event_del(&c->io);
	event_assign(&c->io, c->metrics->base, c->fd, what | EV_PERSIST, cb, c);
	if (event_add(&c->io, NULL) < 0)
		conn_close(c);
}

/* Read and drop what the client sends after its answer; close at its end.
 * Closing while its bytes are unread would reset the connection, and the
 * client could lose the answer (a 431 to a head that was too long, say). */
static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	ssize_t n;

	while ((n = read(fd, c->request, sizeof(c->request))) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		conn_close(c);
}

static void on_writable(evutil_socket_t fd, short what, void *arg);

/* Write what the kernel takes, waiting for room for the rest; once all is
 * sent, the client gets an end of stream. */
static void conn_flush(struct conn *c)
{
	while (evbuffer_get_length(c->reply)) {
		if (evbuffer_write(c->reply, c->fd) < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				conn_close(c);
			else if (c->state != CONN_WRITING)
				conn_wait(c, CONN_WRITING, EV_WRITE, on_writable);
			return;
		}
	}
	if (shutdown(c->fd, SHUT_WR) < 0)
		conn_close(c);
	else
		conn_wait(c, CONN_DRAINING, EV_READ, on_drain);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
	conn_flush(arg);
}

/* Queue the whole answer: status line, headers, and @body unless the request
 * was HEAD. Every answer closes the connection. */
static void conn_answer(struct conn *c, const struct np_http_request *req, int code,
			const char *reason, const char *content_type, struct evbuffer *body)
{
	unsigned minor = req && req->minor == 0 ? 0 : 1;

	c->reply = evbuffer_new();
	if (!c->reply ||
	    evbuffer_add_printf(c->reply,
				"HTTP/1.%u %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
				"Connection: close\r\n\r\n",
				minor, code, reason, content_type, evbuffer_get_length(body)) < 0 ||
	    ((!req || req->method != NP_HTTP_HEAD) && evbuffer_add_buffer(c->reply, body) < 0)) {
		conn_close(c);
		return;
	}
	conn_flush(c);
}

static void conn_answer_text(struct conn *c, const struct np_http_request *req, int code,
			     const char *reason, const char *text)
{
	struct evbuffer *body = evbuffer_new();

	if (!body || evbuffer_add_printf(body, "%s\n", text) < 0) {
		if (body)
			evbuffer_free(body);
		conn_close(c);
		return;
	}
	conn_answer(c, req, code, reason, "text/plain; charset=utf-8", body);
	evbuffer_free(body);
}

static void conn_serve(struct conn *c, const struct np_http_request *req)
{
	struct evbuffer *body;

	if (req->method == NP_HTTP_OTHER) {
		conn_answer_text(c, req, 501, "Not Implemented", "only GET and HEAD are served");
		return;
	}
	if (req->path_len != strlen("/metrics") || memcmp(req->path, "/metrics", req->path_len)) {
		conn_answer_text(c, req, 404, "Not Found",
				 "not found: the metrics are at /metrics");
		return;
	}
	body = evbuffer_new();
	if (!body || c->metrics->render(c->metrics->data, body) < 0) {
		if (body)
			evbuffer_free(body);
		conn_answer_text(c, req, 500, "Internal Server Error", "metrics unavailable");
		return;
	}
	conn_answer(c, req, 200, "OK", NP_METRICS_CONTENT_TYPE, body);
	evbuffer_free(body);
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct np_http_request req;
	ssize_t n = read(fd, c->request + c->len, sizeof(c->request) - c->len);
	int err;

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		/* The client went away, or the connection broke. */
		conn_close(c);
		return;
	}
	c->len += (size_t)n;
	err = np_http_request_parse(c->request, c->len, &req);
	if (err == 0)
		conn_serve(c, &req);
	else if (err == -EBADMSG)
		conn_answer_text(c, NULL, 400, "Bad Request", "not an HTTP/1 request");
	else if (c->len == sizeof(c->request))
		conn_answer_text(c, NULL, 431, "Request Header Fields Too Large",
				 "the request head is too long");
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	/* No answer is owed to a client that took this long. */
	conn_close(arg);
}

/* Make room for one more: the oldest connection not in the middle of an
 * answer goes (or, when all are, the oldest). */
static void drop_oldest(struct np_metrics *m)
{
	struct conn *victim = TAILQ_FIRST(&m->conns), *c;

	TAILQ_FOREACH(c, &m->conns, link)
	{
		if (c->state != CONN_WRITING) {
			victim = c;
			break;
		}
	}
	if (!m->full_logged) {
		np_logger_log(m->log, LOG_WARNING,
			      "metrics: %u connections open, the most allowed: the oldest "
			      "one not being answered is dropped for each new one",
			      m->nr_conns);
		m->full_logged = true;
	}
	conn_close(victim);
}

/* Take over @fd, a connection just accepted. */
static void conn_open(struct np_metrics *m, int fd)
{
	struct conn *c = malloc(sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->metrics = m;
	c->fd = fd;
	c->state = CONN_READING;
	c->reply = NULL;
	c->len = 0;
	event_assign(&c->io, m->base, fd, EV_READ | EV_PERSIST, on_readable, c);
	evtimer_assign(&c->deadline, m->base, on_deadline, c);
	if (event_add(&c->io, NULL) < 0 || evtimer_add(&c->deadline, &m->deadline) < 0) {
		event_del(&c->io);
		close(fd);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&m->conns, c, link);
	m->nr_conns++;
	/* A scraper sends its request with the connect: it is usually here
	 * already, and answered now it cannot be pushed out by later ones. */
	on_readable(fd, EV_READ, c);
}

/* accept(2) errors that belong to one connection that has gone; the next
 * one may well be fine (accept(2), "Error handling"). */
static bool accept_error_is_transient(int err)
{
	switch (err) {
	case EAGAIN:
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
	case ENETDOWN:
	case ENOPROTOOPT:
	case EHOSTDOWN:
	case ENONET:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case ENETUNREACH:
		return true;
	default:
		return false;
	}
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct np_metrics *m = arg;

	/* At most half the cap per turn of the loop: a connection accepted
	 * now is read, in this turn or the next, before enough newer ones
	 * arrive to push it out. */
	for (unsigned i = 0; i < (m->max_conns + 1) / 2; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			int err = errno;

			if (accept_error_is_transient(err))
				return;
			/* Out of descriptors or memory: the connection stays
			 * queued, so the socket stays readable, and retrying at
			 * once would spin the loop. */
			event_del(&m->accept_ev);
			evtimer_add(&m->resume_ev, &m->accept_pause);
			np_logger_log_key(m->log, "metrics-accept", LOG_WARNING,
					  "metrics: cannot accept a connection: %s; not accepting "
					  "for %u ms",
					  strerror(err), m->accept_pause_ms);
			return;
		}
		if (m->nr_conns >= m->max_conns)
			drop_oldest(m);
		conn_open(m, fd);
	}
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct np_metrics *m = arg;

	event_add(&m->accept_ev, NULL);
}

/* A listening socket of our own: a name is not resolved, and a non-loopback
 * address cannot come in through a name. */
static int listen_on(const struct sockaddr_storage *addr, socklen_t addr_len, uint16_t *port)
{
	int one = 1, fd;

	fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)addr, addr_len) < 0 ||
	    listen(fd, NP_METRICS_BACKLOG) < 0) {
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
		     np_metrics_render_fn render, void *data, struct np_logger *log,
		     struct np_metrics **out)
{
	struct sockaddr_storage addr;
	struct np_metrics *m;
	socklen_t addr_len;
	uint16_t port = 0;
	int fd;

	if (listen_addr->family == AF_UNSPEC)
		return -EINVAL;
	addr_len = np_listen_addr_sockaddr(listen_addr, &addr);
	fd = listen_on(&addr, addr_len, &port);
	if (fd < 0)
		return fd;
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	m->base = base;
	m->log = log;
	m->render = render;
	m->data = data;
	m->listen_fd = fd;
	m->port = port;
	TAILQ_INIT(&m->conns);
	m->max_conns = connection_cap(NP_METRICS_MAX_CONNECTIONS);
	m->deadline = ms_to_tv(NP_METRICS_DEADLINE_MS);
	m->accept_pause = ms_to_tv(NP_METRICS_ACCEPT_PAUSE_MS);
	m->accept_pause_ms = NP_METRICS_ACCEPT_PAUSE_MS;
	event_assign(&m->accept_ev, base, fd, EV_READ | EV_PERSIST, on_accept, m);
	evtimer_assign(&m->resume_ev, base, on_resume, m);
	if (event_add(&m->accept_ev, NULL) < 0) {
		np_metrics_free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void np_metrics_set_limits(struct np_metrics *metrics, unsigned max_connections,
			   unsigned deadline_ms, unsigned accept_pause_ms)
{
	if (max_connections)
		metrics->max_conns = connection_cap(max_connections);
	if (deadline_ms)
		metrics->deadline = ms_to_tv(deadline_ms);
	if (accept_pause_ms) {
		metrics->accept_pause = ms_to_tv(accept_pause_ms);
		metrics->accept_pause_ms = accept_pause_ms;
	}
}

uint16_t np_metrics_port(const struct np_metrics *metrics)
{
	return metrics->port;
}

unsigned np_metrics_connections(const struct np_metrics *metrics)
{
	return metrics->nr_conns;
}

void np_metrics_free(struct np_metrics *metrics)
{
	if (!metrics)
		return;
	while (!TAILQ_EMPTY(&metrics->conns))
		conn_close(TAILQ_FIRST(&metrics->conns));
	event_del(&metrics->accept_ev);
	event_del(&metrics->resume_ev);
	close(metrics->listen_fd);
	free(metrics);
}
