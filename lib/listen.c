/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A port: decimal digits only (leading zeros allowed), at most 65535. */
static bool parse_port(const char *s, uint16_t *port)
{
	unsigned v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > 65535)
			return false;
	}
	*port = (uint16_t)v;
	return true;
}

int np_listen_addr_parse(const char *spec, struct np_listen_addr *out)
{
	struct np_listen_addr a;
	char host[INET6_ADDRSTRLEN];
	const char *host_start = spec, *colon;
	bool bracketed = spec[0] == '[';
	size_t host_len;

	if (bracketed) {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		host_start = spec + 1;
		host_len = (size_t)(close - host_start);
		colon = close + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return -EINVAL;
		host_len = (size_t)(colon - spec);
	}
	if (host_len == 0 || host_len >= sizeof(host))
		return -EINVAL;
	memcpy(host, host_start, host_len);
	host[host_len] = '\0';
	memset(&a, 0, sizeof(a));
	if (!parse_port(colon + 1, &a.port))
		return -EINVAL;
	if (!bracketed && strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");

	if (!bracketed && inet_pton(AF_INET, host, &a.ip.v4) == 1) {
		a.family = AF_INET;
	} else if (bracketed && inet_pton(AF_INET6, host, &a.ip.v6) == 1) {
		a.family = AF_INET6;
		if (IN6_IS_ADDR_V4MAPPED(&a.ip.v6)) {
			struct in_addr v4;

			memcpy(&v4, &a.ip.v6.s6_addr[12], sizeof(v4));
			memset(&a.ip, 0, sizeof(a.ip));
			a.ip.v4 = v4;
			a.family = AF_INET;
		}
	} else {
		return -EINVAL;
	}
	if (a.family == AF_INET ? (ntohl(a.ip.v4.s_addr) >> 24) != 127
				: !IN6_IS_ADDR_LOOPBACK(&a.ip.v6))
		return -EADDRNOTAVAIL;
	*out = a;
	return 0;
}

char *np_listen_addr_format(const struct np_listen_addr *addr, char buf[NP_LISTEN_ADDR_STRLEN])
{
	char ip[INET6_ADDRSTRLEN];

	buf[0] = '\0';
	if (addr->family == AF_INET && inet_ntop(AF_INET, &addr->ip.v4, ip, sizeof(ip)))
		snprintf(buf, NP_LISTEN_ADDR_STRLEN, "%s:%u", ip, addr->port);
	else if (addr->family == AF_INET6 && inet_ntop(AF_INET6, &addr->ip.v6, ip, sizeof(ip)))
		snprintf(buf, NP_LISTEN_ADDR_STRLEN, "[%s]:%u", ip, addr->port);
	return buf;
}

bool np_listen_addr_equal(const struct np_listen_addr *a, const struct np_listen_addr *b)
{
	if (a->family != b->family || a->port != b->port)
		return false;
	if (a->family == AF_INET)
		return a->ip.v4.s_addr == b->ip.v4.s_addr;
	if (a->family == AF_INET6)
		return memcmp(&a->ip.v6, &b->ip.v6, sizeof(a->ip.v6)) == 0;
	return true;
}

socklen_t np_listen_addr_sockaddr(const struct np_listen_addr *addr, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (addr->family == AF_INET6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(addr->port);
		in6->sin6_addr = addr->ip.v6;
		return sizeof(*in6);
	}
	in4->sin_family = AF_INET;
	in4->sin_port = htons(addr->port);
	in4->sin_addr = addr->ip.v4;
	return sizeof(*in4);
}
