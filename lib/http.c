/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "http.h"

#include <errno.h>
#include <string.h>

/* RFC 9110 token characters, which a method is made of. */
static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The line starting at @start: its length without the line end, and where
 * the next one starts. False when its LF has not arrived. */
static bool next_line(const char *buf, size_t len, size_t start, size_t *line_len, size_t *next)
{
	const char *lf = memchr(buf + start, '\n', len - start);

	if (!lf)
		return false;
	*next = (size_t)(lf - buf) + 1;
	*line_len = (size_t)(lf - buf) - start;
	if (*line_len && buf[start + *line_len - 1] == '\r')
		(*line_len)--;
	return true;
}

/* "METHOD SP TARGET SP HTTP/1.D", exactly one space between. */
static int parse_request_line(const char *line, size_t len, struct np_http_request *req)
{
	const char *sp1 = memchr(line, ' ', len), *sp2, *query, *end = line + len;

	if (!sp1 || sp1 == line)
		return -EBADMSG;
	for (const char *p = line; p < sp1; p++)
		if (!is_tchar(*p))
			return -EBADMSG;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1)
		return -EBADMSG;
	for (const char *p = sp1 + 1; p < sp2; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return -EBADMSG;
	if (end - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || sp2[8] < '0' ||
	    sp2[8] > '9')
		return -EBADMSG;
	if ((size_t)(sp1 - line) == 3 && memcmp(line, "GET", 3) == 0)
		req->method = NP_HTTP_GET;
	else if ((size_t)(sp1 - line) == 4 && memcmp(line, "HEAD", 4) == 0)
		req->method = NP_HTTP_HEAD;
	else
		req->method = NP_HTTP_OTHER;
	req->minor = (unsigned)(sp2[8] - '0');
	req->path = sp1 + 1;
	query = memchr(req->path, '?', (size_t)(sp2 - req->path));
	req->path_len = (size_t)((query ? query : sp2) - req->path);
	/* A query with no path before it is none of HTTP's request forms. */
	return req->path_len ? 0 : -EBADMSG;
}

int np_http_request_parse(const char *buf, size_t len, struct np_http_request *out)
{
	struct np_http_request req;
	size_t pos = 0, line_len, next;
	int err;

	do {
		if (!next_line(buf, len, pos, &line_len, &next))
			return -EAGAIN;
		if (line_len)
			break;
		pos = next;
	} while (1);
	/* A request line can be judged before its headers arrive: a client
	 * that sends something else is told so at once. */
	err = parse_request_line(buf + pos, line_len, &req);
	if (err)
		return err;
	for (pos = next; next_line(buf, len, pos, &line_len, &next); pos = next) {
		if (line_len == 0) {
			req.head_len = next;
			*out = req;
			return 0;
		}
		/* Headers are not needed, but a NUL in one is no HTTP. */
		if (memchr(buf + pos, '\0', line_len))
			return -EBADMSG;
	}
	return -EAGAIN;
}
