/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * np-get: fetch http://127.0.0.1:PORT/PATH once and say how long the answer
 * took, to the tenth of a millisecond (busybox's wget and clock say neither
 * precisely enough for a metrics endpoint's latency). Prints
 * "get STATUS BYTES MS" and the answer's body to --out when given; exits 1
 * when there is no answer within --timeout-ms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "workload.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: np-get [--out FILE] [--timeout-ms N] PORT PATH\n");
}

/* Wait for @fd to be ready for @events until @deadline (monotonic ms). */
static void wait_fd(int fd, short events, double deadline)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	double left = deadline - wl_now_ms();
	int n;

	if (left <= 0)
		wl_die("no answer in time");
	n = poll(&pfd, 1, (int)left + 1);
	if (n < 0)
		wl_die("poll: %s", strerror(errno));
	if (n == 0)
		wl_die("no answer in time");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"out", required_argument, NULL, 'o'},
	    {"timeout-ms", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *out_path = NULL;
	unsigned long timeout_ms = 5000, port;
	struct sockaddr_in addr = {.sin_family = AF_INET};
	char request[512], *answer = NULL, *body;
	size_t len = 0, cap = 0;
	double start, deadline;
	int fd, c, status = 0;

	wl_set_prog("np-get");
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out_path = optarg;
			break;
		case 't':
			timeout_ms = wl_parse_ulong("--timeout-ms", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	port = wl_parse_ulong("PORT", argv[optind]);
	if (port == 0 || port > 65535)
		wl_die("PORT %lu: not a port", port);
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
		 argv[optind + 1]);

	start = wl_now_ms();
	deadline = start + (double)timeout_ms;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		wl_die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (errno != EINPROGRESS)
			wl_die("connect to port %lu: %s", port, strerror(errno));
		wait_fd(fd, POLLOUT, deadline);
	}
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) != (ssize_t)strlen(request))
		wl_die("send: %s", strerror(errno));
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			answer = realloc(answer, cap + 1);
			if (!answer)
				wl_die("out of memory");
		}
		wait_fd(fd, POLLIN, deadline);
		n = recv(fd, answer + len, cap - len, 0);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0)
			wl_die("recv: %s", strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	answer[len] = '\0';
	if (sscanf(answer, "HTTP/1.%*d %d", &status) != 1)
		wl_die("not an HTTP answer");
	body = strstr(answer, "\r\n\r\n");
	body = body ? body + 4 : answer + len;
	if (out_path) {
		FILE *f = fopen(out_path, "w");

		if (!f || fwrite(body, 1, strlen(body), f) != strlen(body) || fclose(f))
			wl_die("%s: %s", out_path, strerror(errno));
	}
	printf("get %d %zu %.1f\n", status, strlen(body), wl_now_ms() - start);
	free(answer);
	return 0;
}
