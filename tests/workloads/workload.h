/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared pieces of the test workloads: option values, placing memory on a
 * node and touching it. Workloads are test programs, so a bad argument or a
 * failed system call ends the program with a message naming it.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Largest node or CPU number a list may name. */
#define WL_MAX_IDS 1024

/* How memory is placed on its node. */
enum wl_policy {
	WL_POLICY_BIND,      /* mbind(MPOL_BIND): only that node */
	WL_POLICY_PREFERRED, /* mbind(MPOL_PREFERRED): that node first */
	WL_POLICY_LOCAL,     /* no policy: first touch decides */
	WL_POLICY_BIND_ONCE, /* MPOL_BIND for the first touch, then no policy */
};

/* Print "PROG: message" to stderr and exit with status 1. */
void wl_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Set the program name used in messages. */
void wl_set_prog(const char *name);

/* Parse a non-negative decimal number for option @opt; dies on bad input. */
unsigned long wl_parse_ulong(const char *opt, const char *arg);

/* Parse a list like "0,2-3" into @ids (at most WL_MAX_IDS entries, in the
 * order given); returns the count. Dies on bad input. */
size_t wl_parse_list(const char *opt, const char *arg, int *ids);

/* Parse "bind", "preferred", "local" or "bind-once". Dies on anything else. */
enum wl_policy wl_parse_policy(const char *arg);

/* Milliseconds on the monotonic clock. */
double wl_now_ms(void);

/* Map @bytes of anonymous memory and apply @policy for @node to it (node < 0
 * or WL_POLICY_LOCAL: no policy). Pages are not touched yet. Dies on error. */
void *wl_map_on_node(size_t bytes, int node, enum wl_policy policy);

/* Apply @policy for @node to [mem, mem + bytes), page-aligned (node < 0 or
 * WL_POLICY_LOCAL: nothing). Pages already in are not moved. Dies on error. */
void wl_place_on_node(void *mem, size_t bytes, int node, enum wl_policy policy);

/* Drop the memory policy of [mem, mem + bytes): its pages stay where they
 * are, free to be moved. Dies on error. */
void wl_drop_policy(void *mem, size_t bytes);

/* Write one byte in every page of [mem, mem + bytes): faults the pages in on
 * the first pass and keeps them in use afterwards. */
void wl_touch(void *mem, size_t bytes);

/* Pin the calling thread to @cpu. Dies on error. */
void wl_pin_to_cpu(int cpu);
