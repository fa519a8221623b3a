// SPDX-License-Identifier: GPL-2.0
/*
 * The hrtimer broadcast pseudo device.
 *
 * Machines whose every timer stops in deep idle (arm64 without an
 * always-on arch timer, some arm, powerpc and riscv systems) have no real
 * broadcast device. An hrtimer on a CPU that stays awake stands in for
 * one: the CPU that arms it keeps it, and while it is armed that CPU is
 * refused deep idle (tick_bc_owner_busy() in tick-broadcast-core.c). The
 * CPU holding it is read from the timer itself after each arming
 * (tick_broadcast_hrtimer_owner()), and again after the hotplug code moved
 * a dying CPU's timers to another CPU without telling anybody.
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
 * then hrtimer_start() leaves the timer where it is.
 */
static int bc_hrtimer_set_next(ktime_t expires, struct clock_event_device *dev)
{
	hrtimer_start(&bc_timer, expires, HRTIMER_MODE_ABS_PINNED_HARD);
	return 0;
}

static struct clock_event_device bc_hrtimer = {
	.name			= "bc_hrtimer",
	.features		= CLOCK_EVT_FEAT_HRTIMER | CLOCK_EVT_FEAT_KTIME |
				  CLOCK_EVT_FEAT_ONESHOT,
	.set_next_ktime		= bc_hrtimer_set_next,
	.set_state_shutdown	= bc_hrtimer_shutdown,
};

/**
 * tick_broadcast_hrtimer_owner - the CPU an hrtimer broadcast device runs on
 * @dev:	the broadcast device, with CLOCK_EVT_FEAT_HRTIMER
 *
 * For bc_hrtimer, the CPU whose hrtimer base holds its timer now; for any
 * other such device, the CPU it says it is bound to. Called with
 * tick_broadcast_lock held, under which every hrtimer_start() of the
 * timer is made: the base is never the transient migration base here, and
 * the only other mover, the hotplug code, runs in stop_machine().
 *
 * Return: the CPU, or -1 for a device bound nowhere yet.
 */
int tick_broadcast_hrtimer_owner(const struct clock_event_device *dev)
{
	if (dev != &bc_hrtimer)
		return READ_ONCE(dev->bound_on);
	return READ_ONCE(bc_timer.base)->cpu_base->cpu;
}

/* /proc/timer_list shows the timer in its owner's queue by this name. */
static enum hrtimer_restart bc_handler(struct hrtimer *timer)
{
	bc_hrtimer.event_handler(&bc_hrtimer);
	return HRTIMER_NORESTART;
}

/**
 * tick_setup_hrtimer_broadcast - register the hrtimer broadcast device
 *
 * Called once from the architecture's time_init().
 */
void tick_setup_hrtimer_broadcast(void)
{
	struct clock_event_device *dev = &bc_hrtimer;

	hrtimer_init(&bc_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	bc_timer.function = bc_handler;

	/*
	 * Any CPU may own it. It is programmed in ktime directly: its limits
	 * (any delay from 1 ns) and its 1:1 conversion only serve
	 * /proc/timer_list. Its rating stays 0.
	 */
	dev->cpumask = cpu_possible_mask;
	dev->mult = 1;
	dev->min_delta_ns = 1;
	dev->min_delta_ticks = 1;
	dev->max_delta_ns = KTIME_MAX;
	dev->max_delta_ticks = ULONG_MAX;
	clockevents_register_device(dev);
}

#ifdef CONFIG_TICK_BROADCAST_DEVICES_KUNIT_TEST
#include "tests/tick_broadcast_hrtimer_kunit.c"
#endif
