/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "control.h"

#include <errno.h>

static int parse(const char *s, struct np_control_request *req)
{
	return np_control_request_parse(s, strlen(s), req);
}

/* One line, one of two requests, under the cap; a partial line waits. */
static void test_request(void)
{
	struct np_control_request req = {.json = true};
	char big[NP_CONTROL_REQUEST_MAX + 8];

	CHECK_INT(parse("status\n", &req), 0);
	CHECK(!req.json);
	CHECK_INT(parse("status json\n", &req), 0);
	CHECK(req.json);
	CHECK_INT(parse("", &req), -EAGAIN);
	CHECK_INT(parse("stat", &req), -EAGAIN);
	CHECK_INT(parse("status", &req), -EAGAIN);
	CHECK_INT(parse("status\r\n", &req), -EINVAL);
	CHECK_INT(parse("status  json\n", &req), -EINVAL);
	CHECK_INT(parse("status json \n", &req), -EINVAL);
	CHECK_INT(parse("STATUS\n", &req), -EINVAL);
	CHECK_INT(parse("\n", &req), -EINVAL);
	/* Anything after the line is a second request: refused. */
	CHECK_INT(parse("status\nstatus\n", &req), -EINVAL);
	CHECK_INT(np_control_request_parse("status\0\n", 8, &req), -EINVAL);
	/* No newline within the cap: refused, not waited for. */
	memset(big, 's', sizeof(big));
	CHECK_INT(np_control_request_parse(big, NP_CONTROL_REQUEST_MAX - 1, &req), -EAGAIN);
	CHECK_INT(np_control_request_parse(big, NP_CONTROL_REQUEST_MAX, &req), -EINVAL);
	CHECK_INT(np_control_request_parse(big, sizeof(big), &req), -EINVAL);
}

int main(void)
{
	test_request();
	return check_done();
}
