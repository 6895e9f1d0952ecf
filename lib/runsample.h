/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "context.h"

/*
 * Which processes ran, from a sample of every CPU a few times a second
 * (perf_event_open(2): the software cpu-clock event of each CPU, which
 * records the pid it interrupted). A process that is never sampled has
 * very likely not run: its /proc records are as the last read left them,
 * so the scan need not read them again to learn that it is idle. The cost
 * follows the number of CPUs and the rate, not the number of tasks; a
 * process that runs less than one sample period in all is missed, which
 * matters only near the CPU filter's threshold (a task at 5% of a CPU is
 * sampled once every two seconds on average at 10 Hz).
 *
 * CPU-wide events need CAP_PERFMON (or CAP_SYS_ADMIN before Linux 5.8),
 * or perf_event_paranoid <= 0; without them the caller reads as before.
 */
struct np_run_sampler;

/* Called with each process a sample found running (repeats allowed). */
typedef void (*np_run_fn)(void *data, int pid);

/* Longest sample body np_perf_records_parse() hands over. */
#define NP_PERF_BODY_MAX 64

/* Called with the first bytes of each sample's body (after its header). */
typedef void (*np_perf_sample_fn)(void *data, const void *body);

/* The records between @tail and @head of a perf ring buffer of @size bytes
 * (a power of two) at @ring, as the kernel wrote them (pure): the first
 * @body_len bytes (at most NP_PERF_BODY_MAX) of each sample's body are
 * passed to @fn. Returns 0, -ENOBUFS when samples may have been lost (the
 * kernel says so, or the ring is too full for it to have said so; the
 * others are still passed on), or -EINVAL for a ring whose records do not
 * add up or a sample shorter than @body_len (those before the bad one are
 * passed on). */
int np_perf_records_parse(const unsigned char *ring, uint64_t size, uint64_t tail, uint64_t head,
			  size_t body_len, np_perf_sample_fn fn, void *data);

struct perf_event_attr;

/* A perf event with its ring buffer mapped: a control page, then the
 * ring. */
struct np_perf_ring {
	int fd;
	unsigned char *map;
};

/* Open the event @attr describes, on thread @pid (-1: any) and @cpu (-1:
 * any), and map @map_len bytes of it (a page, then a ring of a power of
 * two pages), writable: the reader says how far it read, so that the
 * kernel never overwrites what was not read and counts the rest lost.
 * Returns 0, -EOPNOTSUPP where the kernel has no perf events, or -errno;
 * nothing is left open on failure. */
int np_perf_ring_open(struct perf_event_attr *attr, int pid, int cpu, size_t map_len,
		      struct np_perf_ring *out);

/* Unmap and close. */
void np_perf_ring_close(struct np_perf_ring *r, size_t map_len);

/* Pass the first @body_len bytes of each sample the kernel wrote since the
 * last drain to @fn (no system call: the ring is mapped), and free the
 * ring for more. Returns as np_perf_records_parse(). */
int np_perf_ring_drain(struct np_perf_ring *r, size_t page_size, size_t ring_len,
		       size_t body_len, np_perf_sample_fn fn, void *data);

/* The records between @tail and @head of a perf ring buffer of @size bytes
 * (a power of two) at @ring, as the kernel wrote them (pure): each sample's
 * pid is passed to @fn, the idle task's (pid 0) excepted. Returns 0,
 * -ENOBUFS when samples may have been lost (the kernel says so, or the
 * ring is too full for it to have said so; the others are still
 * reported), or -EINVAL for a ring whose records do not add up (those
 * before the bad one are reported). */
int np_run_records_parse(const unsigned char *ring, uint64_t size, uint64_t tail, uint64_t head,
			 np_run_fn fn, void *data);

/* Sample each CPU of @cpus @hz times a second (1..1000) from now on, into
 * rings sized for drains every @drain_ms (up to an hour; four times what
 * that brings, 16 to 256 KiB a CPU). A CPU gone offline since it was
 * listed is left out (np_run_sampler_cpus). Returns 0, -EOPNOTSUPP under a
 * fixture root or where the kernel has no perf events, -EPERM or -EACCES
 * without the privilege, -ENODEV when no CPU could be sampled, or another
 * -errno; nothing is left open on failure. */
int np_run_sampler_open(struct np_ctx *ctx, const struct np_bitmap *cpus, unsigned hz,
			uint64_t drain_ms, struct np_run_sampler **out);

/* Stop sampling; NULL is accepted. */
void np_run_sampler_close(struct np_run_sampler *s);

/* The CPUs sampled. The kernel stops the events of a CPU that goes
 * offline and does not start them again when it comes back, and a CPU
 * brought online after the open has none: a caller that sees the online
 * CPUs differ from these opens again. */
const struct np_bitmap *np_run_sampler_cpus(const struct np_run_sampler *s);

/* Pass every process sampled since the last drain to @fn (no system
 * calls: the rings are mapped). Returns 0, or -ENOBUFS or -EINVAL as
 * np_run_records_parse: then some process that ran may not have been
 * reported. */
int np_run_sampler_drain(struct np_run_sampler *s, np_run_fn fn, void *data);
