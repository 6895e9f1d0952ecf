/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * The address the metrics endpoint listens on (metrics_listen). The config
 * parses it once, and the daemon binds what the config holds, so what
 * `numaplaced -n` accepts is what the endpoint can bind.
 */
struct np_listen_addr {
	int family;    /* AF_INET or AF_INET6; AF_UNSPEC (0): none, the endpoint is off */
	uint16_t port; /* 0: the kernel picks a free one */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} ip;
};

/* "[ffff:...:255.255.255.255]:65535" and a NUL. */
#define NP_LISTEN_ADDR_STRLEN (INET6_ADDRSTRLEN + 8)

/* Parse "127.0.0.1:9464", "[::1]:9464" or "localhost:9464" (127.0.0.1); the
 * port is decimal, 0..65535. Only loopback addresses (127.0.0.0/8, ::1) are
 * taken: the endpoint has no authentication. An IPv4-mapped address
 * ("[::ffff:127.0.0.1]:9464") is the IPv4 address it maps, since an IPv6
 * socket that takes only IPv6, as the endpoint's does, cannot bind it.
 * Pure. Returns 0, -EINVAL (not HOST:PORT) or -EADDRNOTAVAIL (not
 * loopback); @out is set only on success. */
int np_listen_addr_parse(const char *spec, struct np_listen_addr *out);

/* The normalised text of @addr ("127.0.0.1:9464", "[::1]:9464"), which
 * parses back to it; "" for none. Returns @buf. */
char *np_listen_addr_format(const struct np_listen_addr *addr, char buf[NP_LISTEN_ADDR_STRLEN]);

/* True when @a and @b name the same address and port (or both none). */
bool np_listen_addr_equal(const struct np_listen_addr *a, const struct np_listen_addr *b);

/* Fill @ss with @addr (which must not be none) for bind(2); returns its
 * length. */
socklen_t np_listen_addr_sockaddr(const struct np_listen_addr *addr, struct sockaddr_storage *ss);
