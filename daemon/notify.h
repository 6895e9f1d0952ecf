/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

struct event_base;

/*
 * The service manager protocol (sd_notify(3)). Every call is a no-op that
 * returns 0 when NOTIFY_SOCKET is unset, so the foreground and test runs need
 * no special case. Calls return > 0 when the message was sent, 0 when there
 * is no manager to tell, -errno when sending failed.
 */

/* Start-up is complete: the first configuration is loaded and the loop is
 * about to run (READY=1). Also ends a reload started by np_notify_reloading. */
int np_notify_ready(void);

/* A reload (SIGHUP) begins (RELOADING=1); call np_notify_ready when the new
 * configuration is in place or was rejected. */
int np_notify_reloading(void);

/* Shutdown begins (STOPPING=1). */
int np_notify_stopping(void);

/* One line of state shown by "systemctl status" (STATUS=...). */
int np_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The watchdog interval the manager expects (WatchdogSec=) in microseconds,
 * or 0 when the watchdog is off for this process. */
uint64_t np_notify_watchdog_usec(void);

/* Tell the manager the loop is alive (WATCHDOG=1). */
int np_notify_watchdog(void);

/* Ping the watchdog from a timer on @base at half its interval, so a stuck
 * loop stops the pings and the manager restarts the service. Does nothing
 * when the watchdog is off. Returns 0 or -ENOMEM; free with
 * np_notify_watchdog_stop. */
struct np_watchdog;
int np_notify_watchdog_start(struct event_base *base, struct np_watchdog **out);
void np_notify_watchdog_stop(struct np_watchdog *wd);
