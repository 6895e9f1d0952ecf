/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "notify.h"

#include <errno.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>
#include <time.h>

struct np_watchdog {
	struct event *timer;
};

int np_notify_ready(void)
{
	return sd_notify(0, "READY=1");
}

int np_notify_reloading(void)
{
	struct timespec ts;

	/* MONOTONIC_USEC lets newer managers match the reload to this
	 * message; older ones ignore the field. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
			  (unsigned long long)ts.tv_sec * 1000000 +
			      (unsigned long long)ts.tv_nsec / 1000);
}

int np_notify_stopping(void)
{
	return sd_notify(0, "STOPPING=1");
}

int np_notify_status(const char *fmt, ...)
{
	char text[256];
	va_list args;

	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	return sd_notifyf(0, "STATUS=%s", text);
}

uint64_t np_notify_watchdog_usec(void)
{
	uint64_t usec = 0;

	/* Also checks WATCHDOG_PID, so a child that inherited the
	 * environment does not ping for its parent. */
	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}

int np_notify_watchdog(void)
{
	return sd_notify(0, "WATCHDOG=1");
}

static void watchdog_tick(evutil_socket_t fd, short what, void *arg)
{
	np_notify_watchdog();
}

int np_notify_watchdog_start(struct event_base *base, struct np_watchdog **out)
{
	uint64_t usec = np_notify_watchdog_usec() / 2;
	struct timeval period = {.tv_sec = usec / 1000000, .tv_usec = usec % 1000000};
	struct np_watchdog *wd;

	*out = NULL;
	if (!usec)
		return 0;
	wd = calloc(1, sizeof(*wd));
	if (!wd)
		return -ENOMEM;
	wd->timer = event_new(base, -1, EV_PERSIST, watchdog_tick, wd);
	if (!wd->timer || event_add(wd->timer, &period) < 0) {
		np_notify_watchdog_stop(wd);
		return -ENOMEM;
	}
	*out = wd;
	return 0;
}

void np_notify_watchdog_stop(struct np_watchdog *wd)
{
	if (!wd)
		return;
	if (wd->timer)
		event_free(wd->timer);
	free(wd);
}
