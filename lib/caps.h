/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "context.h"

/*
 * The two capabilities the daemon works with, and what it cannot do without
 * each. It runs without them (as a user placing that user's own tasks, say),
 * but then says so once at start, naming what it will leave alone, rather
 * than seeing nothing and looking healthy.
 */

/* The calling process's effective capability set, bit N for capability N
 * (capget(2)). Returns 0 or -errno. */
int np_caps_effective(uint64_t *out);

/* Log one warning through @ctx for each capability the daemon needs that
 * @effective lacks, naming what cannot be done without it. Returns how many
 * are missing. */
unsigned np_caps_log_missing(const struct np_ctx *ctx, uint64_t effective);

/* On a context reading the live machine, log the capabilities missing from
 * the process's effective set (np_caps_log_missing); a fixture root needs
 * none. A set that cannot be read is logged too. */
void np_caps_check(const struct np_ctx *ctx);
