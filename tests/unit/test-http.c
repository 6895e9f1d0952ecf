/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "http.h"

#include <errno.h>

static int parse(const char *text, struct np_http_request *req)
{
	return np_http_request_parse(text, strlen(text), req);
}

static void test_requests(void)
{
	struct np_http_request req;
	const char *get = "GET /metrics?name=x HTTP/1.1\r\nHost: localhost\r\n\r\nrest";

	CHECK_INT(parse(get, &req), 0);
	CHECK_INT(req.method, NP_HTTP_GET);
	CHECK_INT(req.minor, 1);
	CHECK_INT(req.path_len, strlen("/metrics"));
	CHECK(strncmp(req.path, "/metrics", req.path_len) == 0);
	CHECK_INT(req.head_len, strlen(get) - strlen("rest"));

	/* Bare LFs, no headers, an empty line first, HEAD, HTTP/1.0. */
	CHECK_INT(parse("\r\nHEAD / HTTP/1.0\n\n", &req), 0);
	CHECK_INT(req.method, NP_HTTP_HEAD);
	CHECK_INT(req.minor, 0);
	CHECK_INT(req.path_len, 1);
	CHECK_INT(req.head_len, strlen("\r\nHEAD / HTTP/1.0\n\n"));

	/* A method the endpoint does not serve is still a request. */
	CHECK_INT(parse("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &req), 0);
	CHECK_INT(req.method, NP_HTTP_OTHER);
	CHECK_INT(parse("GETX /metrics HTTP/1.1\r\n\r\n", &req), 0);
	CHECK_INT(req.method, NP_HTTP_OTHER);
}

static void test_incomplete(void)
{
	const char *full = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n";
	struct np_http_request req = {.minor = 7};

	/* Every prefix is incomplete, and leaves @req alone. */
	for (size_t len = 0; len < strlen(full); len++)
		CHECK_INT(np_http_request_parse(full, len, &req), -EAGAIN);
	CHECK_INT(req.minor, 7);
	CHECK_INT(parse("\r\n\r\n\r\n", &req), -EAGAIN);
	CHECK_INT(parse(full, &req), 0);
}

static void test_bad(void)
{
	static const char *const bad[] = {
	    "GET /metrics\r\n\r\n",		 /* HTTP/0.9 */
	    "GET /metrics HTTP/2.0\r\n\r\n",	 /* not 1.x */
	    "GET /metrics HTTP/1.1x\r\n\r\n",	 /* trailing */
	    "GET /metrics HTTP/1.\r\n\r\n",	 /* no minor */
	    "GET  /metrics HTTP/1.1\r\n\r\n",	 /* two spaces */
	    " GET /metrics HTTP/1.1\r\n\r\n",	 /* no method */
	    "GE(T /metrics HTTP/1.1\r\n\r\n",	 /* not a token */
	    "GET /met\x01rics HTTP/1.1\r\n\r\n", /* control byte in the target */
	    "\x16\x03\x01\x02\xfc\x01 x\n",	 /* TLS */
	    "GET ?metrics HTTP/1.1\r\n\r\n",	 /* a query and no path */
	};
	struct np_http_request req;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = parse(bad[i], &req);

		if (err != -EBADMSG)
			fprintf(stderr, "case %zu: %d\n", i, err);
		CHECK_INT(err, -EBADMSG);
	}
	/* Judged on the request line, before the headers end. */
	CHECK_INT(parse("GET /metrics HTTP/2.0\r\nHost: x\r\n", &req), -EBADMSG);
	/* A NUL inside a header. */
	CHECK_INT(np_http_request_parse("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 26, &req), -EBADMSG);
}

int main(void)
{
	test_requests();
	test_incomplete();
	test_bad();
	return check_done();
}
