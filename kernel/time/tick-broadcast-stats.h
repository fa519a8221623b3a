/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU statistics of tick broadcast, shown in
 * /sys/kernel/debug/tick_broadcast/stats (tick-broadcast-debugfs.c).
 * Every counter is written by its own CPU only, with interrupts disabled:
 * no shared cache line is written on the idle path. Nothing is counted
 * until somebody asks: the first open of the file turns counting on
 * (tick_bc_stats_start()), for good; until then each counting site is a
 * no-op jump.
 */
#ifndef _KERNEL_TIME_TICK_BROADCAST_STATS_H
#define _KERNEL_TIME_TICK_BROADCAST_STATS_H

#include <linux/ktime.h>
#include <linux/jump_label.h>
#include <linux/percpu.h>

#include "tick-broadcast-core.h"

/* Wakeup lateness buckets: < 1, 4, 16, 64, 256, 1024, 4096 us, and more. */
#define TICK_BC_LATE_BUCKETS	8

/**
 * struct tick_bc_stats - what happened on one CPU
 * @enter:	tick_broadcast_enter() calls by result (refusals included)
 * @exit:	tick_broadcast_exit() calls by action: woken by the broadcast
 *		IPI (woken), by another interrupt (reprogram, no_event), or
 *		after its event expired (forced)
 * @irqs:	broadcast device interrupts handled on this CPU
 * @woken:	CPUs those interrupts woke, this one included
 * @late:	lateness of the broadcast wakeups of this CPU, seen at exit,
 *		from its wakeup time; power-of-4 microsecond buckets. A
 *		CPU woken early by coalescing is counted by @coalesced
 *		instead, unless it exits after its wakeup time
 * @coalesced:	CPUs those interrupts woke before their wakeup time
 *		(coalescing), this one included
 * @early_ns:	the sum of how early they were woken
 * @early_max_ns: how early the earliest of them was woken
 */
struct tick_bc_stats {
	u64	enter[TICK_BC_ENTER_NR];
	u64	exit[TICK_BC_EXIT_NR];
	u64	irqs;
	u64	woken;
	u64	late[TICK_BC_LATE_BUCKETS];
	u64	coalesced;
	u64	early_ns;
	u64	early_max_ns;
};

#ifdef CONFIG_DEBUG_FS
DECLARE_PER_CPU(struct tick_bc_stats, tick_bc_stats);
DECLARE_STATIC_KEY_FALSE(tick_bc_stats_on);

void tick_bc_stats_start(void);

static inline void tick_bc_stats_enter(enum tick_bc_enter_result r)
{
	if (static_branch_unlikely(&tick_bc_stats_on))
		__this_cpu_inc(tick_bc_stats.enter[r]);
}

/* Counting: an exit must read the clock for its lateness. */
static inline bool tick_bc_stats_counting(void)
{
	return static_branch_unlikely(&tick_bc_stats_on);
}

/* @now: the exit's time; @slept_until: the wakeup time of a woken exit. */
static inline void tick_bc_stats_exit(enum tick_bc_exit_action a, ktime_t now,
				      ktime_t slept_until)
{
	s64 late_ns = ktime_sub(now, slept_until);
	unsigned int b;

	if (!static_branch_unlikely(&tick_bc_stats_on))
		return;
	__this_cpu_inc(tick_bc_stats.exit[a]);
	if (a != TICK_BC_EXIT_WOKEN || late_ns < 0)
		return;
	b = late_ns < 1000 ? 0 : (fls64(late_ns / 1000) + 1) / 2;
	__this_cpu_inc(tick_bc_stats.late[min(b, TICK_BC_LATE_BUCKETS - 1)]);
}

static inline void tick_bc_stats_irq(unsigned int woken)
{
	if (!static_branch_unlikely(&tick_bc_stats_on))
		return;
	__this_cpu_inc(tick_bc_stats.irqs);
	__this_cpu_add(tick_bc_stats.woken, woken);
}

/* The CPUs one interrupt woke early, see struct tick_bc_coalesced. */
static inline void tick_bc_stats_coalesced(const struct tick_bc_coalesced *c)
{
	if (!static_branch_unlikely(&tick_bc_stats_on))
		return;
	__this_cpu_add(tick_bc_stats.coalesced, c->nr);
	__this_cpu_add(tick_bc_stats.early_ns, c->early_ns);
	if (c->early_max_ns > __this_cpu_read(tick_bc_stats.early_max_ns))
		__this_cpu_write(tick_bc_stats.early_max_ns, c->early_max_ns);
}
#else
static inline void tick_bc_stats_start(void) { }
static inline void tick_bc_stats_enter(enum tick_bc_enter_result r) { }
static inline bool tick_bc_stats_counting(void) { return false; }
static inline void tick_bc_stats_exit(enum tick_bc_exit_action a, ktime_t now,
				      ktime_t slept_until) { }
static inline void tick_bc_stats_irq(unsigned int woken) { }
static inline void tick_bc_stats_coalesced(const struct tick_bc_coalesced *c) { }
#endif

#endif /* _KERNEL_TIME_TICK_BROADCAST_STATS_H */
