/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "scheduler.h"
#include "task.h"

/*
 * A trace records what the observation layer saw, scan after scan, so the
 * scheduler can be run again over it on a virtual clock (numaplaced
 * --record FILE, --replay FILE). Text, one record a line, fields separated
 * by one space; only what changed between two scans is written:
 *
 *   numaplaced-trace 1        first line: format and version
 *   hz 100                    USER_HZ of start_ticks and cpu_ticks; before any t
 *   # text                    a comment, anywhere after the first line
 *   t UPTIME_MS               a scan, at this machine uptime (strictly increasing);
 *                             the records up to the next t belong to it
 *   n PID START K RSS_KIB CPU THREADS COMM
 *                             a task listed for the first time: start_ticks, kernel
 *                             thread (0 or 1), RSS, utime+stime ticks, threads, comm
 *   u PID RSS_KIB CPU THREADS a listed task whose numbers changed
 *   x PID                     a task no longer listed: it exited
 *
 * A task is listed at a scan from its n record until its x record; between
 * scans it keeps its last numbers. A pid is reused only after its x. Bytes of
 * a comm below '!' or above '~', and '\', are written as \xHH; a comm has
 * no NUL, so \x00 is an error.
 *
 * The trace holds no numa_maps contents: replay estimates the bytes a read
 * would parse from RSS (NP_TRACE_NUMA_MAPS_*), and cannot decide placements.
 */
#define NP_TRACE_MAGIC "numaplaced-trace"
#define NP_TRACE_VERSION 1

/* numa_maps has one line (about 100 bytes) per VMA. Measured here: a shell
 * (3 MiB RSS) has ~44 VMAs and 4 KiB of numa_maps, python (18 MiB) 18 KiB,
 * qemu (160 MiB) 33 KiB; 4 KiB plus 200 bytes per MiB of RSS is within a
 * factor of two of each. */
#define NP_TRACE_NUMA_MAPS_BASE_BYTES 4096u
#define NP_TRACE_NUMA_MAPS_BYTES_PER_MIB 200u

/* The estimate above. */
uint64_t np_trace_numa_maps_estimate(uint64_t rss_bytes);

enum np_trace_record {
	NP_TRACE_NEW = 'n',
	NP_TRACE_UPDATE = 'u',
	NP_TRACE_EXIT = 'x',
};

struct np_trace_event {
	enum np_trace_record type;
	int pid;
	/* n only */
	uint64_t start_ticks;
	bool kthread;
	char comm[NP_COMM_MAX];
	/* n and u */
	uint64_t rss_bytes;
	uint64_t cpu_ticks;
	unsigned nr_threads;
};

struct np_trace_scan {
	uint64_t uptime_ms;
	size_t first_event; /* index into events */
	size_t nr_events;
};

struct np_trace {
	unsigned hz;
	struct np_trace_scan *scans;
	size_t nr_scans;
	struct np_trace_event *events;
	size_t nr_events;
};

/* Parse a whole trace of @len bytes (pure: no I/O). @name is the file name
 * used in messages. On error returns -EINVAL (-ENOMEM) and sets *@err to a
 * malloc'd "name:line: message" (the first error found); the caller frees
 * it. Besides syntax, the parser checks the records tell a consistent story:
 * times increase, u and x name listed pids, and n does not. A task may start
 * after its scan's uptime: the uptime is read when a scan begins, and a
 * scan of a loaded machine takes a while. */
int np_trace_parse(const char *name, const char *buf, size_t len, struct np_trace **out,
		   char **err);

/* Read and parse a file; an unreadable file is an error naming it. */
int np_trace_load(const char *path, struct np_trace **out, char **err);

/* Free a trace; NULL is accepted. */
void np_trace_free(struct np_trace *trace);

/*
 * The tasks a trace lists, scan by scan. The list is owned by the player:
 * valid until the next step or np_trace_player_free. Tasks carry no details
 * (has_details false) and no last CPU.
 */
struct np_trace_player;

/* A player at the start of @trace (which must outlive it). Returns 0 or
 * -ENOMEM. */
int np_trace_player_new(const struct np_trace *trace, struct np_trace_player **out);

/* Free a player; NULL is accepted. */
void np_trace_player_free(struct np_trace_player *player);

/* Apply the next scan's records. Returns 1 and points *@list at the tasks
 * listed then (age_ms and uptime_ms as at that scan), 0 past the last scan,
 * or -ENOMEM. */
int np_trace_player_step(struct np_trace_player *player, const struct np_task_list **list);

/* The uptime of the next scan, or UINT64_MAX past the last. */
uint64_t np_trace_player_next_uptime(const struct np_trace_player *player);

/* The trace-wide number (order of its n record) of list->tasks[@index] of
 * the list last returned. */
size_t np_trace_player_task_id(const struct np_trace_player *player, unsigned index);

/*
 * Writes a trace, one scan at a time, to a stream the caller opened (and
 * closes after np_trace_writer_free).
 */
struct np_trace_writer;

/* @comment (may be NULL) goes on a # line after the header. Nothing is
 * written until the first scan. Returns 0 or -ENOMEM. */
int np_trace_writer_new(FILE *out, const char *comment, struct np_trace_writer **writer);

/* Append one scan: what changed since the previous one. A scan at the same
 * uptime as the previous (uptime has 10 ms resolution) is left out. Returns
 * 0, -EINVAL (a list without ticks_per_s, a hz change, time going back, a
 * pid listed twice) or -EIO (the stream failed). */
int np_trace_writer_scan(struct np_trace_writer *writer, const struct np_task_list *list);

/* Flush and free (the stream stays open). Returns 0 or -EIO when
 * the last writes failed; NULL is accepted. */
int np_trace_writer_free(struct np_trace_writer *writer);

/* The most ticks a replay plays: 10 million, 116 days at the default
 * tick_ms, where a recorded trace covers hours. */
#define NP_REPLAY_MAX_TICKS 10000000u

/* What running the scheduler over a trace counted. */
struct np_replay_result {
	uint64_t duration_ms; /* first to last scan of the trace */
	uint64_t trace_scans;
	uint64_t ticks;	     /* scheduler ticks (config tick_ms apart) */
	uint64_t tasks;	     /* distinct tasks in the trace */
	uint64_t tasks_read; /* tasks read at least once */
	uint64_t numa_maps_reads;
	uint64_t bytes_parsed;	    /* estimated from RSS */
	uint64_t short_lived_ms;    /* the threshold below */
	uint64_t short_lived;	    /* exited tasks last listed younger than short_lived_ms */
	uint64_t short_lived_read;  /* ... of which read at least once */
	uint64_t short_lived_reads; /* ... reads of them */
	uint64_t verdicts[NP_REASON_SCHED_COUNT];
	/* Placement needs per-node memory, which traces do not hold: these
	 * stay 0 and np_replay_write says so. */
	uint64_t decisions;
	uint64_t migrate_bytes;
};

/*
 * Run the scheduler over @trace with @cfg on a virtual clock starting at the
 * first scan's uptime and ticking every cfg->tick_ms. Each tick plans over the
 * tasks of the latest scan at or before it, and every pick is read (bytes
 * estimated from RSS) with a stable outcome. A task counts as short-lived when
 * it exited with a last listed age below @short_lived_ms. The configuration's
 * filter applies as in the daemon; traces hold no cgroups, so a config with
 * cgroup rules is refused (-EOPNOTSUPP) rather than replayed as if it had
 * none. Every tick is played, so a trace spanning NP_REPLAY_MAX_TICKS ticks
 * or more is refused (-E2BIG) rather than played for days. Returns 0,
 * -EINVAL (tick_ms 0, or a config np_sched_new refuses), -EOPNOTSUPP, -E2BIG
 * or -ENOMEM.
 */
int np_replay_run(const struct np_trace *trace, const struct np_config *cfg,
		  uint64_t short_lived_ms, struct np_replay_result *result);

/* Print a result, one "key value" a line. Returns 0 or -EIO. */
int np_replay_write(const struct np_replay_result *result, FILE *out);
