/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "control.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

struct conn {
	struct np_control *control;
	struct bufferevent *bev;
	struct event *deadline;
	struct conn *prev, *next;
};

struct np_control {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *accept_pause;
	struct np_logger *log;
	np_control_answer_fn answer;
	void *data;
	struct conn *conns;
	unsigned nr_conns;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	/* The socket file we bound: removed at the end only if it still is. */
	dev_t dev;
	ino_t ino;
};

int np_control_request_parse(const char *buf, size_t len, struct np_control_request *req)
{
	const char *nl = memchr(buf, '\n', len);
	size_t n;

	if (!nl)
		return len < NP_CONTROL_REQUEST_MAX ? -EAGAIN : -EINVAL;
	n = (size_t)(nl - buf);
	if (n + 1 > NP_CONTROL_REQUEST_MAX || n + 1 != len)
		return -EINVAL;
	if (n == 6 && !memcmp(buf, "status", 6)) {
		req->json = false;
		return 0;
	}
	if (n == 11 && !memcmp(buf, "status json", 11)) {
		req->json = true;
		return 0;
	}
	return -EINVAL;
}

static int socket_path(const char *dir, char *path, size_t size)
{
	int n = snprintf(path, size, "%s/%s", dir, NP_CONTROL_SOCKET);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static void conn_free(struct conn *c)
{
	struct np_control *control = c->control;

	if (c->prev)
		c->prev->next = c->next;
	else
		control->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	control->nr_conns--;
	if (c->deadline)
		event_free(c->deadline);
	if (c->bev)
		bufferevent_free(c->bev);
	free(c);
}

static void on_written(struct bufferevent *bev, void *arg)
{
	conn_free(arg);
}

static void on_conn_event(struct bufferevent *bev, short what, void *arg)
{
	/* End of file before a whole request, or an error: nothing to answer. */
	conn_free(arg);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	np_logger_log_key(c->control->log, "control", LOG_DEBUG,
			  "%s: a connection took longer than %d ms: closed", c->control->path,
			  NP_CONTROL_DEADLINE_MS);
	conn_free(c);
}

/* Send @out, then close: reading stops, so the client's end of file cannot
 * cut the answer short. */
static void reply(struct conn *c, struct evbuffer *out)
{
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setcb(c->bev, NULL, on_written, on_conn_event, c);
	if (bufferevent_write_buffer(c->bev, out) < 0)
		conn_free(c);
}

static void on_request(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in);
	const char *buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
	struct np_control_request req;
	struct evbuffer *out, *body;
	int err;

	err = buf ? np_control_request_parse(buf, len, &req) : -ENOMEM;
	if (err == -EAGAIN)
		return;
	out = evbuffer_new();
	body = evbuffer_new();
	if (!out || !body) {
		if (out)
			evbuffer_free(out);
		if (body)
			evbuffer_free(body);
		conn_free(c);
		return;
	}
	if (err == -EINVAL)
		evbuffer_add_printf(out, "error: bad request: expected 'status' or 'status json', "
					 "one line of at most %d bytes\n",
				    NP_CONTROL_REQUEST_MAX);
	else if (!err && (err = c->control->answer(c->control->data, &req, body)) == 0)
		evbuffer_add_printf(out, "ok\n");
	else
		evbuffer_add_printf(out, "error: %s\n",
				    err == -EAGAIN ? "no placement cycle has run yet: try again"
						   : strerror(-err));
	if (!err)
		evbuffer_add_buffer(out, body);
	evbuffer_free(body);
	reply(c, out);
	evbuffer_free(out);
}

/* Refuse a connection with one line, as far as the socket takes it at
 * once: nobody is waited for. */
static void refuse(evutil_socket_t fd, const char *line)
{
	if (send(fd, line, strlen(line), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* The peer left, or its buffer is full: closing says enough. */
	}
	evutil_closesocket(fd);
}

static void on_accept(struct evconnlistener *listener, evutil_socket_t fd,
		      struct sockaddr *addr, int socklen, void *arg)
{
	struct np_control *control = arg;
	struct timeval deadline = {.tv_sec = NP_CONTROL_DEADLINE_MS / 1000,
				   .tv_usec = NP_CONTROL_DEADLINE_MS % 1000 * 1000};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		evutil_closesocket(fd);
		return;
	}
	/* The mode of the socket keeps others out already; this holds when
	 * someone loosens it. */
	if (cred.uid != 0 && cred.uid != geteuid()) {
		np_logger_log_key(control->log, "control", LOG_NOTICE,
				  "%s: refused pid %d of uid %u: only root and uid %u are answered",
				  control->path, (int)cred.pid, (unsigned)cred.uid,
				  (unsigned)geteuid());
		refuse(fd, "error: permission denied: only root and the daemon's user are "
			   "answered\n");
		return;
	}
	if (control->nr_conns >= NP_CONTROL_MAX_CONNECTIONS) {
		np_logger_log_key(control->log, "control", LOG_WARNING,
				  "%s: %d connections open: one more refused", control->path,
				  NP_CONTROL_MAX_CONNECTIONS);
		refuse(fd, "error: busy: too many connections, try again\n");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		evutil_closesocket(fd);
		return;
	}
	c->control = control;
	c->next = control->conns;
	if (c->next)
		c->next->prev = c;
	control->conns = c;
	control->nr_conns++;
	evutil_make_socket_nonblocking(fd);
	c->bev = bufferevent_socket_new(control->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		evutil_closesocket(fd);
		conn_free(c);
		return;
	}
	c->deadline = evtimer_new(control->base, on_deadline, c);
	if (!c->deadline || evtimer_add(c->deadline, &deadline) < 0) {
		conn_free(c);
		return;
	}
	/* Reading stops at the cap: a longer request is refused, not kept. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, NP_CONTROL_REQUEST_MAX);
	bufferevent_setcb(c->bev, on_request, NULL, on_conn_event, c);
	bufferevent_enable(c->bev, EV_READ);
}

static void on_accept_error(struct evconnlistener *listener, void *arg)
{
	struct np_control *control = arg;
	struct timeval pause = {.tv_sec = NP_CONTROL_ACCEPT_PAUSE_MS / 1000,
				.tv_usec = NP_CONTROL_ACCEPT_PAUSE_MS % 1000 * 1000};
	int err = EVUTIL_SOCKET_ERROR();

	np_logger_log_key(control->log, "control-accept", LOG_WARNING,
			  "%s: accepting a connection: %s; not accepting for %d ms", control->path,
			  strerror(err), NP_CONTROL_ACCEPT_PAUSE_MS);
	evconnlistener_disable(listener);
	evtimer_add(control->accept_pause, &pause);
}

static void on_accept_pause_end(evutil_socket_t fd, short what, void *arg)
{
	struct np_control *control = arg;

	evconnlistener_enable(control->listener);
}

static int unix_socket(const char *path, struct sockaddr_un *addr)
{
	*addr = (struct sockaddr_un){.sun_family = AF_UNIX};
	memcpy(addr->sun_path, path, strlen(path) + 1);
	return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

/* Whether a daemon answers on @path: 1 yes, 0 no (nothing there, or a
 * socket nobody listens on, which is removed), or -errno. */
static int probe_and_clear(const char *path, struct np_logger *log)
{
	struct sockaddr_un addr;
	struct stat st;
	int fd, err;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		np_logger_log(log, LOG_ERR, "control socket %s: exists and is not a socket", path);
		return -EEXIST;
	}
	fd = unix_socket(path, &addr);
	if (fd < 0)
		return -errno;
	err = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 ? 1 : -errno;
	close(fd);
	if (err == 1)
		return 1;
	if (err != -ECONNREFUSED)
		return err;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	np_logger_log(log, LOG_INFO, "control socket %s: left by a daemon that is gone: replaced",
		      path);
	return 0;
}

static int listen_at(struct np_control *control)
{
	struct sockaddr_un addr;
	struct stat st;
	mode_t mask;
	int fd, err;

	fd = unix_socket(control->path, &addr);
	if (fd < 0)
		return -errno;
	/* Created 0600 from the start: no moment where others may connect. */
	mask = umask(0177);
	err = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ? -errno : 0;
	umask(mask);
	if (!err && (chmod(control->path, 0600) < 0 || stat(control->path, &st) < 0))
		err = -errno;
	if (!err && listen(fd, 16) < 0)
		err = -errno;
	if (!err && evutil_make_socket_nonblocking(fd) < 0)
		err = -EIO;
	if (err) {
		close(fd);
		return err;
	}
	control->dev = st.st_dev;
	control->ino = st.st_ino;
	return fd;
}

int np_control_start(struct event_base *base, const char *dir, struct np_logger *log,
		     np_control_answer_fn answer, void *data, struct np_control **out)
{
	struct np_control *control = calloc(1, sizeof(*control));
	int fd, err;

	if (!control)
		return -ENOMEM;
	control->base = base;
	control->log = log;
	control->answer = answer;
	control->data = data;
	err = socket_path(dir, control->path, sizeof(control->path));
	if (err) {
		np_logger_log(log, LOG_ERR, "control socket %s/%s: the path is too long", dir,
			      NP_CONTROL_SOCKET);
		free(control);
		return err;
	}
	err = probe_and_clear(control->path, log);
	if (err == 1) {
		np_logger_log(log, LOG_ERR,
			      "control socket %s: a numaplaced daemon is running with runtime "
			      "directory %s: not starting a second one",
			      control->path, dir);
		free(control);
		return -EADDRINUSE;
	}
	fd = err < 0 ? err : listen_at(control);
	if (fd < 0) {
		np_logger_log(log, LOG_ERR, "control socket %s: %s", control->path,
			      strerror(-fd));
		free(control);
		return fd;
	}
	control->accept_pause = evtimer_new(base, on_accept_pause_end, control);
	control->listener = evconnlistener_new(base, on_accept, control,
					       LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (!control->listener || !control->accept_pause) {
		if (control->listener)
			evconnlistener_free(control->listener);
		else
			close(fd);
		if (control->accept_pause)
			event_free(control->accept_pause);
		unlink(control->path);
		free(control);
		return -ENOMEM;
	}
	evconnlistener_set_error_cb(control->listener, on_accept_error);
	*out = control;
	return 0;
}

void np_control_free(struct np_control *control)
{
	struct stat st;

	if (!control)
		return;
	while (control->conns)
		conn_free(control->conns);
	evconnlistener_free(control->listener);
	event_free(control->accept_pause);
	/* Another daemon may have taken the path over since: its socket stays. */
	if (stat(control->path, &st) == 0 && st.st_dev == control->dev &&
	    st.st_ino == control->ino)
		unlink(control->path);
	free(control);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read everything until end of file, waiting at most until @deadline_ms. */
static int read_answer(int fd, int64_t deadline_ms, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int64_t left = deadline_ms - now_ms();
		ssize_t r;

		if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
			free(buf);
			return -ETIMEDOUT;
		}
		if (n == cap) {
			char *bigger = realloc(buf, cap * 2 + 1);

			if (!bigger) {
				free(buf);
				return -ENOMEM;
			}
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int np_control_query(const char *dir, const struct np_control_request *req, FILE *out,
		     char *msg, size_t msg_size)
{
	const char *line = req->json ? "status json\n" : "status\n";
	struct sockaddr_un addr;
	char path[sizeof(addr.sun_path)], *answer = NULL;
	size_t len = 0;
	int fd, err;

	err = socket_path(dir, path, sizeof(path));
	if (err) {
		snprintf(msg, msg_size, "%s/%s: the path is too long", dir, NP_CONTROL_SOCKET);
		return err;
	}
	fd = unix_socket(path, &addr);
	if (fd < 0) {
		err = -errno;
		snprintf(msg, msg_size, "socket: %s", strerror(-err));
		return err;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		err = -errno;
		close(fd);
		if (err == -ENOENT || err == -ECONNREFUSED)
			snprintf(msg, msg_size, "no daemon is running: nothing answers on %s (%s)",
				 path, strerror(-err));
		else
			snprintf(msg, msg_size, "%s: %s", path, strerror(-err));
		return err;
	}
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line) ||
	    shutdown(fd, SHUT_WR) < 0) {
		err = -errno;
		close(fd);
		snprintf(msg, msg_size, "%s: sending the request: %s", path, strerror(-err));
		return err;
	}
	/* The daemon answers between two cycles: a cycle is bounded, but a
	 * busy machine can make it long. */
	err = read_answer(fd, now_ms() + 30000, &answer, &len);
	close(fd);
	if (err) {
		snprintf(msg, msg_size, "%s: reading the answer: %s", path, strerror(-err));
		return err;
	}
	if (len >= 3 && !memcmp(answer, "ok\n", 3)) {
		err = fwrite(answer + 3, 1, len - 3, out) == len - 3 ? 0 : -EIO;
		if (err)
			snprintf(msg, msg_size, "writing the status: %s", strerror(EIO));
	} else {
		char *nl = strchr(answer, '\n');

		if (nl)
			*nl = '\0';
		err = -EREMOTEIO;
		if (!strncmp(answer, "error: ", 7))
			snprintf(msg, msg_size, "%s: the daemon answered: %s", path, answer + 7);
		else
			snprintf(msg, msg_size, "%s: not an answer from numaplaced", path);
	}
	free(answer);
	return err;
}
