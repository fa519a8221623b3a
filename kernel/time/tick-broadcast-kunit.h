/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test-only entry points of tick-broadcast.c, built with
 * CONFIG_TICK_BROADCAST_GLUE_KUNIT_TEST: a KUnit test takes the broadcast
 * over from the machine, registers fake broadcast devices through the
 * ordinary clockevents path, gives every CPU a fake tick device, and
 * drives the real glue with them from one thread.
 */
#ifndef _KERNEL_TIME_TICK_BROADCAST_KUNIT_H
#define _KERNEL_TIME_TICK_BROADCAST_KUNIT_H

#include <linux/clockchips.h>
#include <linux/cpumask.h>
#include <linux/tick.h>

#include "tick-broadcast-core.h"
#include "tick-sched.h"

/**
 * struct tick_bc_kunit - the broadcast, taken over by a test
 * @local:	the tick device of each CPU as the glue sees it, nr_cpu_ids
 *		entries, set by the test before tick_bc_kunit_begin(): the
 *		wake IPIs go through their ->broadcast(), a CPU's own tick
 *		through its ->event_handler()
 * @core:	the broadcast state the glue runs on until the end
 * @online:	the CPUs @core may wake; a copy of cpu_online_mask at the
 *		start, which the test may change to play hotplug
 * @saved:	the machine's broadcast state (private)
 * @saved_dev:	the machine's broadcast device (private)
 * @saved_mode:	the machine's broadcast mode (private)
 */
struct tick_bc_kunit {
	struct clock_event_device	**local;
	struct tick_bc			*core;
	struct cpumask			*online;
	struct tick_bc			saved;
	struct clock_event_device	*saved_dev;
	enum tick_device_mode		saved_mode;
};

int tick_bc_kunit_begin(struct tick_bc_kunit *t);
void tick_bc_kunit_end(struct tick_bc_kunit *t);
int tick_bc_kunit_oneshot_control(unsigned int cpu, enum tick_broadcast_state state);
void tick_bc_kunit_control(unsigned int cpu, enum tick_broadcast_mode mode);
bool tick_bc_kunit_synced(void);

#endif /* _KERNEL_TIME_TICK_BROADCAST_KUNIT_H */
