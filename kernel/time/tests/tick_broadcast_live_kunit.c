// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the tick broadcast API on the running kernel.
 *
 * Every case acts on the CPU running it, with interrupts disabled, the way
 * cpuidle does around a CPUIDLE_FLAG_TIMER_STOP state, and checks only
 * what the API promises (include/linux/tick.h, kernel/time/tick-internal.h):
 * the same suite runs on any correct implementation of tick-broadcast.c.
 *
 * Cases that need a broadcast device, a oneshot tick or a local timer that
 * stops in deep idle (no x86 ARAT) are skipped on machines without them.
 */

#include <kunit/test.h>
#include <linux/clockchips.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/tick.h>

#include "tick_broadcast_test.h"

static bool in_oneshot_mask(unsigned int cpu)
{
#if defined(CONFIG_GENERIC_CLOCKEVENTS_BROADCAST) && defined(CONFIG_TICK_ONESHOT)
	return cpumask_test_cpu(cpu, tick_get_broadcast_oneshot_mask());
#else
	return false;
#endif
}

struct live_cpu {
	unsigned int cpu;
	struct clock_event_device *local;
	struct clock_event_device *bc;
};

/*
 * Skip unless this CPU's tick device needs broadcast in deep idle and a
 * oneshot broadcast device is in charge. Runs with interrupts disabled.
 */
static void live_cpu_get(struct live_cpu *lc)
{
	lc->cpu = smp_processor_id();
	lc->local = __this_cpu_read(tick_cpu_device.evtdev);
	lc->bc = bc_device();
}

/* This CPU stops its tick in deep idle and a oneshot broadcast is on. */
static bool live_cpu_needs_broadcast(struct live_cpu *lc, const char **why)
{
	if (!lc->bc) {
		*why = "no broadcast device";
		return false;
	}
	if (!lc->local || !(lc->local->features & CLOCK_EVT_FEAT_C3STOP)) {
		*why = "local timer keeps running in deep idle";
		return false;
	}
	if (!tick_broadcast_oneshot_active() ||
	    __this_cpu_read(tick_cpu_device.mode) != TICKDEV_MODE_ONESHOT) {
		*why = "tick is not in oneshot mode";
		return false;
	}
	return true;
}

/* ... and the broadcast device is not the hrtimer, which may refuse it. */
static bool live_cpu_usable(struct live_cpu *lc, const char **why)
{
	if (!live_cpu_needs_broadcast(lc, why))
		return false;
	if (lc->bc->features & CLOCK_EVT_FEAT_HRTIMER) {
		*why = "hrtimer broadcast may refuse the owner CPU";
		return false;
	}
	return true;
}

/* ... and the broadcast device is the hrtimer. */
static bool live_cpu_on_hrtimer(struct live_cpu *lc, const char **why)
{
	if (!live_cpu_needs_broadcast(lc, why))
		return false;
	if (!(lc->bc->features & CLOCK_EVT_FEAT_HRTIMER)) {
		*why = "the broadcast device is not the hrtimer";
		return false;
	}
	return true;
}

/* The broadcast device must be able to stand in for a stopped local timer. */
static void live_bc_device_is_eligible(struct kunit *test)
{
	struct clock_event_device *bc = bc_device();

	if (!bc)
		kunit_skip(test, "no broadcast device");

	kunit_info(test, "broadcast device %s, rating %d\n", bc->name, bc->rating);
	KUNIT_EXPECT_TRUE(test, tick_is_broadcast_device(bc));
	KUNIT_EXPECT_FALSE(test, bc->features & CLOCK_EVT_FEAT_C3STOP);
	KUNIT_EXPECT_FALSE(test, bc->features & CLOCK_EVT_FEAT_DUMMY);
	KUNIT_EXPECT_FALSE(test, bc->features & CLOCK_EVT_FEAT_PERCPU);
	if (tick_broadcast_oneshot_active())
		KUNIT_EXPECT_TRUE(test, bc->features & CLOCK_EVT_FEAT_ONESHOT);
}

struct live_sample {
	int ret;
	bool masked_in, masked_out, stopped, restarted, armed_in_time;
};

/*
 * One ENTER/EXIT pair. The broadcast device's expiry is read without the
 * broadcast lock: if its interrupt is being handled on another CPU right
 * then, the value may be in flux, and if this CPU's event expires before
 * the check, the device may rightly have moved on. Return: true if the
 * device was armed in time for this CPU's future event; a correct
 * implementation gets there within a few tries, a broken one never.
 */
static bool live_sample(struct live_cpu *lc, struct live_sample *ls)
{
	ktime_t local_next, bc_next;

	ls->ret = tick_broadcast_enter();
	ls->masked_in = in_oneshot_mask(lc->cpu);
	ls->stopped = clockevent_state_shutdown(lc->local);
	local_next = READ_ONCE(lc->local->next_event);
	bc_next = READ_ONCE(lc->bc->next_event);
	ls->armed_in_time = bc_next <= local_next;

	tick_broadcast_exit();
	ls->masked_out = in_oneshot_mask(lc->cpu);
	ls->restarted = clockevent_state_oneshot(lc->local);

	return ls->ret == 0 && ls->armed_in_time && local_next > ktime_get();
}

/*
 * ENTER takes the CPU into the oneshot mask, stops its local device and
 * makes sure the broadcast device fires no later than the CPU's event;
 * EXIT undoes all three. Tries are retried for up to five seconds: a CPU
 * left forced is refused until the broadcast interrupt, late on a loaded
 * host, releases it.
 */
static void live_enter_exit(struct kunit *test)
{
	struct live_sample ls = { };
	ktime_t start = ktime_get();
	struct live_cpu lc;
	const char *why;
	unsigned long flags;
	bool conclusive = false;
	int i;

	for (i = 0; !conclusive && ktime_ms_delta(ktime_get(), start) < 5000; i++) {
		local_irq_save(flags);
		live_cpu_get(&lc);
		if (!live_cpu_usable(&lc, &why)) {
			local_irq_restore(flags);
			kunit_skip(test, "%s", why);
		}
		conclusive = live_sample(&lc, &ls);
		local_irq_restore(flags);
		usleep_range(100, 200);
	}

	KUNIT_ASSERT_TRUE_MSG(test, conclusive,
			      "broadcast not armed in time in %d tries, last: ret %d, armed in time %d",
			      i, ls.ret, ls.armed_in_time);
	KUNIT_EXPECT_TRUE(test, ls.masked_in);
	KUNIT_EXPECT_TRUE(test, ls.stopped);
	KUNIT_EXPECT_FALSE(test, ls.masked_out);
	KUNIT_EXPECT_TRUE(test, ls.restarted);
}

/* EXIT without a matching ENTER is a no-op. */
static void live_exit_without_enter(struct kunit *test)
{
	struct live_cpu lc;
	const char *why;
	bool masked, running;
	unsigned long flags;

	local_irq_save(flags);
	live_cpu_get(&lc);
	if (!live_cpu_usable(&lc, &why)) {
		local_irq_restore(flags);
		kunit_skip(test, "%s", why);
	}

	tick_broadcast_exit();
	masked = in_oneshot_mask(lc.cpu);
	running = clockevent_state_oneshot(lc.local);
	local_irq_restore(flags);

	KUNIT_EXPECT_FALSE(test, masked);
	KUNIT_EXPECT_TRUE(test, running);
}

/*
 * Repeated ENTER/EXIT pairs leave no trace in the masks. ENTER may refuse
 * only a CPU whose local event expired at an earlier EXIT before the
 * broadcast device got to it (tick_check_broadcast_expired()).
 */
static void live_enter_exit_repeated(struct kunit *test)
{
	struct live_cpu lc;
	const char *why;
	unsigned long flags;
	int i, refused = 0, forced = 0, stuck = 0;
	bool expired;

	for (i = 0; i < 1000; i++) {
		local_irq_save(flags);
		live_cpu_get(&lc);
		if (!live_cpu_usable(&lc, &why)) {
			local_irq_restore(flags);
			kunit_skip(test, "%s", why);
		}
		expired = tick_check_broadcast_expired();
		forced += expired;
		if (tick_broadcast_enter() && !expired)
			refused++;
		tick_broadcast_exit();
		if (in_oneshot_mask(lc.cpu))
			stuck++;
		local_irq_restore(flags);
	}

	kunit_info(test, "%d of 1000 entries found the CPU forced\n", forced);
	KUNIT_EXPECT_EQ(test, refused, 0);
	KUNIT_EXPECT_EQ(test, stuck, 0);
}

/*
 * Stay in deep idle past this CPU's event, interrupts disabled, and exit.
 * The exit leaves the CPU forced if the broadcast interrupt has not
 * delivered the event yet; it may have been handled on another CPU first.
 *
 * Return: 1 if the exit left this CPU forced, 0 if not, -EOPNOTSUPP if
 * the CPU cannot sleep deep (the reason in *why).
 */
static int live_exit_late(const char **why)
{
	struct live_cpu lc;
	unsigned long flags;
	ktime_t event;
	int ret = 0;

	local_irq_save(flags);
	live_cpu_get(&lc);
	if (!live_cpu_usable(&lc, why)) {
		ret = -EOPNOTSUPP;
	} else if (!tick_broadcast_enter()) {
		event = READ_ONCE(lc.local->next_event);
		/* Spin only for an event at most a tick away. */
		if (ktime_sub(event, ktime_get()) <= TICK_NSEC) {
			while (!ktime_after(ktime_get(), event))
				cpu_relax();
		}
		tick_broadcast_exit();
		ret = !!tick_check_broadcast_expired();
	}
	local_irq_restore(flags);
	return ret;
}

/*
 * A CPU whose exit found its event expired before the broadcast interrupt
 * delivered it is forced: tick_check_broadcast_expired() keeps it out of
 * deep idle, and the broadcast interrupt, which is due, releases it. The
 * case before may have left this CPU forced; if not, force it. Then wait
 * for the release on this CPU with interrupts enabled: the interrupt can
 * be late on a loaded host, a stale force bit never clears.
 */
static void live_forced_cpu_is_released(struct kunit *test)
{
	const char *why = NULL;
	bool caught, forced;
	unsigned int cpu;
	s64 waited;
	ktime_t start;
	int i, ret = 0;

	migrate_disable();
	cpu = smp_processor_id();
	caught = tick_check_broadcast_expired();
	for (i = 0; i < 20 && !caught; i++) {
		ret = live_exit_late(&why);
		if (ret < 0)
			break;
		caught = ret;
		if (!caught)
			usleep_range(100, 200);
	}
	forced = caught;
	start = ktime_get();
	while (forced && ktime_ms_delta(ktime_get(), start) < 5000) {
		usleep_range(1000, 1100);
		forced = tick_check_broadcast_expired();
	}
	waited = ktime_ms_delta(ktime_get(), start);
	migrate_enable();

	if (ret < 0)
		kunit_skip(test, "%s", why);
	if (!caught)
		kunit_skip(test, "no exit left CPU%u forced in %d tries", cpu, i);
	KUNIT_EXPECT_FALSE_MSG(test, forced, "CPU%u still forced after %lld ms",
			       cpu, waited);
	if (!forced)
		kunit_info(test, "CPU%u forced after %d exits, released within %lld ms\n",
			   cpu, i, waited);
}

/*
 * With the hrtimer broadcast the timer runs on the CPU that armed it last
 * (its owner), whose local timer must keep running: ENTER refuses the
 * owner (-EBUSY, no EXIT owed) and leaves its local device alone. A CPU
 * that ENTER let go deep never holds the armed timer. Alone in deep idle,
 * this CPU arms the timer itself and must be refused.
 */
static void live_hrtimer_owner_is_refused(struct kunit *test)
{
	bool refused = false, stopped, masked, owner;
	struct live_cpu lc;
	const char *why;
	unsigned long flags;
	int i, ret;

	for (i = 0; i < 20 && !refused; i++) {
		local_irq_save(flags);
		live_cpu_get(&lc);
		if (!live_cpu_on_hrtimer(&lc, &why)) {
			local_irq_restore(flags);
			kunit_skip(test, "%s", why);
		}
		ret = tick_broadcast_enter();
		owner = READ_ONCE(lc.bc->bound_on) == lc.cpu &&
			READ_ONCE(lc.bc->next_event) != KTIME_MAX;
		stopped = clockevent_state_shutdown(lc.local);
		masked = in_oneshot_mask(lc.cpu);
		if (!ret)
			tick_broadcast_exit();
		local_irq_restore(flags);

		KUNIT_ASSERT_FALSE_MSG(test, !ret && owner,
				       "CPU%u was let go deep holding the armed hrtimer broadcast",
				       lc.cpu);
		refused = ret == -EBUSY && owner;
		usleep_range(100, 200);
	}
	if (!refused)
		kunit_skip(test, "the hrtimer broadcast stayed on other CPUs for %d tries", i);
	KUNIT_EXPECT_FALSE(test, stopped);
	KUNIT_EXPECT_FALSE(test, masked);
}

/*
 * Built-in suites run right after the initcalls, possibly before the tick
 * of every CPU has switched to oneshot mode (that waits for a high
 * resolution clocksource). Give the switch up to ten seconds rather than
 * skipping.
 */
static bool all_cpus_oneshot(void)
{
	unsigned int cpu;

	if (!tick_broadcast_oneshot_active())
		return false;
	for_each_online_cpu(cpu) {
		if (READ_ONCE(per_cpu(tick_cpu_device, cpu).mode) != TICKDEV_MODE_ONESHOT)
			return false;
	}
	return true;
}

static int tick_broadcast_live_init(struct kunit_suite *suite)
{
	int waited_ms;

	for (waited_ms = 0; HAVE_ONESHOT_BROADCAST && waited_ms < 10000 && !all_cpus_oneshot();
	     waited_ms += 20)
		msleep(20);
	return 0;
}

static int tick_broadcast_live_case_init(struct kunit *test)
{
	if (!HAVE_ONESHOT_BROADCAST)
		kunit_skip(test, "needs GENERIC_CLOCKEVENTS_BROADCAST and TICK_ONESHOT");
	return 0;
}

static struct kunit_case tick_broadcast_live_cases[] = {
	KUNIT_CASE(live_bc_device_is_eligible),
	KUNIT_CASE(live_enter_exit),
	KUNIT_CASE(live_exit_without_enter),
	KUNIT_CASE(live_enter_exit_repeated),
	KUNIT_CASE(live_forced_cpu_is_released),
	KUNIT_CASE(live_hrtimer_owner_is_refused),
	{}
};

static struct kunit_suite tick_broadcast_live_suite = {
	.name = "tick_broadcast_live",
	.suite_init = tick_broadcast_live_init,
	.init = tick_broadcast_live_case_init,
	.test_cases = tick_broadcast_live_cases,
};

kunit_test_suite(tick_broadcast_live_suite);

MODULE_DESCRIPTION("KUnit tests of the tick broadcast API on the running kernel");
MODULE_LICENSE("GPL");
