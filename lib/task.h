/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "context.h"
#include "topology.h"

#define NP_COMM_MAX 64

/* PF_KTHREAD and PF_NO_SETAFFINITY from include/linux/sched.h. */
#define NP_PF_KTHREAD 0x00200000u
#define NP_PF_NO_SETAFFINITY 0x04000000u

/* The fields of /proc/PID/stat the daemon uses (proc(5) numbering). */
struct np_stat {
	int pid;		/* 1 */
	char comm[NP_COMM_MAX]; /* 2, without the parentheses; may hold ' ', ')' and '\n' */
	char state;		/* 3 */
	int ppid;		/* 4 */
	unsigned long flags;	/* 9 */
	uint64_t utime, stime;	/* 14, 15: clock ticks */
	uint64_t cutime, cstime; /* 16, 17: of its children it waited for */
	long nr_threads;	/* 20 */
	uint64_t start_ticks;	/* 22: clock ticks after boot */
	uint64_t rss_pages;	/* 24 */
	int processor;		/* 39: CPU last run on */
	unsigned bad_field;	/* on -EINVAL: the field that is wrong or missing */
};

/* Parse a stat line of @len bytes (pure; the buffer need not end in NUL and
 * nothing past @len is read). The comm runs from the first '(' to the last
 * ')' and is cut to NP_COMM_MAX - 1 bytes. Every field up to 39 must be a
 * decimal integer (the state a single character). Returns 0 or -EINVAL, with
 * out->bad_field set to the proc(5) number of the first bad field. */
int np_stat_parse(const char *buf, size_t len, struct np_stat *out);

/* The fields of /proc/PID/status the daemon uses. */
struct np_status {
	uint64_t vm_rss_bytes; /* VmRSS; 0 for kernel threads (no line) */
	int threads;
	struct np_bitmap cpus_allowed;	/* Cpus_allowed_list */
	struct np_nodeset mems_allowed; /* Mems_allowed_list */
	bool has_cpus_allowed, has_mems_allowed;
	unsigned bad_line; /* on -EINVAL: 1-based number of the bad line */
};

/* Parse status (pure; @len bytes, no NUL needed). Unknown lines are ignored;
 * a known line with a bad value is -EINVAL with out->bad_line set. */
int np_status_parse(const char *buf, size_t len, struct np_status *out);

/* The Tgid line of a status (pure): its thread group's leader, or -EINVAL
 * when there is no such line or its value is not a pid. Nothing else of
 * the file is judged. */
int np_status_tgid(const char *buf, size_t len);

struct np_thread {
	int tid;
	int last_cpu;
	uint64_t cpu_ticks;
	uint64_t wait_ns; /* time runnable and waiting for a CPU (schedstat) */
};

/* A thread's schedstat ("run wait slices", pure): its time on a CPU and
 * its time runnable on a run queue, waiting for one, in ns. -EINVAL, with
 * neither set, when the line is not three counts. */
int np_schedstat_parse(const char *buf, size_t len, uint64_t *run_ns, uint64_t *wait_ns);

/* One process (thread group) as seen by one scan. (pid, start_ticks) is its
 * identity: a pid alone is reused by the kernel. */
struct np_task {
	int pid;
	uint64_t start_ticks;
	int ppid; /* its parent's pid (0: none, or not known, as in a replay) */
	char comm[NP_COMM_MAX];
	char state;
	unsigned long flags;
	bool kthread;
	uint64_t age_ms;
	uint64_t cpu_ticks; /* utime + stime of all threads */
	/* cutime + cstime: what the children it waited for used, so far. A
	 * task that starts processes which run and end (a launcher, a shell,
	 * a build) shows it here, however short they lived. */
	uint64_t child_cpu_ticks;
	unsigned nr_threads;
	int last_cpu;
	uint64_t rss_bytes; /* stat's rss at the scan; status' VmRSS after details */
	/* Nothing of it was read by this scan: the fields above are the last
	 * read's (np_task_source_set_keep), but for age_ms, brought up to
	 * date. False for a record kept as unchanged, which is as good as a
	 * read (stat_unchanged). */
	bool stat_kept;
	bool stat_unchanged;
	/* Its thread group was checked this scan (see np_task_source
	 * below): in a scan without a listing, new to the source and named
	 * by an event, or another process under a pid it knew (its status
	 * read too); in any scan, one read by libproc2, as our own read could
	 * not be made (another inode than listed, a read refused). */
	bool stat_identified;

	/* Filled by np_task_read_details(); until then has_details is false.
	 * The masks come last: a scan zeroes only what is before them, so
	 * they hold whatever the slot held until details are read (which
	 * clears them first): read them only with has_details. */
	bool has_details;
	char *cgroup; /* the unified (0::) cgroup path, or NULL */
	struct np_thread *threads;
	unsigned nr_thread_samples;
	/* The read asked for the threads' waits, and every thread read had
	 * its schedstat (a kernel with CONFIG_SCHED_INFO): each thread's
	 * wait_ns, with its cpu_ticks, is what it would have used with CPUs
	 * enough. */
	bool has_wait;
	/* Some thread may run on other CPUs than the main thread's
	 * cpus_allowed: someone (its user, or the program itself) pinned
	 * threads one by one. */
	bool thread_masks_differ;
	struct np_bitmap cpus_allowed;
	struct np_nodeset mems_allowed;
	/* Its cgroup's cpuset.cpus.effective and cpuset.mems.effective, hard
	 * bounds set by whoever owns the cgroup (kubelet, a container
	 * runtime, systemd); empty: unknown (no cgroup v2 cpuset), then the
	 * online CPUs and nodes bound it. */
	struct np_bitmap cpuset_cpus;
	struct np_nodeset cpuset_mems;
};

struct np_task_list {
	struct np_task *tasks;
	unsigned nr;
	unsigned cap;
	uint64_t uptime_ms;    /* the machine's uptime at the scan */
	unsigned ticks_per_s;  /* USER_HZ */
	unsigned nr_vanished;  /* tasks dropped because they exited mid-read */
	unsigned nr_kept;      /* tasks whose last record stood in (stat_kept) */
	unsigned nr_unchanged; /* tasks whose last record stood in as current */
	bool listed_proc;      /* /proc was listed (not: the process connector's events) */
};

/*
 * Where tasks come from. The source lists root/proc itself and reads each
 * listed process's stat. A pid this scan's listing named (readdir lists no
 * threads), or the same process again (the start time of its last read),
 * is read with one read of its stat and our own np_stat_parse. On the live
 * machine (root "/"), in a scan without a listing, a pid new to the source
 * that only an event named, or a known pid now of another start time, is
 * read with its status too, through the same directory: a pid a thread has
 * taken since the event is not read as a process (its Tgid is another's).
 * libproc2's pids API, what procps itself trusts to parse /proc, gets a
 * listed pid whose directory is not the inode listed and one our read was
 * refused (it leaves out what it cannot read either). A libproc2 select
 * does fixed work however few pids it reads (two fresh mappings,
 * /proc/uptime) and reads each pid's status before its stat: in the test
 * guest 0.28-0.36 ms of CPU a pid in a select of 73-75, 0.45-0.61 ms in a
 * select of one, 0.16 ms a process for this source's listing scan
 * (tests/bench/bench-procread); in the daemon, where a select came once
 * in a while and cold, 16 ms for one pid. libproc2 reads the real /proc only, so
 * under a fixture root every read is ours: one interface, two readers, and
 * the tests exercise the parser the fixture reader shares with details
 * reading.
 *
 * Reading every task's stat is what an idle daemon spends its time on
 * (~15 us a task): with a keep callback set, a task listed at the last scan
 * under the same /proc entry (same pid, same inode) keeps the record read
 * then when the callback says its figures are not needed yet, and only the
 * others are read.
 */
struct np_task_source;

int np_task_source_new(struct np_ctx *ctx, struct np_task_source **out);
void np_task_source_free(struct np_task_source *src);

/* Whether the last record of (@pid, @start_ticks) may stand in for a read
 * this scan: no (read it), yes (stat_kept: its figures are old), or yes,
 * and it is as good as a read (the task has not run since, so nothing in
 * its stat changed but what the scan brings up to date: its age). A scan
 * asks in ascending (pid, start_ticks) order. */
enum np_task_keep {
	NP_TASK_READ,
	NP_TASK_KEEP,
	NP_TASK_KEEP_UNCHANGED,
};
typedef enum np_task_keep (*np_task_keep_fn)(void *data, int pid, uint64_t start_ticks);

/* Ask @keep (NULL: read every task) at each scan; @data is passed on. */
void np_task_source_set_keep(struct np_task_source *src, np_task_keep_fn keep, void *data);

struct np_proc_events;

/* Follow the process connector (lib/procevents.h; the source takes @events
 * over and closes it, NULL: none): a scan then lists /proc only when
 * @resync_ms of uptime have passed since the last listing, when events
 * were lost, and at the first scan; the others take the last scan's
 * processes and the ones that changed since (read, whatever the keep
 * callback says: a new process, an exec, a rename, an exit). */
void np_task_source_use_events(struct np_task_source *src, struct np_proc_events *events,
			       uint64_t resync_ms);
/* Close the connector (its socket failed): every scan lists /proc. */
void np_task_source_stop_events(struct np_task_source *src);
/* For a test that compares libproc2's figures with ours: read the pids
 * that only events named through libproc2 (on the live machine). */
void np_task_source_read_named_by_libproc2(struct np_task_source *src, bool on);
/* A new @resync_ms (a reload); the next scan lists /proc. */
void np_task_source_set_resync(struct np_task_source *src, uint64_t resync_ms);

/* With the connector, a process that events name and the last scan did not
 * list is left out of the scans until @delay_ms have passed since the
 * later of its first event's stamp (its fork's, for a process born since
 * the connector was followed) and the last scan, then read: a process that
 * lives less than the delay is never read, and one that exits before its
 * first read is forgotten. The stamps are CLOCK_MONOTONIC's, the waits are
 * on the uptime clock: one born after a resume, before the scan after it,
 * counts as older by the suspend. A listing of /proc lists every process,
 * young or not. 0 (the default): read at once. */
void np_task_source_set_first_read_delay(struct np_task_source *src, uint64_t delay_ms);

/* The connector's socket (-1: none), for a caller that drains it as events
 * arrive with np_task_source_take_events (a scan drains it too), so that
 * the socket's buffer does not fill between scans. Returns 0, 1 when one
 * call's worth was taken and more wait (call again soon), or -errno (the
 * socket failed: stop following it); lost events are not an error (the
 * next scan lists /proc). */
int np_task_source_events_fd(const struct np_task_source *src);
int np_task_source_take_events(struct np_task_source *src);

/* Why a scan is owed (np_task_source_owes_scan). */
struct np_scan_owed {
	const char *why; /* what is owed, for a log line */
	int pid;	 /* the process it is owed for; 0: none */
};

/* Whether a scan now would learn of any process: false only when the
 * connector is followed, nothing was lost or is left waiting, no listing
 * is due, no process the last scan listed was named since (an exec, an
 * exit, a rename) and no new process's wait for its first read has ended.
 * A task the keep callback wants read is the caller's to know; a zombie's
 * reap sends no event (a scan reads listed zombies to see them go): it is
 * seen at the next scan. @since_scan_ms: the time since the last scan, by
 * the caller's clock (one that stops in a suspend makes the waits end
 * late). Takes the events waiting first. A process no scan listed whose
 * main thread exits before its first read is forgotten: it is not read.
 * @owed, if not NULL, says why a scan is owed. */
bool np_task_source_owes_scan(struct np_task_source *src, uint64_t since_scan_ms,
			      struct np_scan_owed *owed);

/* List every process (not threads), sorted by pid, each read now or kept
 * (stat_kept). Tasks that vanish mid-read are dropped quietly. Replaces the
 * list's previous content. Returns 0 or -errno. */
int np_task_source_scan(struct np_task_source *src, struct np_task_list *list);

/* Per-node CPU busy share (0..1) since the previous call (since boot on the
 * first), into @busy[i] for topo->nodes[i]. Busy is user, nice, system, irq,
 * softirq and steal time; idle and iowait are not. A node whose CPUs saw no
 * ticks reads 0. Returns 0 or -errno. */
int np_task_source_node_load(struct np_task_source *src, const struct np_topology *topo,
			     double *busy);

/* The CPUs the last np_task_source_node_load found online (those
 * /proc/stat lists); empty before the first. */
const struct np_bitmap *np_task_source_cpus_seen(const struct np_task_source *src);

/* Read status (allowed CPUs and nodes, VmRSS), cgroup and each thread's last
 * CPU, CPU time and wait for a CPU of one task, through its directory as
 * np_task_dir_open() checked it. Returns 0, -ESRCH when it vanished or was
 * replaced (drop it quietly), -EINVAL for malformed content (logged with
 * file and line), an odd file's error (np_is_odd_file_error(), logged), or
 * another -errno. */
int np_task_read_details(struct np_ctx *ctx, struct np_task *task);

/* The same, the threads' waits only with @waits (a schedstat read per
 * thread, used only where the daemon places tasks): without, has_wait
 * stays false. */
int np_task_read_details_of(struct np_ctx *ctx, struct np_task *task, bool waits);

/* The CPUs process @pid's main thread may run on now: on the live machine
 * one sched_getaffinity(2), under a fixture root its status file. Returns
 * 0, -ESRCH (gone), or another -errno. */
int np_task_cpus_now(struct np_ctx *ctx, int pid, struct np_bitmap *out);

/* Whether @task may keep pages on node @id: the node is in its
 * Mems_allowed and in its cgroup's cpuset.mems.effective, each where known.
 * Every home node and page destination is asked here. */
bool np_task_may_use_node(const struct np_task *task, int id);

/* Verify that @task still is the process it was: same pid, same start time.
 * Returns 0, -ESRCH (gone or reused), or another -errno (-EINVAL for a
 * malformed stat, -ENOMEM). */
int np_task_verify(struct np_ctx *ctx, const struct np_task *task);

/* Room for "proc/PID" and its terminator. */
#define NP_TASK_DIR_MAX 24

/* Open @task's directory, proc/PID, and check through it that it still is
 * the process scanned (same start time). What is opened through the fd
 * afterwards belongs to that process, whatever became of its pid: the
 * kernel ties the directory to the process, not to the number, and once
 * the process is reaped every open through it fails. @dir gets "proc/PID"
 * for messages. Returns the fd (the caller closes it), -ESRCH (gone or
 * replaced), -EINVAL (malformed stat, logged), or another -errno. */
int np_task_dir_open(struct np_ctx *ctx, const struct np_task *task, char dir[NP_TASK_DIR_MAX]);

/* Free what np_task_read_details() attached; the task can be reused. */
void np_task_clear(struct np_task *task);

/* Hand @src over to @dst (which must hold no details): @dst takes its
 * details, and @src is left empty, owning nothing. */
void np_task_move(struct np_task *dst, struct np_task *src);

/* Empty the list, freeing what its tasks own, but keep its array for the
 * next scan (which overwrites each slot whole). */
void np_task_list_reset(struct np_task_list *list);

/* Free every task and the array; the list reads as empty afterwards. */
void np_task_list_clear(struct np_task_list *list);

/* Order of identities: by pid, then start time (<0, 0, >0). */
int np_task_id_compare(int pid_a, uint64_t start_a, int pid_b, uint64_t start_b);

/* Busy and total ticks of one CPU from a "cpuN ..." line of /proc/stat. */
struct np_cpu_ticks {
	int cpu;
	uint64_t busy, total;
};

/* Parse the per-CPU lines of /proc/stat (pure; @len bytes) into a malloc'd
 * array. The "cpu " summary and other lines are skipped; kernels before
 * 2.6.11 print fewer columns, missing ones count as 0. Returns 0, -ENOMEM or
 * -EINVAL with *bad_line set. */
int np_cpu_ticks_parse(const char *buf, size_t len, struct np_cpu_ticks **out, unsigned *nr,
		       unsigned *bad_line);

/* Parse /proc/uptime ("384.05 643.69": seconds since boot, then idle time)
 * of @len bytes (pure) into milliseconds; decimals past the third are
 * dropped, the idle time is not read. Returns 0, or -EINVAL for anything
 * but digits, an optional '.' and decimals, then a space, a newline or the
 * end (and for seconds too large to count in milliseconds). */
int np_uptime_parse(const char *buf, size_t len, uint64_t *ms);
