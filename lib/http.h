/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * The head of an HTTP/1.x request, as the metrics endpoint needs it: the
 * method, the path and the version. Headers are skipped, not kept: the
 * endpoint answers the same whatever they say, and closes after one answer.
 */
enum np_http_method {
	NP_HTTP_GET,
	NP_HTTP_HEAD,
	NP_HTTP_OTHER, /* a well-formed method the endpoint does not serve */
};

struct np_http_request {
	enum np_http_method method;
	unsigned minor;	  /* HTTP/1.minor */
	const char *path; /* into the buffer parsed; the query ("?...") left out */
	size_t path_len;
	size_t head_len; /* bytes up to and including the blank line */
};

/* Parse the request line and skip the headers of the request at the start of
 * @buf (@len bytes, not NUL-terminated). Lines end in CRLF or a bare LF; empty
 * lines before the request line are skipped. Pure. Returns 0 with @out set,
 * -EAGAIN when the blank line that ends the head is not in @buf yet, or
 * -EBADMSG when what is there cannot be an HTTP/1.x request. */
int np_http_request_parse(const char *buf, size_t len, struct np_http_request *out);
