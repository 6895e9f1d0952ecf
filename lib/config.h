/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "listen.h"

/*
 * The configuration file: flat "key = value" lines of up to 4096 bytes.
 * Every key, its default and its range are documented in the shipped
 * conf/numaplaced.conf and in numaplaced.conf(5); the key table in config.c
 * is the one place the code defines them.
 */

#define NP_CONFIG_DEFAULT_PATH "/etc/numaplaced/numaplaced.conf"

/* Largest pid the kernel can hand out (PID_MAX_LIMIT on 64-bit). */
#define NP_CONFIG_PID_MAX 4194304

enum np_affinity_mode {
	NP_AFFINITY_NEVER,    /* never touch CPU affinity: memory moves to the threads */
	NP_AFFINITY_UNPINNED, /* tasks nobody pinned get a home node for threads and memory */
};

enum np_thread_homes_mode {
	NP_THREAD_HOMES_NO,  /* a task spread over nodes: its threads go where the kernel runs them */
	NP_THREAD_HOMES_YES, /* each busy thread a node, its own memory moved there */
};

enum np_kernel_balancing_mode {
	NP_KBAL_DEFER,	/* kernel.numa_balancing on: report only */
	NP_KBAL_IGNORE, /* act regardless */
};

struct np_strv {
	char **v;
	size_t n;
};

/* Free the strings and the array; @sv reads as empty after. */
void np_strv_free(struct np_strv *sv);

/* Replace @dst (empty, or owning its strings) with a copy of @src. Returns 0,
 * or -ENOMEM with @dst unchanged. */
int np_strv_copy(struct np_strv *dst, const struct np_strv *src);

/* The effective configuration: one field per key, of the same name
 * (defaults: np_config_init). */
struct np_config {
	uint64_t scan_delay_ms;		    /* no look at a task younger than this */
	uint64_t scan_period_min_ms;	    /* a task's own period between looks */
	uint64_t scan_period_max_ms;	    /* starts at min and doubles up to max */
	uint64_t tick_ms;		    /* scheduler tick */
	uint64_t scan_budget_mb;	    /* MiB of RSS whose numa_maps one tick reads */
	uint64_t min_rss_mb;		    /* smaller tasks are skipped */
	unsigned min_cpu_percent;	    /* CPU use since last look, % of one CPU */
	unsigned run_sample_hz;		    /* samples a second of which process runs; 0: off */
	unsigned locality_target_percent;   /* a task this local is left alone */
	unsigned node_mem_headroom_percent; /* free memory a target node keeps after a move */
	unsigned hysteresis_periods;	    /* no decision flips back within this many periods */
	uint64_t migrate_rate_mb_s;	    /* global page migration rate */
	uint64_t max_migrate_mb_per_scan;   /* per task and scan */
	unsigned migrate_threads;	    /* move_pages calls in flight at once on one task */
	unsigned migrate_tasks;		    /* tasks whose pages move at once */
	enum np_affinity_mode affinity;
	enum np_thread_homes_mode thread_homes;
	enum np_kernel_balancing_mode kernel_balancing;
	struct np_strv include_comm; /* fnmatch(3) globs; empty = all */
	struct np_strv exclude_comm;
	struct np_strv include_cgroup; /* cgroup path prefixes; empty = all */
	struct np_strv exclude_cgroup;
	int *exclude_pid;
	size_t nr_exclude_pid;
	int log_level;			      /* syslog priority: err|warning|notice|info|debug */
	struct np_listen_addr metrics_listen; /* family AF_UNSPEC: off */
};

/* Fill @cfg with the defaults (no allocation: the default lists are empty). */
void np_config_init(struct np_config *cfg);

/* Free what @cfg owns and reset it to the defaults; safe to call twice. */
void np_config_free(struct np_config *cfg);

/* Make @dst a deep copy of @src, so that @src may be freed or parsed over
 * (a reload replaces the daemon's config while the engine keeps its own).
 * @dst is overwritten, not freed first: it must own nothing. Returns 0, or
 * -ENOMEM with @dst holding the defaults. */
int np_config_copy(struct np_config *dst, const struct np_config *src);

/* True when @a and @b hold the same settings (what np_config_write would
 * print for them is identical). */
bool np_config_equal(const struct np_config *a, const struct np_config *b);

/* Errors, each one line "file:line: message", in line order. Start from a
 * zeroed struct; functions append to it. */
struct np_config_errors {
	char **msg;
	size_t n;
};

/* Free the messages and leave @errs empty, ready for reuse. */
void np_config_errors_free(struct np_config_errors *errs);

/* Parse a whole config from a buffer (pure: no I/O). @name is the file name
 * used in messages. @cfg must hold a config (np_config_init or an earlier
 * parse). On success it is replaced by the defaults overlaid with the
 * buffer's settings, so a key removed from the file goes back to its
 * default, and 0 is returned. On any error, every error found is appended to
 * @errs, @cfg is left untouched, and -EINVAL is returned: a file is applied
 * whole or not at all. -ENOMEM if memory runs out. */
int np_config_parse(const char *name, const char *buf, size_t len, struct np_config *cfg,
		    struct np_config_errors *errs);

/* Read and parse a file, as np_config_parse. A missing or unreadable file
 * is one error naming it, and the read's -errno is returned. */
int np_config_load(const char *path, struct np_config *cfg, struct np_config_errors *errs);

/* Write the effective configuration, normalised: every key, one per line, in
 * the documented order; the output parses again to the same config.
 * Returns 0 or -EIO. */
int np_config_write(const struct np_config *cfg, FILE *out);
