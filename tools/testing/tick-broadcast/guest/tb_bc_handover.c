// SPDX-License-Identifier: GPL-2.0
/*
 * tb_bc_handover: a broadcast clock event device in a module, for the
 * broadcast device hand-over stress (make stress). Built out of tree
 * against each kernel twice, as tb_bc_handover_a and tb_bc_handover_b, so
 * that the two can replace each other while CPUs sleep in deep idle:
 *
 *   insmod tb_bc_handover_a.ko rating=101   takes over from the HPET
 *   insmod tb_bc_handover_b.ko rating=102   takes over from _a
 *   rmmod tb_bc_handover_a                  _a is released: unregistered
 *
 * The device is an hrtimer on the CPU that armed it last (as the hrtimer
 * broadcast device is): a real, working broadcast device on any machine,
 * whose owner the framework keeps out of deep idle. While it is the
 * broadcast device the framework holds a reference on this module
 * (/sys/module/NAME/refcnt is 1 and rmmod fails); once replaced, none.
 */

#include <linux/clockchips.h>
#include <linux/cpu.h>
#include <linux/hrtimer.h>
#include <linux/module.h>

static int rating = 100;
module_param(rating, int, 0444);
MODULE_PARM_DESC(rating, "clock event rating: higher than the current broadcast device's");

static struct hrtimer handover_timer;

/* The timer callback may wait for a lock our caller holds: only try. */
static int handover_shutdown(struct clock_event_device *dev)
{
	hrtimer_try_to_cancel(&handover_timer);
	return 0;
}

static int handover_set_next(ktime_t expires, struct clock_event_device *dev)
{
	hrtimer_start(&handover_timer, expires, HRTIMER_MODE_ABS_PINNED_HARD);
	WRITE_ONCE(dev->bound_on, handover_timer.base->cpu_base->cpu);
	return 0;
}

static struct clock_event_device handover_dev = {
	.name			= KBUILD_MODNAME,
	.features		= CLOCK_EVT_FEAT_HRTIMER | CLOCK_EVT_FEAT_KTIME |
				  CLOCK_EVT_FEAT_ONESHOT,
	.set_next_ktime		= handover_set_next,
	.set_state_shutdown	= handover_shutdown,
	.owner			= THIS_MODULE,
};

static enum hrtimer_restart handover_fire(struct hrtimer *timer)
{
	handover_dev.event_handler(&handover_dev);
	return HRTIMER_NORESTART;
}

static int __init handover_init(void)
{
	struct clock_event_device *dev = &handover_dev;

	hrtimer_init(&handover_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	handover_timer.function = handover_fire;
	dev->rating = rating;
	dev->cpumask = cpu_possible_mask;
	dev->bound_on = -1;
	dev->mult = 1;
	dev->min_delta_ns = 1;
	dev->min_delta_ticks = 1;
	dev->max_delta_ns = KTIME_MAX;
	dev->max_delta_ticks = ULONG_MAX;
	clockevents_register_device(dev);
	return 0;
}

/*
 * Only reached with the reference dropped: the device was replaced
 * (released, detached) or never installed. Unregister it from any online
 * CPU, then wait for a callback still running on the old duty.
 */
static void __exit handover_exit(void)
{
	int ret;

	cpus_read_lock();
	ret = clockevents_unbind_device(&handover_dev, cpumask_any(cpu_online_mask));
	cpus_read_unlock();
	WARN(ret, "%s: unbind failed: %d\n", KBUILD_MODNAME, ret);
	hrtimer_cancel(&handover_timer);
}

module_init(handover_init);
module_exit(handover_exit);
MODULE_DESCRIPTION("Broadcast clock event device for the hand-over stress test");
MODULE_LICENSE("GPL");
