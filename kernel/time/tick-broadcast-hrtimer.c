// SPDX-License-Identifier: GPL-2.0
/*
 * The hrtimer broadcast pseudo device.
 *
 * Machines whose every timer stops in deep idle (arm64 without an
 * always-on arch timer, some arm, powerpc and riscv systems) have no real
 * broadcast device. An hrtimer on a CPU that stays awake stands in for
 * one: the CPU that arms it keeps it, and while it is armed that CPU is
 * refused deep idle (tick_bc_owner_busy() in tick-broadcast-core.c).
 *
 * Rating 0, so that any real broadcast device replaces it.
 */

#include <linux/clockchips.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include "tick-internal.h"

static struct hrtimer bc_timer;

/*
 * Only try: the callback may be spinning on tick_broadcast_lock, which
 * our caller holds, so waiting for it would never end.
 */
static int bc_hrtimer_shutdown(struct clock_event_device *dev)
{
	hrtimer_try_to_cancel(&bc_timer);
	return 0;
}

/*
 * Pinned to the calling CPU, unless the callback is running right now:
 * then hrtimer_start() leaves the timer where it is. The owner is where
 * the timer ended up.
 */
static int bc_hrtimer_set_next(ktime_t expires, struct clock_event_device *dev)
{
	hrtimer_start(&bc_timer, expires, HRTIMER_MODE_ABS_PINNED_HARD);
	WRITE_ONCE(dev->bound_on, bc_timer.base->cpu_base->cpu);
	return 0;
}

static struct clock_event_device bc_hrtimer_dev = {
	.name			= "bc_hrtimer",
	.features		= CLOCK_EVT_FEAT_HRTIMER | CLOCK_EVT_FEAT_KTIME |
				  CLOCK_EVT_FEAT_ONESHOT,
	.set_next_ktime		= bc_hrtimer_set_next,
	.set_state_shutdown	= bc_hrtimer_shutdown,
};

/* /proc/timer_list shows the timer in its owner's queue by this name. */
static enum hrtimer_restart bc_handler(struct hrtimer *timer)
{
	bc_hrtimer_dev.event_handler(&bc_hrtimer_dev);
	return HRTIMER_NORESTART;
}

/**
 * tick_setup_hrtimer_broadcast - register the hrtimer broadcast device
 *
 * Called once from the architecture's time_init().
 */
void tick_setup_hrtimer_broadcast(void)
{
	struct clock_event_device *dev = &bc_hrtimer_dev;

	hrtimer_init(&bc_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	bc_timer.function = bc_handler;

	/*
	 * Any CPU may own it, none does yet. It is programmed in ktime
	 * directly: its limits (any delay from 1 ns) and its 1:1 conversion
	 * only serve /proc/timer_list. Its rating stays 0.
	 */
	dev->cpumask = cpu_possible_mask;
	dev->bound_on = -1;
	dev->mult = 1;
	dev->min_delta_ns = 1;
	dev->min_delta_ticks = 1;
	dev->max_delta_ns = KTIME_MAX;
	dev->max_delta_ticks = ULONG_MAX;
	clockevents_register_device(dev);
}
