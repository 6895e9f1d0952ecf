/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_listen_addr_parse(): the input up to its first
 * NUL is a metrics_listen value. Accepted: a loopback IPv4 or IPv6 address
 * that formats to a text which parses back to the same address and formats
 * the same again (the normalised form `numaplaced -nv` prints). Refused:
 * -EINVAL or -EADDRNOTAVAIL, and the output untouched.
 */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct np_listen_addr a, b, untouched;
	char text[NP_LISTEN_ADDR_STRLEN], text2[NP_LISTEN_ADDR_STRLEN];
	char *spec = strndup((const char *)data, size);
	int err;

	if (!spec)
		return 0;
	memset(&a, 0xa5, sizeof(a));
	untouched = a;
	err = np_listen_addr_parse(spec, &a);
	if (err) {
		if ((err != -EINVAL && err != -EADDRNOTAVAIL) || memcmp(&a, &untouched, sizeof(a)))
			abort();
		free(spec);
		return 0;
	}
	if (a.family == AF_INET) {
		if ((ntohl(a.ip.v4.s_addr) >> 24) != 127)
			abort();
	} else if (a.family != AF_INET6 || !IN6_IS_ADDR_LOOPBACK(&a.ip.v6)) {
		abort();
	}
	np_listen_addr_format(&a, text);
	if (strlen(text) == 0 || strlen(text) >= NP_LISTEN_ADDR_STRLEN)
		abort();
	if (np_listen_addr_parse(text, &b) != 0 || !np_listen_addr_equal(&a, &b))
		abort();
	np_listen_addr_format(&b, text2);
	if (strcmp(text, text2) != 0)
		abort();
	free(spec);
	return 0;
}
