/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

int np_runtime_dir_open(const char *path, struct np_logger *log)
{
	struct stat st;
	int fd, err;

	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		err = -errno;
		np_logger_log(log, LOG_ERR, "runtime directory %s: cannot create it: %s", path,
			      strerror(-err));
		return err;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		np_logger_log(log, LOG_ERR, "runtime directory %s: %s", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		np_logger_log(log, LOG_ERR,
			      "runtime directory %s: owned by uid %u with mode %04o, but must be "
			      "owned by uid %u and writable by it alone",
			      path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			      (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}
