// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit test of the hrtimer broadcast pseudo device: the CPU it runs on,
 * which must not go deep while it does, is where its timer is. The
 * hotplug code moves the timers of a dying CPU to another CPU, and the
 * broadcast code learns of it only later, if at all.
 *
 * Included at the end of kernel/time/tick-broadcast-hrtimer.c, for the
 * timer. It takes a CPU offline and back: for test kernels only.
 */

#include <kunit/test.h>
#include <linux/cpu.h>

static void hrtimer_arm_here(void *expires)
{
	bc_hrtimer.set_next_ktime(*(ktime_t *)expires, &bc_hrtimer);
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
 * The CPU that armed the device goes offline: the timer moves to another
 * CPU, which is the owner from then on. An owner left at the dead CPU
 * would let the CPU now holding the only broadcast source go deep, until
 * something armed the device again.
 */
static void hrtimer_owner_follows_its_timer_off_a_dead_cpu(struct kunit *test)
{
	ktime_t expires = ktime_add_ms(ktime_get(), 60000);
	unsigned int self;
	int victim, owner;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CPU hotplug");
	if (!bc_timer.function)
		kunit_skip(test, "the architecture has no hrtimer broadcast");
	if (hrtimer_active(&bc_timer))
		kunit_skip(test, "the hrtimer broadcast is in use");
	self = get_cpu();
	put_cpu();
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(self)), 0);
	victim = hrtimer_victim(self);
	if (victim < 0)
		kunit_skip(test, "no CPU to take offline");

	KUNIT_ASSERT_EQ(test, smp_call_function_single(victim, hrtimer_arm_here, &expires, 1), 0);
	KUNIT_EXPECT_EQ(test, tick_broadcast_hrtimer_owner(&bc_hrtimer), victim);
	KUNIT_ASSERT_EQ(test, remove_cpu(victim), 0);
	owner = tick_broadcast_hrtimer_owner(&bc_hrtimer);
	KUNIT_EXPECT_NE_MSG(test, owner, victim, "the owner is the dead CPU%d", victim);
	KUNIT_EXPECT_TRUE(test, owner >= 0 && cpu_online(owner));
	hrtimer_cancel(&bc_timer);
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
