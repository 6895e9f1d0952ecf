/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct event_base;

/*
 * The program's log sink. Library messages arrive through np_daemon_log_fn
 * (an np_log_fn); the program's own go through np_logger_log. Each message is
 * rate-limited by a key (the format string unless one is given), so a scan in
 * which thousands of tasks fail the same way prints a few lines and one
 * summary instead of a flood.
 */
struct np_logger;

enum np_log_format {
	NP_LOG_FORMAT_AUTO,    /* journal when the stream is journald's, else plain */
	NP_LOG_FORMAT_PLAIN,   /* "2026-12-02 16:07:46.123 warning: text" */
	NP_LOG_FORMAT_JOURNAL, /* "<4>text": journald takes the priority from the prefix */
};

/* Where the logger takes time from; tests pass fixed clocks. */
struct np_log_clock {
	uint64_t (*monotonic_ms)(void *data);	 /* rate-limit windows */
	struct timespec (*realtime)(void *data); /* plain-format timestamps */
	void *data;
};

#define NP_LOG_DEFAULT_BURST 10		  /* lines per key and window */
#define NP_LOG_DEFAULT_INTERVAL_MS 10000u /* window length */

/* Create a logger writing to @stream (normally stderr). AUTO resolves now,
 * from JOURNAL_STREAM and @stream's file. Everything up to LOG_INFO is
 * written until np_logger_set_priority says otherwise. Returns 0 or -ENOMEM. */
int np_logger_new(FILE *stream, enum np_log_format format, struct np_logger **out);

/* Write every pending suppression summary, then free; NULL is accepted. */
void np_logger_free(struct np_logger *log);

/* The resolved format (never AUTO). */
enum np_log_format np_logger_format(const struct np_logger *log);

/* Drop messages less severe than @max_priority (LOG_ERR .. LOG_DEBUG). */
void np_logger_set_priority(struct np_logger *log, int max_priority);

/* Let @burst lines per key through in each window of @interval_ms; the rest
 * are counted and summarised when the window ends. A @burst of 0 turns rate
 * limiting off. */
void np_logger_set_ratelimit(struct np_logger *log, unsigned burst, uint64_t interval_ms);

/* Replace the clocks (a NULL member keeps the system clock). */
void np_logger_set_clock(struct np_logger *log, const struct np_log_clock *clock);

/* An np_log_fn for np_ctx_set_log_fn: @data is the struct np_logger. */
void np_daemon_log_fn(void *data, int priority, const char *fmt, va_list args)
    __attribute__((format(printf, 3, 0)));

/* Log a message keyed by its format string. */
void np_logger_log(struct np_logger *log, int priority, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Log a message under an explicit rate-limit @key, for messages whose format
 * differs while the cause is one ("move_pages" for every failed move). */
void np_logger_log_key(struct np_logger *log, const char *key, int priority, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

void np_logger_logv(struct np_logger *log, const char *key, int priority, const char *fmt,
		    va_list args)
    __attribute__((format(printf, 4, 0)));

/* Write the summaries of windows that have ended (all pending ones when
 * @all), so a burst that stops still gets its count. Call it from a timer
 * every interval and before exiting. Returns the number of summaries. */
unsigned np_logger_flush(struct np_logger *log, bool all);

/* Run np_logger_flush(@log, false) from a timer on @base every interval, so
 * summaries come out on time. Free the logger before @base. Returns 0 or
 * -ENOMEM. */
int np_logger_attach(struct np_logger *log, struct event_base *base);

/* Send libnuma's numa_warn() and numa_error() messages and libevent's own
 * log (event_set_log_callback) to @log, rate-limited like the program's (NULL:
 * back to stderr). Neither library offers a data pointer, so this is
 * process-wide. */
void np_logger_route_libraries(struct np_logger *log);

/* True when @journal_stream (the JOURNAL_STREAM value, "dev:ino") names the
 * file open on @fd: systemd connected the stream to journald. */
bool np_log_fd_is_journal(int fd, const char *journal_stream);

/* Format @n with thousands separators ("9,990") into @buf; returns @buf. */
char *np_log_format_count(uint64_t n, char *buf, size_t size);
