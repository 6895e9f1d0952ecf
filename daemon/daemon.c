/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon: one libevent loop. The placement cycle is a timer; signals are
 * events on the same loop, so a reload or a stop never lands in the middle of
 * a cycle (a migration batch in flight is finished, and accounted, first).
 */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>

#include "caps.h"
#include "control.h"
#include "engine.h"
#include "maskfile.h"
#include "report.h"
#include "runtime.h"
#include "trace.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"

/*
 * SIGTERM and SIGINT must be seen where the loop does not run too: by a
 * migration's calls, which ask between batches on the engine's mover
 * thread, and inside a cycle, between actions. So these two get a
 * handler of our own that raises a flag (the one piece of global state:
 * a signal handler has nowhere else to put it) and wakes the loop through a
 * pipe; libevent handles the other signals.
 */
static volatile sig_atomic_t stop_signal;
static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int sig)
{
	int saved = errno;

	stop_signal = sig;
	if (write(stop_pipe[1], "", 1) < 0) {
		/* Full or closed: the flag alone will do. */
	}
	errno = saved;
}

static bool stop_requested(void *data)
{
	return stop_signal != 0;
}

struct daemon {
	const struct np_daemon_options *opts;
	struct np_config cfg;
	struct np_logger *log;
	struct np_ctx *ctx;
	struct np_clock *clock;
	struct np_engine *engine;
	struct event_base *base;
	struct event *tick;
	struct event *sig_hup, *sig_usr1, *stop_event;
	struct event *move_done;	/* the engine's move off the loop ended */
	struct event *split;		/* a sample of threads' writes is due a split */
	struct event *task_events;	/* the process connector has events */
	struct event *task_events_rest; /* ends the pause after a drain */
	bool task_events_unwatched;	/* a re-arm failed (logged once) */
	struct np_watchdog *watchdog;
	struct np_metrics *metrics;
	struct np_control *control;
	FILE *record;
	struct np_trace_writer *recorder;
	/* The runtime directory (its control socket, and, unless this is a
	 * dry run or a root other than the live machine's, its masks file)
	 * and what the masks file holds. */
	int runtime_fd;
	bool keeps_masks;
	struct np_saved_mask *saved;
	size_t nr_saved;
	/* What the last STATUS= told the service manager: it is told again
	 * only when that changes, not at every cycle (each message wakes
	 * the manager). */
	bool status_told;
	unsigned status_tracked;
	uint64_t status_reads;
	int exit_status;
};

#define MASKS_FILE "masks"

static bool same_masks(const struct np_saved_mask *a, size_t na, const struct np_saved_mask *b,
		       size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].pid != b[i].pid || a[i].start_ticks != b[i].start_ticks ||
		    !np_bitmap_equal(&a[i].before, &b[i].before) ||
		    !np_bitmap_equal(&a[i].narrowed, &b[i].narrowed))
			return false;
	return true;
}

/* Keep the masks file equal to what the engine has narrowed, so that a
 * restart after a crash finds them; written only when they changed. */
static void save_masks(struct daemon *d)
{
	struct np_saved_mask *now;
	size_t n;
	int err;

	if (!d->keeps_masks || np_engine_saved_masks(d->engine, &now, &n) < 0)
		return;
	if (same_masks(now, n, d->saved, d->nr_saved)) {
		free(now);
		return;
	}
	err = np_maskfile_save(d->runtime_fd, MASKS_FILE, now, n);
	if (err) {
		np_logger_log(d->log, LOG_WARNING,
			      "%s/%s: cannot save the CPU masks to give back: %s",
			      d->opts->runtime_dir, MASKS_FILE, strerror(-err));
		free(now);
		return;
	}
	free(d->saved);
	d->saved = now;
	d->nr_saved = n;
}

/* The status a --status asks for, as the report's text or JSON. */
static int answer_status(void *data, const struct np_control_request *req, struct evbuffer *out)
{
	struct daemon *d = data;
	struct np_snapshot *snap;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	err = np_engine_status(d->engine, &snap);
	if (err)
		return err;
	f = open_memstream(&text, &len);
	if (!f) {
		np_snapshot_free(snap);
		return -ENOMEM;
	}
	err = req->json ? np_report_write_json(snap, f) : np_report_write_text(snap, f);
	if (fclose(f) != 0 && !err)
		err = -ENOMEM;
	np_snapshot_free(snap);
	if (!err && evbuffer_add(out, text, len) < 0)
		err = -ENOMEM;
	free(text);
	return err;
}

/* The control socket comes first: a daemon already running on this
 * runtime directory keeps it, its socket and its masks file. A masks file
 * left by a run that did not stop cleanly: its masks go back before
 * anything else happens. An unreadable file is set aside with the reason
 * in the log, not left to block every start. */
static int open_runtime_dir(struct daemon *d)
{
	struct np_saved_mask *v = NULL;
	unsigned bad_line = 0, restored = 0;
	size_t n = 0;
	int err;

	d->runtime_fd = np_runtime_dir_open(d->opts->runtime_dir, d->log);
	if (d->runtime_fd < 0)
		return d->runtime_fd;
	err =
	    np_control_start(d->base, d->opts->runtime_dir, d->log, answer_status, d, &d->control);
	if (err)
		return err;
	d->keeps_masks = !d->opts->dry_run && np_ctx_is_live(d->ctx);
	if (!d->keeps_masks)
		return 0;
	err = np_maskfile_load(d->runtime_fd, MASKS_FILE, &v, &n, &bad_line);
	if (err) {
		np_logger_log(d->log, LOG_ERR, "%s/%s:%u: %s; set aside as %s.bad",
			      d->opts->runtime_dir, MASKS_FILE, bad_line, np_file_strerror(err),
			      MASKS_FILE);
		renameat(d->runtime_fd, MASKS_FILE, d->runtime_fd, MASKS_FILE ".bad");
		return 0;
	}
	if (n) {
		np_engine_give_back_saved(d->engine, v, n, &restored);
		np_logger_log(d->log, LOG_NOTICE,
			      "%s/%s: an earlier run left %zu narrowed task%s; %u given back",
			      d->opts->runtime_dir, MASKS_FILE, n, n == 1 ? "" : "s", restored);
		err = np_maskfile_save(d->runtime_fd, MASKS_FILE, NULL, 0);
		if (err)
			np_logger_log(d->log, LOG_WARNING, "%s/%s: %s", d->opts->runtime_dir,
				      MASKS_FILE, strerror(-err));
	}
	free(v);
	return 0;
}

static int record_scan(void *data, const struct np_task_list *list)
{
	struct daemon *d = data;
	int err = np_trace_writer_scan(d->recorder, list);

	if (err)
		np_logger_log(d->log, LOG_ERR, "--record %s: %s", d->opts->record_path,
			      strerror(-err));
	return err;
}

static void schedule_tick(struct daemon *d)
{
	struct timeval tv = {
	    .tv_sec = (time_t)(d->cfg.tick_ms / 1000),
	    .tv_usec = (suseconds_t)(d->cfg.tick_ms % 1000 * 1000),
	};

	evtimer_add(d->tick, &tv);
}

/* A move that was made is news (notice); one that changed nothing is said
 * once, when it first does, and then only at debug level while the engine
 * backs off from it. */
static void log_decisions(struct daemon *d, const struct np_snapshot *snap)
{
	for (unsigned i = 0; i < snap->nr_tasks; i++) {
		const struct np_snap_task *e = &snap->tasks[i];
		const struct np_action *a = &e->action;
		int prio = LOG_DEBUG;
		const char *after = "";

		if (!e->has_decision || (a->kind != NP_ACTION_MOVE && a->kind != NP_ACTION_SPREAD))
			continue;
		if (e->outcome == NP_SNAP_DONE || e->outcome == NP_SNAP_STARTED) {
			prio = LOG_NOTICE;
		} else if (e->outcome == NP_SNAP_NO_EFFECT) {
			prio = e->first_no_effect ? LOG_NOTICE : LOG_DEBUG;
			after = " (moved nothing: backing off)";
		} else if (e->outcome == NP_SNAP_DEFERRED) {
			after = " (deferred)";
		} else if (e->outcome == NP_SNAP_FAILED) {
			after = " (failed)";
		}
		/* "pid 42 (db): would move misplaced: ...": the verb carries the
		 * dry run, so the line reads, and greps, as what would happen. */
		np_logger_log_key(d->log, "decision", prio, "pid %d (%s): %s%s %s: %s%s",
				  e->task.pid, e->task.comm, d->opts->dry_run ? "would " : "",
				  np_action_kind_name(a->kind), np_reason_name(a->reason),
				  a->reason_text, after);
	}
}

static uint64_t elapsed_ns(const struct timespec *from, const struct timespec *to)
{
	return (uint64_t)((to->tv_sec - from->tv_sec) * 1000000000LL + to->tv_nsec - from->tv_nsec);
}

static void tell_status(struct daemon *d)
{
	unsigned tracked = np_engine_tracked(d->engine);
	uint64_t reads = np_stats_scans(np_engine_stats(d->engine));

	if (d->status_told && tracked == d->status_tracked && reads == d->status_reads)
		return;
	np_notify_status("%u tasks tracked, %llu numa_maps reads%s", tracked,
			 (unsigned long long)reads, d->opts->dry_run ? ", dry run" : "");
	d->status_told = true;
	d->status_tracked = tracked;
	d->status_reads = reads;
}

/* What the start cost, beside what the summary says the cycles cost: in
 * the foreground the loader's work included; detached, since the fork. */
static void log_start_cpu(const struct daemon *d)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		np_logger_log(d->log, LOG_DEBUG, "start: %.1f ms of CPU",
			      (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
				  (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
}

/* At debug, where a cycle that scanned spent its CPU. */
static void log_tick_cpu(const struct daemon *d, uint64_t cpu_ns)
{
	const struct np_engine_tick_cpu *c = np_engine_tick_cpu(d->engine);
	uint64_t engine_ns = c->observe_ns + c->read_ns + c->decide_ns;

	if (!c->timed || c->quiet)
		return;
	np_logger_log(d->log, LOG_DEBUG,
		      "cycle: %.1f ms of CPU: %.1f observing, %.1f reading tasks, "
		      "%.1f deciding and acting, %.1f logging and saving",
		      (double)cpu_ns / 1e6, (double)c->observe_ns / 1e6, (double)c->read_ns / 1e6,
		      (double)c->decide_ns / 1e6,
		      (double)(cpu_ns > engine_ns ? cpu_ns - engine_ns : 0) / 1e6);
}

/* A task's first sample of its threads' writes is split halfway: by this
 * timer when that falls before the next tick, else by the tick's look. */
static void schedule_split(struct daemon *d)
{
	int64_t in_ms = np_engine_split_in_ms(d->engine);
	struct timeval tv;

	if (in_ms < 0 || (uint64_t)in_ms >= d->cfg.tick_ms) {
		evtimer_del(d->split);
		return;
	}
	tv.tv_sec = (time_t)(in_ms / 1000);
	tv.tv_usec = (suseconds_t)(in_ms % 1000 * 1000);
	/* From now, not from when the loop woke for the tick. */
	event_base_update_cache_time(d->base);
	evtimer_add(d->split, &tv);
}

static void on_split(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	np_engine_split_samples(d->engine);
	schedule_split(d);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct np_snapshot *snap = NULL;
	struct timespec t0, t1, cpu0, cpu1;
	int err;

	/* The cycle is the whole handler, its logging included: how long
	 * the loop waits, and what it costs. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = np_engine_tick(d->engine, &snap);

	if (err) {
		np_logger_log(d->log, LOG_ERR, "placement cycle failed: %s", strerror(-err));
	} else {
		log_decisions(d, snap);
		np_snapshot_free(snap);
	}
	save_masks(d);
	tell_status(d);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	np_stats_add_tick(np_engine_stats(d->engine), elapsed_ns(&t0, &t1),
			  elapsed_ns(&cpu0, &cpu1));
	if (!err)
		log_tick_cpu(d, elapsed_ns(&cpu0, &cpu1));
	schedule_tick(d);
	schedule_split(d);
}

static void on_move_done(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	/* A tick may have ended those moves and started others since the fd
	 * was found readable: never wait for calls here. */
	np_engine_finish_moves(d->engine, false);
}

/*
 * How long the loop leaves the connector's socket alone after draining it.
 * Taking each event as it came woke the loop for every fork, exec and exit:
 * beside 1,000 processes of 40 ms in the 2-node guest that was ~60 wakeups
 * a second and most of the daemon's CPU time. A drain at most every 250 ms
 * (and the one each scan makes) keeps the socket's 8 MiB, some 2,500 short
 * processes, from filling unless more than ~10,000 processes a second
 * start; a drain that left more than it takes at once (4,096 messages) is
 * followed by the next one without the rest. Past that the kernel drops
 * events and the next scan lists /proc.
 */
#define TASK_EVENTS_REST_MS 250

/* Watch the connector's socket again; if that fails, only the ticks
 * drain it, and the log says so once. */
static void watch_task_events(struct daemon *d)
{
	if (event_add(d->task_events, NULL) && !d->task_events_unwatched) {
		d->task_events_unwatched = true;
		np_logger_log(d->log, LOG_WARNING,
			      "process events: cannot watch the socket; taken at each cycle only");
	}
}

static void on_task_events(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	const struct timeval rest = {0, TASK_EVENTS_REST_MS * 1000};
	int err = np_engine_take_task_events(d->engine);

	/* A socket that fails for good would wake the loop without end: the
	 * ticks list /proc as they did before it. */
	if (err < 0) {
		np_logger_log(
		    d->log, LOG_WARNING,
		    "process events: %s; no longer followed, /proc is listed at every cycle",
		    strerror(-err));
		event_free(d->task_events);
		d->task_events = NULL;
		np_engine_stop_task_events(d->engine);
		return;
	}
	/* Watched again once the rest is over, or at once when more wait; a
	 * timer that cannot be added leaves the socket watched, as before the
	 * rest was there. */
	if (err == 1 || evtimer_add(d->task_events_rest, &rest))
		watch_task_events(d);
}

static void on_task_events_rest(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	if (d->task_events)
		watch_task_events(d);
}

static int render_metrics(void *data, struct evbuffer *out)
{
	struct daemon *d = data;
	struct np_stats *stats = np_engine_stats(d->engine);
	char *buf;
	size_t len;
	int err;

	np_stats_update_numastat(stats, d->ctx);
	err = np_stats_format_prometheus(stats, &buf, &len);
	if (err)
		return err;
	err = evbuffer_add(out, buf, len) ? -ENOMEM : 0;
	free(buf);
	return err;
}

/* Start the metrics endpoint on @addr; logs why not. */
static int start_metrics(struct daemon *d, const struct np_listen_addr *addr,
			 struct np_metrics **out)
{
	char text[NP_LISTEN_ADDR_STRLEN];
	int err = np_metrics_start(d->base, addr, render_metrics, d, d->log, out);

	if (err)
		np_logger_log(d->log, LOG_ERR, "metrics_listen %s: %s",
			      np_listen_addr_format(addr, text), strerror(-err));
	else
		np_logger_log(d->log, LOG_INFO, "metrics on port %u",
			      (unsigned)np_metrics_port(*out));
	return err;
}

/* Move the endpoint to @cfg's metrics_listen if that changed. The new one
 * listens before the old one closes, so a failure (the port is taken, say)
 * leaves the old one serving: @cfg's metrics_listen is then set back to the
 * address in force, and -errno returned. */
static int rebind_metrics(struct daemon *d, struct np_config *cfg)
{
	struct np_metrics *metrics = NULL;
	int err;

	if (np_listen_addr_equal(&cfg->metrics_listen, &d->cfg.metrics_listen))
		return 0;
	if (cfg->metrics_listen.family != AF_UNSPEC) {
		err = start_metrics(d, &cfg->metrics_listen, &metrics);
		if (err) {
			cfg->metrics_listen = d->cfg.metrics_listen;
			return err;
		}
	} else {
		np_logger_log(d->log, LOG_INFO, "metrics endpoint closed");
	}
	np_metrics_free(d->metrics);
	d->metrics = metrics;
	return 0;
}

/*
 * Every setting is applied at once, none needs a restart: the engine takes
 * the scheduler's, the policy's and the actuator's, and the daemon holds
 * the rest (tick_ms, log_level, metrics_listen). A file with errors changes
 * nothing; a metrics endpoint that cannot listen on its new address is the
 * one setting that can stay behind, and the log then says so.
 */
static void reload(struct daemon *d)
{
	struct np_config_errors errs = {0};
	struct np_config cfg;
	bool new_tick;
	int err;

	np_notify_reloading();
	if (!d->opts->config_path) {
		np_logger_log(d->log, LOG_NOTICE, "reload: no configuration file, nothing to do");
		np_notify_ready();
		return;
	}
	np_config_init(&cfg);
	err = np_config_load(d->opts->config_path, &cfg, &errs);
	for (size_t i = 0; i < errs.n; i++)
		np_logger_log(d->log, LOG_ERR, "%s", errs.msg[i]);
	np_config_errors_free(&errs);
	if (!err)
		err = np_engine_set_config(d->engine, &cfg);
	if (err) {
		np_logger_log(d->log, LOG_ERR,
			      "reload: %s rejected, the running configuration stays",
			      d->opts->config_path);
		np_config_free(&cfg);
		np_notify_ready();
		return;
	}
	err = rebind_metrics(d, &cfg);
	new_tick = cfg.tick_ms != d->cfg.tick_ms;
	np_config_free(&d->cfg);
	d->cfg = cfg;
	np_logger_set_priority(d->log, d->opts->verbose ? LOG_DEBUG : d->cfg.log_level);
	np_ctx_set_log_priority(d->ctx, d->opts->verbose ? LOG_DEBUG : d->cfg.log_level);
	/* The tick already set would otherwise wait out the old period. */
	if (new_tick) {
		evtimer_del(d->tick);
		schedule_tick(d);
	}
	if (err && d->metrics)
		np_logger_log(d->log, LOG_WARNING,
			      "reload: %s applied, except metrics_listen: metrics stay on port %u",
			      d->opts->config_path, (unsigned)np_metrics_port(d->metrics));
	else if (err)
		np_logger_log(d->log, LOG_WARNING,
			      "reload: %s applied, except metrics_listen: metrics stay off",
			      d->opts->config_path);
	else
		np_logger_log(d->log, LOG_NOTICE, "reload: %s applied", d->opts->config_path);
	np_notify_ready();
}

static void summary(struct daemon *d)
{
	const struct np_stats *stats = np_engine_stats(d->engine);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	/* The reads are the stats' (the "scans" line): one counter, the same
	 * the metrics show. */
	fprintf(f, "state: %u tasks tracked, %llu cycles, %llu of them quiet\n",
		np_engine_tracked(d->engine), (unsigned long long)np_stats_ticks(stats),
		(unsigned long long)np_stats_quiet_ticks(stats));
	np_stats_write_summary(stats, f);
	fclose(f);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		np_logger_log_key(d->log, "summary", LOG_INFO, "%s", line);
	free(text);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	switch (sig) {
	case SIGHUP:
		reload(d);
		break;
	case SIGUSR1:
		summary(d);
		break;
	default:
		break;
	}
}

/* What the daemon narrowed goes back to what it was: a stopped daemon
 * places nothing, so it keeps nothing placed. */
static void give_back(struct daemon *d)
{
	unsigned restored = 0, left = 0;

	np_engine_give_back_all(d->engine, &restored, &left);
	save_masks(d);
	if (restored || left)
		np_logger_log(d->log, left ? LOG_WARNING : LOG_NOTICE,
			      "gave %u task%s the CPU mask it had before%s", restored,
			      restored == 1 ? "" : "s",
			      left ? "; some could not be given back" : "");
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	char buf[16];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	np_logger_log(d->log, LOG_NOTICE, "%s: stopping", strsignal((int)stop_signal));
	np_notify_stopping();
	event_base_loopbreak(d->base);
}

static int catch_stop_signals(struct daemon *d)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};

	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return -errno;
	/* A client that leaves before its answer is written must cost a
	 * failed write (EPIPE), not the daemon: libevent writes with writev,
	 * which has no MSG_NOSIGNAL. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -errno;
	d->stop_event = event_new(d->base, stop_pipe[0], EV_READ | EV_PERSIST, on_stop, d);
	return d->stop_event && event_add(d->stop_event, NULL) == 0 ? 0 : -ENOMEM;
}

static int add_signal(struct daemon *d, struct event **ev, int sig)
{
	*ev = evsignal_new(d->base, sig, on_signal, d);
	return *ev && evsignal_add(*ev, NULL) == 0 ? 0 : -ENOMEM;
}

static int setup(struct daemon *d)
{
	struct np_engine_params params = {
	    .dry_run = d->opts->dry_run,
	    .should_stop = stop_requested,
	    .moves_off_loop = true,
	    .task_events = true,
	    .run_samples = true,
	};
	int err;

	err = np_ctx_new(d->opts->root, &d->ctx);
	if (err) {
		np_logger_log(d->log, LOG_ERR, "%s: %s", d->opts->root, strerror(-err));
		return err;
	}
	np_ctx_set_log_fn(d->ctx, np_daemon_log_fn, d->log);
	np_ctx_set_log_priority(d->ctx, d->opts->verbose ? LOG_DEBUG : d->cfg.log_level);
	np_caps_check(d->ctx);
	err = np_clock_new_monotonic(&d->clock);
	if (err)
		return err;
	params.ctx = d->ctx;
	params.clock = d->clock;
	err = np_engine_new(&params, &d->cfg, &d->engine);
	if (err) {
		np_logger_log(d->log, LOG_ERR, "cannot start: %s", strerror(-err));
		return err;
	}
	d->base = event_base_new();
	if (!d->base)
		return -ENOMEM;
	err = open_runtime_dir(d);
	if (err)
		return err;
	if (d->opts->record_path) {
		d->record = fopen(d->opts->record_path, "we");
		if (!d->record) {
			err = -errno;
			np_logger_log(d->log, LOG_ERR, "--record %s: %s", d->opts->record_path,
				      strerror(-err));
			return err;
		}
		err = np_trace_writer_new(d->record, "recorded by numaplaced " NP_VERSION,
					  &d->recorder);
		if (err)
			return err;
		np_engine_set_observer(d->engine, record_scan, d);
	}
	d->tick = evtimer_new(d->base, on_tick, d);
	d->split = evtimer_new(d->base, on_split, d);
	if (!d->tick || !d->split || np_logger_attach(d->log, d->base))
		return -ENOMEM;
	/* Pages move while the loop ticks, serves metrics and hears SIGTERM;
	 * a dry run has nothing to wait for. */
	if (np_engine_move_fd(d->engine) >= 0) {
		d->move_done = event_new(d->base, np_engine_move_fd(d->engine),
					 EV_READ | EV_PERSIST, on_move_done, d);
		if (!d->move_done || event_add(d->move_done, NULL))
			return -ENOMEM;
	}
	/* Events are taken between ticks, at most every TASK_EVENTS_REST_MS,
	 * so that a fork storm between two ticks does not overflow the
	 * socket. */
	if (np_engine_task_events_fd(d->engine) >= 0) {
		d->task_events = event_new(d->base, np_engine_task_events_fd(d->engine), EV_READ,
					   on_task_events, d);
		d->task_events_rest = evtimer_new(d->base, on_task_events_rest, d);
		if (!d->task_events || !d->task_events_rest || event_add(d->task_events, NULL))
			return -ENOMEM;
	}
	if (add_signal(d, &d->sig_hup, SIGHUP) || add_signal(d, &d->sig_usr1, SIGUSR1))
		return -ENOMEM;
	err = catch_stop_signals(d);
	if (err)
		return err;
	if (d->cfg.metrics_listen.family != AF_UNSPEC) {
		err = start_metrics(d, &d->cfg.metrics_listen, &d->metrics);
		if (err)
			return err;
	}
	err = np_notify_watchdog_start(d->base, &d->watchdog);
	if (err)
		return err;
	schedule_tick(d);
	return 0;
}

static void teardown(struct daemon *d)
{
	np_notify_watchdog_stop(d->watchdog);
	np_metrics_free(d->metrics);
	np_control_free(d->control);
	if (d->tick)
		event_free(d->tick);
	struct event *events[] = {d->sig_hup,	  d->sig_usr1, d->stop_event,	   d->move_done,
				  d->task_events, d->split,    d->task_events_rest};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (events[i])
			event_free(events[i]);
	for (int i = 0; i < 2; i++) {
		if (stop_pipe[i] >= 0)
			close(stop_pipe[i]);
		stop_pipe[i] = -1;
	}
	/* The logger's timer lives on the base: the logger goes first. */
	np_logger_route_libraries(NULL);
	np_logger_free(d->log);
	d->log = NULL;
	if (d->base)
		event_base_free(d->base);
	np_engine_free(d->engine);
	if (d->runtime_fd >= 0)
		close(d->runtime_fd);
	free(d->saved);
	if (d->recorder && np_trace_writer_free(d->recorder))
		d->exit_status = EXIT_FAILURE;
	if (d->record && fclose(d->record))
		d->exit_status = EXIT_FAILURE;
	np_clock_free(d->clock);
	np_ctx_free(d->ctx);
	np_config_free(&d->cfg);
}

/*
 * Leave the terminal: the parent waits until the daemon has started (or
 * failed to), so a bad start still gives a non-zero exit to whoever ran it.
 * stderr is kept for the log. Returns the fd to write the start-up byte to in
 * the daemon, or -errno; the parent never returns.
 */
static int detach(void)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		char c;
		ssize_t n;

		close(fds[1]);
		do
			n = read(fds[0], &c, 1);
		while (n < 0 && errno == EINTR);
		_exit(n == 1 ? EXIT_SUCCESS : EXIT_FAILURE);
	}
	close(fds[0]);
	if (setsid() < 0 || chdir("/") < 0)
		return -errno;
	/* A second fork: a session leader could acquire a terminal again. */
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(EXIT_SUCCESS);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	return fds[1];
}

int np_daemon_run(const struct np_daemon_options *opts, struct np_config *cfg)
{
	struct daemon d = {
	    .opts = opts, .cfg = *cfg, .runtime_fd = -1, .exit_status = EXIT_SUCCESS};
	int err;

	int ready_fd = -1;

	err = np_logger_new(stderr, NP_LOG_FORMAT_AUTO, &d.log);
	if (err) {
		np_config_free(&d.cfg);
		return EXIT_FAILURE;
	}
	np_logger_set_priority(d.log, opts->verbose ? LOG_DEBUG : d.cfg.log_level);
	np_logger_route_libraries(d.log);
	if (!opts->foreground) {
		ready_fd = detach();
		if (ready_fd < 0)
			np_logger_log(d.log, LOG_ERR, "cannot detach: %s", strerror(-ready_fd));
	}
	err = ready_fd < 0 && !opts->foreground ? ready_fd : setup(&d);
	if (err) {
		d.exit_status = EXIT_FAILURE;
	} else {
		np_logger_log(d.log, LOG_NOTICE, "started%s: tick %llu ms, scan delay %llu ms",
			      opts->dry_run ? " (dry run: nothing will be changed)" : "",
			      (unsigned long long)d.cfg.tick_ms,
			      (unsigned long long)d.cfg.scan_delay_ms);
		log_start_cpu(&d);
		np_notify_ready();
		if (ready_fd >= 0) {
			if (write(ready_fd, "", 1) < 0)
				np_logger_log(d.log, LOG_WARNING, "telling the parent: %s",
					      strerror(errno));
			close(ready_fd);
			ready_fd = -1;
		}
		if (event_base_dispatch(d.base) < 0)
			d.exit_status = EXIT_FAILURE;
		give_back(&d);
	}
	if (ready_fd >= 0)
		close(ready_fd);
	teardown(&d);
	return d.exit_status;
}
