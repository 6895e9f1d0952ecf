/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct np_logger;

/* Where the daemon keeps what a restart must find: the CPU masks it
 * replaced (lib/maskfile.h). The unit's RuntimeDirectory=numaplaced. */
#define NP_RUNTIME_DIR_DEFAULT "/run/numaplaced"

/*
 * Open the runtime directory @path for np_maskfile_save() and _load(),
 * creating it with mode 0700 when it is missing (its parent must exist).
 * It must belong to the effective uid and be writable by no one else: what
 * it holds decides CPU masks of other users' tasks. Returns an O_DIRECTORY
 * fd (close-on-exec) or -errno (-EPERM for a directory that is not ours),
 * and then logs why, naming @path.
 */
int np_runtime_dir_open(const char *path, struct np_logger *log);
