/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <errno.h>
#include <event2/event.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

/* Keys tracked at once; memory stays bounded whatever callers pass as keys. */
#define NP_LOG_SLOTS 64
#define NP_LOG_LINE_MAX 1024
#define NP_LOG_SAMPLE_MAX 200

struct np_log_slot {
	char *key; /* NULL: free */
	uint64_t window_start;
	unsigned printed;		/* in this window */
	uint64_t suppressed;		/* in this window */
	int worst_priority;		/* most severe suppressed priority */
	char sample[NP_LOG_SAMPLE_MAX]; /* the last suppressed text */
};

struct np_logger {
	FILE *stream;
	enum np_log_format format;
	int max_priority;
	unsigned burst;
	uint64_t interval_ms;
	struct np_log_clock clock;
	struct event *flush_timer; /* NULL until np_logger_attach */
	/* The one past NP_LOG_SLOTS is shared by keys that find no slot. */
	struct np_log_slot slots[NP_LOG_SLOTS + 1];
};

static uint64_t system_monotonic_ms(void *data)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct timespec system_realtime(void *data)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

bool np_log_fd_is_journal(int fd, const char *journal_stream)
{
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (!journal_stream || sscanf(journal_stream, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    journal_stream[end] != '\0')
		return false;
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

int np_logger_new(FILE *stream, enum np_log_format format, struct np_logger **out)
{
	struct np_logger *log = calloc(1, sizeof(*log));

	if (!log)
		return -ENOMEM;
	if (format == NP_LOG_FORMAT_AUTO)
		format = np_log_fd_is_journal(fileno(stream), getenv("JOURNAL_STREAM"))
			     ? NP_LOG_FORMAT_JOURNAL
			     : NP_LOG_FORMAT_PLAIN;
	log->stream = stream;
	log->format = format;
	log->max_priority = LOG_INFO;
	log->burst = NP_LOG_DEFAULT_BURST;
	log->interval_ms = NP_LOG_DEFAULT_INTERVAL_MS;
	log->clock.monotonic_ms = system_monotonic_ms;
	log->clock.realtime = system_realtime;
	*out = log;
	return 0;
}

enum np_log_format np_logger_format(const struct np_logger *log)
{
	return log->format;
}

void np_logger_set_priority(struct np_logger *log, int max_priority)
{
	log->max_priority = max_priority;
}

/* (Re)arm the flush timer for the current interval; off when rate limiting
 * is, since a zero period would spin the loop. */
static int arm_flush_timer(struct np_logger *log)
{
	struct timeval period = {
	    .tv_sec = (time_t)(log->interval_ms / 1000),
	    .tv_usec = (suseconds_t)(log->interval_ms % 1000) * 1000,
	};

	if (!log->flush_timer)
		return 0;
	if (!log->burst || !log->interval_ms)
		return event_del(log->flush_timer) < 0 ? -ENOMEM : 0;
	return event_add(log->flush_timer, &period) < 0 ? -ENOMEM : 0;
}

void np_logger_set_ratelimit(struct np_logger *log, unsigned burst, uint64_t interval_ms)
{
	log->burst = burst;
	log->interval_ms = interval_ms;
	arm_flush_timer(log);
}

static void flush_tick(evutil_socket_t fd, short what, void *arg)
{
	np_logger_flush(arg, false);
}

int np_logger_attach(struct np_logger *log, struct event_base *base)
{
	if (log->flush_timer)
		event_free(log->flush_timer);
	log->flush_timer = event_new(base, -1, EV_PERSIST, flush_tick, log);
	if (!log->flush_timer)
		return -ENOMEM;
	return arm_flush_timer(log);
}

void np_logger_set_clock(struct np_logger *log, const struct np_log_clock *clock)
{
	log->clock.monotonic_ms = clock->monotonic_ms ? clock->monotonic_ms : system_monotonic_ms;
	log->clock.realtime = clock->realtime ? clock->realtime : system_realtime;
	log->clock.data = clock->data;
}

char *np_log_format_count(uint64_t n, char *buf, size_t size)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;

	for (int i = 0; i < len && o + 1 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0 && o + 2 < size)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (size)
		buf[o] = '\0';
	return buf;
}

static const char *priority_name(int priority)
{
	static const char *const names[] = {"emerg",   "alert",	 "crit", "err",
					    "warning", "notice", "info", "debug"};

	return names[priority & 7];
}

/* One message is one line, written with a single fwrite so lines from the
 * library and the program never interleave mid-line. */
static void write_line(struct np_logger *log, int priority, const char *text)
{
	char line[NP_LOG_LINE_MAX + 64];
	size_t len, text_len = strlen(text);

	priority &= 7;
	if (log->format == NP_LOG_FORMAT_JOURNAL) {
		len = (size_t)snprintf(line, sizeof(line), "<%d>", priority);
	} else {
		struct timespec ts = log->clock.realtime(log->clock.data);
		struct tm tm;

		localtime_r(&ts.tv_sec, &tm);
		len = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
		len +=
		    (size_t)snprintf(line + len, sizeof(line) - len,
				     ".%03ld %s: ", ts.tv_nsec / 1000000, priority_name(priority));
	}
	/* A trailing newline is dropped; inner ones would start a line
	 * without the priority prefix, so they become spaces. Other control
	 * bytes (a process may name itself with ESC or CR) are written as
	 * \xNN, so that no name can rewrite the terminal or forge a line. */
	while (text_len > 0 && text[text_len - 1] == '\n')
		text_len--;
	for (size_t i = 0; i < text_len && len < sizeof(line) - 1; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n') {
			line[len++] = ' ';
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			if (len + 4 >= sizeof(line) - 1)
				break;
			len += (size_t)snprintf(line + len, 5, "\\x%02x", c);
		} else {
			line[len++] = (char)c;
		}
	}
	line[len++] = '\n';
	fwrite(line, 1, len, log->stream);
	fflush(log->stream);
}

static void write_summary(struct np_logger *log, struct np_log_slot *slot, uint64_t now)
{
	char count[32], text[NP_LOG_LINE_MAX];
	uint64_t secs = (now - slot->window_start + 999) / 1000;

	if (secs == 0)
		secs = 1;

	snprintf(text, sizeof(text),
		 "... %s similar message%s suppressed in the last %llu s, the last: %s",
		 np_log_format_count(slot->suppressed, count, sizeof(count)),
		 slot->suppressed == 1 ? "" : "s", (unsigned long long)secs, slot->sample);
	write_line(log, slot->worst_priority, text);
	slot->suppressed = 0;
}

/* The slot for @key: its own, a free one, or one whose window ended (its
 * summary is written first). When all are busy in their windows, the key
 * shares the overflow slot, so the output stays bounded however many
 * different keys arrive. */
static struct np_log_slot *find_slot(struct np_logger *log, const char *key, uint64_t now)
{
	struct np_log_slot *spare = NULL;

	for (struct np_log_slot *s = log->slots; s < log->slots + NP_LOG_SLOTS; s++) {
		if (!s->key) {
			if (!spare)
				spare = s;
			continue;
		}
		if (strcmp(s->key, key) == 0)
			return s;
		if (!spare && now - s->window_start >= log->interval_ms)
			spare = s;
	}
	if (!spare)
		return &log->slots[NP_LOG_SLOTS];
	if (spare->suppressed)
		write_summary(log, spare, now);
	free(spare->key);
	memset(spare, 0, sizeof(*spare));
	spare->key = strdup(key);
	if (!spare->key)
		return &log->slots[NP_LOG_SLOTS];
	spare->window_start = now;
	return spare;
}

void np_logger_logv(struct np_logger *log, const char *key, int priority, const char *fmt,
		    va_list args)
{
	char text[NP_LOG_LINE_MAX];
	struct np_log_slot *slot;
	size_t sample_len;
	uint64_t now;

	if (!log || priority > log->max_priority)
		return;
	vsnprintf(text, sizeof(text), fmt, args);
	if (!log->burst) {
		write_line(log, priority, text);
		return;
	}
	now = log->clock.monotonic_ms(log->clock.data);
	slot = find_slot(log, key ? key : fmt, now);
	if (now - slot->window_start >= log->interval_ms) {
		if (slot->suppressed)
			write_summary(log, slot, now);
		slot->window_start = now;
		slot->printed = 0;
	}
	if (slot->printed < log->burst) {
		slot->printed++;
		write_line(log, priority, text);
		return;
	}
	if (!slot->suppressed || priority < slot->worst_priority)
		slot->worst_priority = priority;
	slot->suppressed++;
	/* Truncated on purpose: the summary only needs an example. */
	sample_len = strnlen(text, sizeof(slot->sample) - 1);
	memcpy(slot->sample, text, sample_len);
	slot->sample[sample_len] = '\0';
}

void np_daemon_log_fn(void *data, int priority, const char *fmt, va_list args)
{
	np_logger_logv(data, NULL, priority, fmt, args);
}

void np_logger_log(struct np_logger *log, int priority, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	np_logger_logv(log, NULL, priority, fmt, args);
	va_end(args);
}

void np_logger_log_key(struct np_logger *log, const char *key, int priority, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	np_logger_logv(log, key, priority, fmt, args);
	va_end(args);
}

unsigned np_logger_flush(struct np_logger *log, bool all)
{
	uint64_t now = log->clock.monotonic_ms(log->clock.data);
	unsigned written = 0;

	for (struct np_log_slot *s = log->slots; s <= log->slots + NP_LOG_SLOTS; s++) {
		if (!s->suppressed)
			continue;
		if (!all && now - s->window_start < log->interval_ms)
			continue;
		write_summary(log, s, now);
		/* A new window starts with the summary: the next burst of
		 * this key is again shown in full. */
		s->window_start = now;
		s->printed = 0;
		written++;
	}
	return written;
}

/* libnuma and libevent take a log function with no data pointer. */
static struct np_logger *library_logger;

void np_logger_free(struct np_logger *log)
{
	if (!log)
		return;
	np_logger_flush(log, true);
	if (log->flush_timer)
		event_free(log->flush_timer);
	for (struct np_log_slot *s = log->slots; s < log->slots + NP_LOG_SLOTS; s++)
		free(s->key);
	if (library_logger == log)
		library_logger = NULL;
	free(log);
}

/* libevent's own warnings (an accept(2) that failed, a bad fd): one key for
 * all of them, since libevent repeats the same one as often as its loop
 * turns. */
static void libevent_log(int severity, const char *msg)
{
	static const int priorities[] = {
	    [EVENT_LOG_DEBUG] = LOG_DEBUG,
	    [EVENT_LOG_MSG] = LOG_INFO,
	    [EVENT_LOG_WARN] = LOG_WARNING,
	    [EVENT_LOG_ERR] = LOG_ERR,
	};
	int priority = severity >= EVENT_LOG_DEBUG && severity <= EVENT_LOG_ERR
			   ? priorities[severity]
			   : LOG_ERR;

	if (library_logger)
		np_logger_log_key(library_logger, "libevent", priority, "libevent: %s", msg);
	else
		fprintf(stderr, "libevent: %s\n", msg);
}

void np_logger_route_libraries(struct np_logger *log)
{
	library_logger = log;
	event_set_log_callback(log ? libevent_log : NULL);
}

/* libnuma declares these weak and calls them on failures inside its own
 * functions; these definitions replace its versions, which print to stderr
 * with no priority (and numa_error may exit with numa_exit_on_error set). */
__attribute__((format(printf, 2, 3)))
void numa_warn(int num, char *fmt, ...)
{
	char text[NP_LOG_LINE_MAX];
	va_list args;

	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	if (library_logger)
		np_logger_log_key(library_logger, fmt, LOG_WARNING, "libnuma: %s", text);
	else
		fprintf(stderr, "libnuma: warning: %s\n", text);
}

void numa_error(char *where)
{
	int err = errno;

	if (library_logger)
		np_logger_log_key(library_logger, where, LOG_ERR, "libnuma: %s: %s", where,
				  strerror(err));
	else
		fprintf(stderr, "libnuma: %s: %s\n", where, strerror(err));
	errno = err;
}
