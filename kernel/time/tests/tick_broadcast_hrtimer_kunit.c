// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit test of the hrtimer broadcast pseudo device: the CPU it runs on,
 * which must not go deep while it does, is where its timer is. The
 * hotplug code moves the timers of a dying CPU to another CPU, and the
 * broadcast code learns of it only later, if at all. The test uses a
 * timer of its own: the live broadcast may be using the device's.
 *
 * Included at the end of kernel/time/tick-broadcast-hrtimer.c, for the
 * timer. It takes a CPU offline and back: for test kernels only.
 */

#include <kunit/test.h>
#include <linux/cpu.h>

/* A timer of the test's own, armed on a CPU the way the device's is. */
struct hrtimer_test_arm {
	struct hrtimer	timer;
	ktime_t		expires;
};

/* Where the broadcast code reads the owner from (tick_broadcast_hrtimer_owner()). */
static int hrtimer_test_cpu(const struct hrtimer *timer)
{
	return READ_ONCE(timer->base)->cpu_base->cpu;
}

static enum hrtimer_restart hrtimer_test_fn(struct hrtimer *timer)
{
	return HRTIMER_NORESTART;
}

static void hrtimer_arm_here(void *arg)
{
	struct hrtimer_test_arm *arm = arg;

	hrtimer_start(&arm->timer, arm->expires, HRTIMER_MODE_ABS_PINNED_HARD);
}

/* A CPU that may go offline, other than the one running the case. */
static int hrtimer_victim(unsigned int self)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (cpu != self && cpu_is_hotpluggable(cpu))
			return cpu;
	return -1;
}

/*
 * The CPU that armed the timer goes offline: the timer moves to another
 * CPU, whose hrtimer base holds it from then on: the owner read from the
 * base follows. An owner left at the dead CPU would let the CPU now
 * holding the only broadcast source go deep. Shown on a timer of the
 * test's own, not on the device's, which the broadcast may be using
 * meanwhile.
 */
static void hrtimer_owner_follows_its_timer_off_a_dead_cpu(struct kunit *test)
{
	struct hrtimer_test_arm *arm;
	unsigned int self;
	int victim, cpu;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CPU hotplug");
	arm = kunit_kzalloc(test, sizeof(*arm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, arm);
	hrtimer_init(&arm->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	arm->timer.function = hrtimer_test_fn;
	arm->expires = ktime_add_ms(ktime_get(), 60000);
	self = get_cpu();
	put_cpu();
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(self)), 0);
	victim = hrtimer_victim(self);
	if (victim < 0)
		kunit_skip(test, "no CPU to take offline");

	KUNIT_ASSERT_EQ(test, smp_call_function_single(victim, hrtimer_arm_here, arm, 1), 0);
	KUNIT_EXPECT_EQ(test, hrtimer_test_cpu(&arm->timer), victim);
	KUNIT_ASSERT_EQ(test, remove_cpu(victim), 0);
	cpu = hrtimer_test_cpu(&arm->timer);
	KUNIT_EXPECT_NE_MSG(test, cpu, victim, "the timer is on the dead CPU%d", victim);
	KUNIT_EXPECT_TRUE(test, cpu >= 0 && cpu_online(cpu));
	hrtimer_cancel(&arm->timer);
	KUNIT_EXPECT_EQ(test, add_cpu(victim), 0);
}

static struct kunit_case tick_broadcast_hrtimer_cases[] = {
	KUNIT_CASE(hrtimer_owner_follows_its_timer_off_a_dead_cpu),
	{}
};

static struct kunit_suite tick_broadcast_hrtimer_suite = {
	.name = "tick_broadcast_hrtimer",
	.test_cases = tick_broadcast_hrtimer_cases,
};

kunit_test_suite(tick_broadcast_hrtimer_suite);
