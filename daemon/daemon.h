/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "config.h"

struct np_daemon_options {
	const char *root;        /* NULL: the live machine */
	const char *config_path; /* NULL: the built-in defaults (no file to reload) */
	bool dry_run;            /* decide and log, change nothing */
	bool foreground;         /* stay attached to the terminal (systemd runs it so) */
	bool verbose;            /* debug messages */
	const char *record_path; /* write a trace of every observation here */
	const char *runtime_dir; /* what a restart must find (np_runtime_dir_open) */
};

/* Run the daemon until SIGTERM or SIGINT, with @cfg (taken over, freed at
 * exit) as the first configuration. Returns the process exit status. */
int np_daemon_run(const struct np_daemon_options *opts, struct np_config *cfg);
