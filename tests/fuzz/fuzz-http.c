/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_http_request_parse(), the metrics endpoint's
 * request head parser: any bytes, as a client may send them. Beyond not
 * crashing: only 0, -EAGAIN or -EBADMSG; on success the path lies inside
 * the head and holds no blank, CR, LF or '?', and the head ends with a
 * line end; a head that parsed parses the same with more bytes after it,
 * and a prefix shorter than the head never parses.
 */
#include "http.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_http_request req, again;
	int err = np_http_request_parse(buf, size, &req);
	char *longer;

	if (err == -EAGAIN || err == -EBADMSG)
		return 0;
	if (err != 0)
		abort();
	if (req.head_len == 0 || req.head_len > size || buf[req.head_len - 1] != '\n')
		abort();
	if (req.path < buf || req.path_len == 0 || req.path + req.path_len > buf + req.head_len)
		abort();
	for (size_t i = 0; i < req.path_len; i++)
		if (strchr(" \t\r\n?", req.path[i]) && req.path[i])
			abort();
	if (req.method != NP_HTTP_GET && req.method != NP_HTTP_HEAD && req.method != NP_HTTP_OTHER)
		abort();
	/* Bytes after the head (a body, a pipelined request) change nothing. */
	longer = malloc(size + 16);
	if (!longer)
		return 0;
	memcpy(longer, buf, size);
	memcpy(longer + size, "GET / HTTP/1.1\r\n", 16);
	if (np_http_request_parse(longer, size + 16, &again) != 0 ||
	    again.head_len != req.head_len || again.method != req.method ||
	    again.minor != req.minor || again.path_len != req.path_len ||
	    memcmp(again.path - longer + buf, req.path, req.path_len) != 0)
		abort();
	free(longer);
	/* A head cut short is incomplete, or refused, never a request. */
	if (np_http_request_parse(buf, req.head_len - 1, &again) == 0)
		abort();
	return 0;
}
