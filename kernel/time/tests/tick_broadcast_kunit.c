// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the tick broadcast decision core (tick-broadcast-core.c).
 *
 * The core runs here on simulated CPUs with an injected clock and a fake
 * broadcast device that records how it is armed. Each case checks one
 * decision of the core, which its name says.
 *
 * The last cases run long random operation sequences against a small
 * reference model and check the core's invariants after every step.
 *
 * A second suite, tick_broadcast_core_bench, times the expiry against the
 * number of sleeping CPUs; its case is marked slow and skips unless
 * tick_broadcast_kunit.bench=1.
 */

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/clockchips.h>
#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/prandom.h>
#include <linux/sort.h>
#include <linux/tick.h>

#include "../tick-broadcast-core.h"

#define NR_TEST_CPUS	8

struct fake {
	struct tick_bc		bc;
	unsigned int		nr;
	unsigned long		*online;
	unsigned long		*wake;
	/* the fake device */
	int			arms;
	ktime_t			armed_at;
	unsigned int		armed_cpu;
	int			owner;		/* hrtimer: where the timer is */
	int			stuck_on;	/* hrtimer: callback running there */
	int			caller;		/* hrtimer: the CPU arming it, -1: @cpu */
	unsigned int		owner_calls;	/* ops->owner() calls */
};

static struct fake *to_fake(struct tick_bc *bc)
{
	return container_of(bc, struct fake, bc);
}

static void fake_arm(struct tick_bc *bc, ktime_t expires, unsigned int cpu)
{
	struct fake *f = to_fake(bc);

	f->arms++;
	f->armed_at = expires;
	f->armed_cpu = cpu;
	if (f->stuck_on >= 0)
		f->owner = f->stuck_on;
	else
		f->owner = f->caller >= 0 ? f->caller : cpu;
}

static int fake_owner(struct tick_bc *bc)
{
	to_fake(bc)->owner_calls++;
	return to_fake(bc)->owner;
}

static const struct tick_bc_ops fake_ops = {
	.arm	= fake_arm,
	.owner	= fake_owner,
};

/* Broadcast devices as the core sees them: only their features matter. */
static struct clock_event_device fake_bc_dev = {
	.name		= "fake_bc",
	.features	= CLOCK_EVT_FEAT_ONESHOT,
};

static struct clock_event_device fake_hrtimer_dev = {
	.name		= "fake_bc_hrtimer",
	.features	= CLOCK_EVT_FEAT_ONESHOT | CLOCK_EVT_FEAT_HRTIMER,
};

/* A core with @nr online CPUs and a device installed, in periodic mode. */
static struct fake *fake_new(struct kunit *test, unsigned int nr, bool hrtimer)
{
	struct fake *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	unsigned int longs = BITS_TO_LONGS(nr);
	unsigned long *masks;
	ktime_t *wakeup;

	KUNIT_ASSERT_NOT_NULL(test, f);
	wakeup = kunit_kcalloc(test, nr, sizeof(*wakeup), GFP_KERNEL);
	masks = kunit_kcalloc(test, TICK_BC_NR_MASKS * longs, sizeof(long), GFP_KERNEL);
	f->online = kunit_kcalloc(test, longs, sizeof(long), GFP_KERNEL);
	f->wake = kunit_kcalloc(test, longs, sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wakeup);
	KUNIT_ASSERT_NOT_NULL(test, masks);
	KUNIT_ASSERT_NOT_NULL(test, f->online);
	KUNIT_ASSERT_NOT_NULL(test, f->wake);

	f->nr = nr;
	f->owner = -1;
	f->stuck_on = -1;
	f->caller = -1;
	bitmap_fill(f->online, nr);
	tick_bc_init(&f->bc, &fake_ops, nr, longs, wakeup, masks, f->online);
	tick_bc_set_device(&f->bc, hrtimer ? &fake_hrtimer_dev : &fake_bc_dev);
	return f;
}

/* The same, switched to oneshot mode by CPU 0 with nobody to hand over. */
static struct fake *fake_oneshot(struct kunit *test, unsigned int nr, bool hrtimer)
{
	struct fake *f = fake_new(test, nr, hrtimer);

	tick_bc_switch_oneshot(&f->bc, 0, true, 0, false);
	return f;
}

static enum tick_bc_enter_result enter(struct fake *f, unsigned int cpu, s64 wakeup)
{
	struct tick_bc_enter_out out;

	return tick_bc_enter(&f->bc, cpu, wakeup, &out);
}

/*
 * The device fires on @this_cpu at @now, and its interrupt handler arms it
 * again, from @this_cpu, for what the expiry leaves.
 */
static bool fire(struct fake *f, unsigned int this_cpu, s64 now)
{
	int caller = f->caller;
	unsigned int cpu;
	bool local;

	local = tick_bc_expire(&f->bc, this_cpu, now, f->wake, &cpu);
	if (f->bc.armed == KTIME_MAX) {
		f->armed_at = KTIME_MAX;
		return local;
	}
	f->caller = this_cpu;
	fake_arm(&f->bc, f->bc.armed, cpu);
	f->caller = caller;
	return local;
}

/*
 * An exit at @now as the kernel makes it: when it is told to reprogram,
 * its local device finds an event at or before @now expired, and asks
 * tick_bc_exit_late().
 */
static enum tick_bc_exit_action exit_at(struct tick_bc *bc, unsigned int cpu, s64 wakeup,
					s64 now)
{
	enum tick_bc_exit_action a = tick_bc_exit(bc, cpu, wakeup);

	if (a == TICK_BC_EXIT_REPROGRAM && wakeup <= now &&
	    tick_bc_exit_late(bc, cpu, wakeup, now))
		return TICK_BC_EXIT_FORCED;
	return a;
}

static bool woken(struct fake *f, unsigned int cpu)
{
	return test_bit(cpu, f->wake);
}

static unsigned int nr_woken(struct fake *f)
{
	return bitmap_weight(f->wake, f->nr);
}

/* ------------------------------------------------------------ devices */

#define F_ONESHOT	CLOCK_EVT_FEAT_ONESHOT
#define F_PERIODIC	CLOCK_EVT_FEAT_PERIODIC

struct eligible_case {
	const char	*what;
	unsigned int	features;
	int		rating;
	int		cur_rating;	/* -1: no current device */
	bool		oneshot;
	bool		want;
};

static const struct eligible_case bc_eligible_cases[] = {
	{ "first device, rating 0", F_PERIODIC, 0, -1, false, true },
	{ "C3STOP", F_ONESHOT | CLOCK_EVT_FEAT_C3STOP, 300, -1, false, false },
	{ "PERCPU", F_ONESHOT | CLOCK_EVT_FEAT_PERCPU, 300, -1, false, false },
	{ "DUMMY", CLOCK_EVT_FEAT_DUMMY, 300, -1, false, false },
	{ "periodic-only, oneshot mode", F_PERIODIC, 300, 50, true, false },
	{ "periodic-only, periodic mode", F_PERIODIC, 300, 50, false, true },
	{ "equal rating keeps current", F_ONESHOT, 50, 50, true, false },
	{ "lower rating", F_ONESHOT, 10, 50, true, false },
	{ "higher rating", F_ONESHOT, 51, 50, true, true },
	{ "real device replaces bc_hrtimer", F_ONESHOT, 1, 0, true, true },
};

typedef bool (*eligible_fn)(const struct clock_event_device *cur,
			    const struct clock_event_device *dev, bool oneshot);

static void check_eligible(struct kunit *test, const struct eligible_case *cases,
			   unsigned int n, eligible_fn eligible)
{
	struct clock_event_device cur = { }, dev = { .cpumask = cpumask_of(0) };
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct clock_event_device *c = NULL;

		if (cases[i].cur_rating >= 0)
			c = &cur;
		cur.rating = cases[i].cur_rating;
		dev.features = cases[i].features;
		dev.rating = cases[i].rating;
		KUNIT_EXPECT_EQ_MSG(test, eligible(c, &dev, cases[i].oneshot), cases[i].want,
				    "%s", cases[i].what);
	}
}

static void broadcast_device_eligibility(struct kunit *test)
{
	check_eligible(test, bc_eligible_cases, ARRAY_SIZE(bc_eligible_cases),
		       tick_bc_device_eligible);
}

static const struct eligible_case wakeup_eligible_cases[] = {
	{ "per-CPU oneshot device", F_ONESHOT | CLOCK_EVT_FEAT_PERCPU, 100, -1, 0, true },
	{ "not PERCPU", F_ONESHOT, 100, -1, 0, false },
	{ "not ONESHOT", F_PERIODIC | CLOCK_EVT_FEAT_PERCPU, 100, -1, 0, false },
	{ "C3STOP", F_ONESHOT | CLOCK_EVT_FEAT_PERCPU | CLOCK_EVT_FEAT_C3STOP, 100, -1, 0,
	  false },
	{ "DUMMY", F_ONESHOT | CLOCK_EVT_FEAT_PERCPU | CLOCK_EVT_FEAT_DUMMY, 100, -1, 0,
	  false },
	{ "equal rating", F_ONESHOT | CLOCK_EVT_FEAT_PERCPU, 100, 100, 0, false },
	{ "higher rating", F_ONESHOT | CLOCK_EVT_FEAT_PERCPU, 101, 100, 0, true },
};

static bool wakeup_eligible_on_cpu0(const struct clock_event_device *cur,
				    const struct clock_event_device *dev, bool unused)
{
	return tick_bc_wakeup_eligible(cur, dev, 0);
}

static void wakeup_device_eligibility(struct kunit *test)
{
	struct clock_event_device dev = {
		.features = F_ONESHOT | CLOCK_EVT_FEAT_PERCPU,
		.cpumask = cpu_possible_mask,
	};

	check_eligible(test, wakeup_eligible_cases, ARRAY_SIZE(wakeup_eligible_cases),
		       wakeup_eligible_on_cpu0);
	/* Its cpumask must be exactly the registering CPU. */
	if (num_possible_cpus() > 1)
		KUNIT_EXPECT_FALSE(test, tick_bc_wakeup_eligible(NULL, &dev, 0));
}

/* ------------------------------------------------------------ control */

static void oneshot_mode_is_a_one_way_latch(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);

	KUNIT_EXPECT_EQ(test, f->bc.dev.mode, TICKDEV_MODE_PERIODIC);
	tick_bc_switch_oneshot(&f->bc, 1, true, 100, false);
	KUNIT_EXPECT_EQ(test, f->bc.dev.mode, TICKDEV_MODE_ONESHOT);
	tick_bc_offline(&f->bc, 1);
	tick_bc_disarmed(&f->bc);
	tick_bc_switch_oneshot(&f->bc, 2, true, 200, false);
	KUNIT_EXPECT_EQ(test, f->bc.dev.mode, TICKDEV_MODE_ONESHOT);
}

static void on_off_report_mask_edges(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);
	struct tick_bc_change ch;

	ch = tick_bc_control(&f->bc, 1, TICK_BROADCAST_ON);
	KUNIT_EXPECT_TRUE(test, ch.joined);
	KUNIT_EXPECT_TRUE(test, ch.first);
	ch = tick_bc_control(&f->bc, 2, TICK_BROADCAST_ON);
	KUNIT_EXPECT_TRUE(test, ch.joined);
	KUNIT_EXPECT_FALSE(test, ch.first);
	ch = tick_bc_control(&f->bc, 2, TICK_BROADCAST_ON);
	KUNIT_EXPECT_FALSE(test, ch.joined);
	ch = tick_bc_control(&f->bc, 1, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_TRUE(test, ch.left);
	KUNIT_EXPECT_FALSE(test, ch.last);
	ch = tick_bc_control(&f->bc, 2, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_TRUE(test, ch.left);
	KUNIT_EXPECT_TRUE(test, ch.last);
	KUNIT_EXPECT_TRUE(test, tick_bc_periodic_empty(&f->bc));
}

static void force_is_global_and_irrevocable(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);
	struct tick_bc_change ch;

	tick_bc_control(&f->bc, 1, TICK_BROADCAST_ON);
	tick_bc_control(&f->bc, 2, TICK_BROADCAST_FORCE);
	ch = tick_bc_control(&f->bc, 1, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_FALSE(test, ch.left);
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.on));
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.periodic));
	KUNIT_EXPECT_TRUE(test, test_bit(2, f->bc.periodic));
}

static void off_clears_on_and_periodic(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);

	tick_bc_control(&f->bc, 3, TICK_BROADCAST_ON);
	tick_bc_control(&f->bc, 3, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_FALSE(test, test_bit(3, f->bc.on));
	KUNIT_EXPECT_FALSE(test, test_bit(3, f->bc.periodic));
}

static void periodic_wake_is_online_mask_but_self(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);

	tick_bc_control(&f->bc, 0, TICK_BROADCAST_ON);
	tick_bc_control(&f->bc, 2, TICK_BROADCAST_ON);
	tick_bc_control(&f->bc, 5, TICK_BROADCAST_ON);
	__clear_bit(5, f->online);

	KUNIT_EXPECT_TRUE(test, tick_bc_periodic_wake(&f->bc, 0, f->wake));
	KUNIT_EXPECT_EQ(test, nr_woken(f), 1);
	KUNIT_EXPECT_TRUE(test, woken(f, 2));
}

static void periodic_hrtimer_never_runs_self(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, true);

	tick_bc_control(&f->bc, 0, TICK_BROADCAST_ON);
	KUNIT_EXPECT_FALSE(test, tick_bc_periodic_wake(&f->bc, 0, f->wake));
	KUNIT_EXPECT_EQ(test, nr_woken(f), 0);
}

static void enter_in_periodic_mode_keeps_local_device(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);
	struct fake *h = fake_new(test, NR_TEST_CPUS, true);
	struct tick_bc_enter_out out;

	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 1, 100, &out), TICK_BC_ENTER_PERIODIC);
	KUNIT_EXPECT_FALSE(test, out.stop_local);
	KUNIT_EXPECT_EQ(test, tick_bc_enter(&h->bc, 1, 100, &out), TICK_BC_ENTER_BUSY_HRTIMER);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, 100, 50), TICK_BC_EXIT_NONE);
	KUNIT_EXPECT_EQ(test, f->arms, 0);
}

/* ------------------------------------------------------------ switch */

static void first_switch_hands_over_periodic_cpus(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);
	unsigned int cpu;

	for (cpu = 0; cpu < 4; cpu++)
		tick_bc_control(&f->bc, cpu, TICK_BROADCAST_ON);

	KUNIT_EXPECT_TRUE(test, tick_bc_switch_oneshot(&f->bc, 0, true, 1000, false));
	KUNIT_EXPECT_FALSE(test, test_bit(0, f->bc.oneshot));
	for (cpu = 1; cpu < 4; cpu++)
		KUNIT_EXPECT_TRUE(test, tick_bc_sleeping(&f->bc, cpu));
	KUNIT_EXPECT_EQ(test, f->arms, 1);
	KUNIT_EXPECT_EQ(test, f->armed_at, 1000);

	/* One period later every handed-over CPU gets its tick. */
	fire(f, 0, 1000);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 3);
	KUNIT_EXPECT_FALSE(test, woken(f, 0));
}

static void switch_keeps_emulated_periodic_arming(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);

	tick_bc_control(&f->bc, 1, TICK_BROADCAST_ON);
	KUNIT_EXPECT_FALSE(test, tick_bc_switch_oneshot(&f->bc, 0, true, 1000, true));
	KUNIT_EXPECT_EQ(test, f->arms, 0);
	KUNIT_EXPECT_EQ(test, f->bc.armed, 1000);
}

static void later_switch_resets_own_bits(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);

	tick_bc_control(&f->bc, 1, TICK_BROADCAST_ON);
	tick_bc_switch_oneshot(&f->bc, 0, true, 1000, false);
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.oneshot));

	tick_bc_switch_oneshot(&f->bc, 1, true, 2000, false);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_FALSE(test, tick_bc_sleeping(&f->bc, 1));
	/* Its next enter arms the device again. */
	f->bc.armed = KTIME_MAX;
	KUNIT_EXPECT_EQ(test, enter(f, 1, 500), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_EQ(test, f->armed_at, 500);
}

static void switch_without_device_hands_over_nothing(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, false);

	tick_bc_set_device(&f->bc, NULL);
	tick_bc_control(&f->bc, 1, TICK_BROADCAST_ON);
	KUNIT_EXPECT_FALSE(test, tick_bc_switch_oneshot(&f->bc, 0, true, 1000, false));
	KUNIT_EXPECT_EQ(test, f->bc.dev.mode, TICKDEV_MODE_ONESHOT);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
}

/* ------------------------------------------------------------ enter/exit */

static void enter_queues_and_arms_the_earliest(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);
	struct tick_bc_enter_out out;

	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 1, 100, &out), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_TRUE(test, out.stop_local);
	KUNIT_EXPECT_EQ(test, f->armed_at, 100);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 1);

	KUNIT_EXPECT_EQ(test, enter(f, 2, 50), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_EQ(test, f->armed_at, 50);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 2);

	KUNIT_EXPECT_EQ(test, enter(f, 3, 200), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_EQ(test, f->arms, 2);
	KUNIT_EXPECT_TRUE(test, test_bit(3, f->bc.oneshot));
}

static void enter_without_event_never_arms(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	KUNIT_EXPECT_EQ(test, enter(f, 1, KTIME_MAX), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_EQ(test, f->arms, 0);
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_FALSE(test, tick_bc_sleeping(&f->bc, 1));
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, KTIME_MAX, 10), TICK_BC_EXIT_NO_EVENT);
}

static void exit_reprograms_a_future_event(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 100);
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, 100, 60), TICK_BC_EXIT_REPROGRAM);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_FALSE(test, tick_bc_sleeping(&f->bc, 1));
}

static void exit_after_expiry_forces_the_cpu(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 100);
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, 100, 120), TICK_BC_EXIT_FORCED);
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.force));
	KUNIT_EXPECT_EQ(test, f->bc.nr_force, 1);

	/* The late broadcast interrupt wakes it whatever its time. */
	fire(f, 0, 121);
	KUNIT_EXPECT_TRUE(test, woken(f, 1));
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.force));
	KUNIT_EXPECT_EQ(test, f->bc.nr_force, 0);
}

/*
 * An expiry between an exit and its late step finds the CPU gone: the
 * late step finds the device not due and reprograms; with another
 * sleeper due first, the device is due and the CPU forced.
 */
static void expiry_between_exit_and_late_step(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 100);
	KUNIT_EXPECT_EQ(test, tick_bc_exit(&f->bc, 1, 100), TICK_BC_EXIT_REPROGRAM);
	fire(f, 0, 120);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 0);
	KUNIT_EXPECT_EQ(test, f->bc.armed, KTIME_MAX);
	KUNIT_EXPECT_FALSE(test, tick_bc_exit_late(&f->bc, 1, 100, 120));
	KUNIT_EXPECT_EQ(test, f->bc.nr_force, 0);

	enter(f, 1, 200);
	enter(f, 2, 210);
	KUNIT_EXPECT_EQ(test, tick_bc_exit(&f->bc, 1, 200), TICK_BC_EXIT_REPROGRAM);
	fire(f, 0, 205);
	KUNIT_EXPECT_EQ(test, f->bc.armed, 210);
	KUNIT_EXPECT_FALSE(test, tick_bc_exit_late(&f->bc, 1, 200, 205));
	KUNIT_EXPECT_TRUE(test, tick_bc_exit_late(&f->bc, 1, 200, 215));
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.force));
	fire(f, 0, 215);
	KUNIT_EXPECT_TRUE(test, woken(f, 1) && woken(f, 2));
}

/* The device is not due, so the local device is the quicker way. */
static void exit_expired_before_device_due_reprograms(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 100);
	/* Its event moved to 40 while it slept; now is 60, device due at 100. */
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, 40, 60), TICK_BC_EXIT_REPROGRAM);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.force));
}

static void exit_without_enter_is_a_noop(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 2, 100, 10), TICK_BC_EXIT_NONE);
	KUNIT_EXPECT_EQ(test, f->bc.nr_force, 0);
}

static void pending_exit_does_not_reprogram(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 100);
	fire(f, 0, 100);
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.pending));
	/* It wakes for another reason before the IPI is handled. */
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, 100, 101), TICK_BC_EXIT_WOKEN);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.pending));
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.force));
}

/* A refused enter leaves no trace. */
static void forced_enter_is_refused_without_trace(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);
	struct tick_bc_enter_out out;

	enter(f, 1, 100);
	exit_at(&f->bc, 1, 100, 120);
	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 1, 300, &out), TICK_BC_ENTER_BUSY_FORCED);
	KUNIT_EXPECT_FALSE(test, out.stop_local);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_FALSE(test, tick_bc_sleeping(&f->bc, 1));

	/* The caller ignored the refusal; expiry still wakes it. */
	fire(f, 0, 121);
	KUNIT_EXPECT_TRUE(test, woken(f, 1));
	KUNIT_EXPECT_EQ(test, enter(f, 1, 300), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_TRUE(test, tick_bc_sleeping(&f->bc, 1));
}

static void enter_while_pending_arms_nothing(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);
	int arms;

	enter(f, 1, 100);
	fire(f, 0, 100);
	arms = f->arms;
	KUNIT_EXPECT_EQ(test, enter(f, 1, 150), TICK_BC_ENTER_PENDING);
	KUNIT_EXPECT_EQ(test, f->arms, arms);
	KUNIT_EXPECT_FALSE(test, tick_bc_sleeping(&f->bc, 1));
}

/* ------------------------------------------------------------ expiry */

static void expiry_wakes_the_expired_and_rearms(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 10);
	enter(f, 2, 20);
	enter(f, 3, 30);
	KUNIT_EXPECT_FALSE(test, fire(f, 0, 20));
	KUNIT_EXPECT_EQ(test, nr_woken(f), 2);
	KUNIT_EXPECT_TRUE(test, woken(f, 1));
	KUNIT_EXPECT_TRUE(test, woken(f, 2));
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.pending));
	KUNIT_EXPECT_EQ(test, f->armed_at, 30);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 3);

	/* Nobody left after this one: the device is left disarmed. */
	fire(f, 0, 30);
	KUNIT_EXPECT_EQ(test, f->bc.armed, KTIME_MAX);
}

/* Past the first word of the masks, the CPU numbers are the same. */
static void expiry_past_the_first_word(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, 130, false);

	enter(f, 1, 300);
	enter(f, 65, 10);
	enter(f, 70, 200);
	enter(f, 129, 100);
	fire(f, 0, 10);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 1);
	KUNIT_EXPECT_TRUE(test, woken(f, 65));
	KUNIT_EXPECT_TRUE(test, test_bit(65, f->bc.pending));
	KUNIT_EXPECT_EQ(test, f->armed_at, 100);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 129);

	fire(f, 0, 100);
	KUNIT_EXPECT_TRUE(test, woken(f, 129));
	KUNIT_EXPECT_EQ(test, f->armed_at, 200);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 70);
}

/*
 * An early exit takes the CPU out of the sleepers: entering again for the
 * same time arms nothing new, an expiry at its old time wakes nobody, and
 * the device is re-armed for those still asleep.
 */
static void early_exit_leaves_no_sleeper_behind(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);
	int arms;

	enter(f, 1, 100);
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, 100, 50), TICK_BC_EXIT_REPROGRAM);
	KUNIT_EXPECT_FALSE(test, tick_bc_sleeping(&f->bc, 1));

	arms = f->arms;
	KUNIT_EXPECT_EQ(test, enter(f, 1, 100), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_TRUE(test, tick_bc_sleeping(&f->bc, 1));
	KUNIT_EXPECT_EQ(test, f->arms, arms);
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 1, 100, 60), TICK_BC_EXIT_REPROGRAM);

	/* Gone from 100, asleep to 40 and 200: 40 fires, then 200, not 100. */
	enter(f, 2, 40);
	enter(f, 3, 200);
	fire(f, 0, 40);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 1);
	KUNIT_EXPECT_TRUE(test, woken(f, 2));
	KUNIT_EXPECT_EQ(test, f->armed_at, 200);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 3);

	/* A CPU that left before its time is not woken at that time. */
	enter(f, 4, 300);
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 4, 300, 250), TICK_BC_EXIT_REPROGRAM);
	fire(f, 0, 300);
	KUNIT_EXPECT_FALSE(test, woken(f, 4));
	KUNIT_EXPECT_FALSE(test, test_bit(4, f->bc.pending));

	/* Entering again for another time takes that time. */
	enter(f, 5, 500);
	exit_at(&f->bc, 5, 500, 400);
	enter(f, 5, 450);
	KUNIT_EXPECT_EQ(test, f->armed_at, 450);
}

static void expiry_handles_this_cpu_directly(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);
	struct fake *h = fake_oneshot(test, NR_TEST_CPUS, true);

	enter(f, 2, 10);
	enter(f, 3, 10);
	KUNIT_EXPECT_TRUE(test, fire(f, 2, 10));
	KUNIT_EXPECT_FALSE(test, woken(f, 2));
	KUNIT_EXPECT_TRUE(test, woken(f, 3));
	KUNIT_EXPECT_FALSE(test, test_bit(2, f->bc.pending));

	/* Never with the hrtimer device: its interrupt runs the timers already. */
	h->stuck_on = 5;
	enter(h, 2, 10);
	KUNIT_EXPECT_FALSE(test, fire(h, 2, 10));
	KUNIT_EXPECT_FALSE(test, woken(h, 2));
}

static bool warn;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "run the case that triggers the core's warning");

/*
 * The sleeper made offline behind the core's back trips its one-time
 * warning, which taints the kernel (and panics it with panic_on_warn):
 * only on request.
 */
static void expiry_never_wakes_an_offline_cpu(struct kunit *test)
{
	struct fake *f;

	if (!warn)
		kunit_skip(test, "triggers a WARNING; tick_broadcast_kunit.warn=1 runs it");
	f = fake_oneshot(test, NR_TEST_CPUS, false);
	enter(f, 4, 10);
	__clear_bit(4, f->online);
	kunit_info(test, "a WARNING about an offline sleeper is expected\n");
	fire(f, 0, 10);
	KUNIT_EXPECT_FALSE(test, woken(f, 4));
	KUNIT_EXPECT_FALSE(test, test_bit(4, f->bc.oneshot));
}

/* A woken CPU is not woken again by later expiries. */
static void woken_cpu_is_not_woken_twice(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 10);
	enter(f, 2, 20);
	fire(f, 0, 10);
	KUNIT_EXPECT_TRUE(test, woken(f, 1));
	fire(f, 0, 20);
	KUNIT_EXPECT_FALSE(test, woken(f, 1));
	KUNIT_EXPECT_TRUE(test, woken(f, 2));
	KUNIT_EXPECT_TRUE(test, test_bit(1, f->bc.oneshot));
}

static void new_device_fires_at_once_for_sleepers(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	KUNIT_EXPECT_FALSE(test, tick_bc_retrigger(&f->bc));
	enter(f, 1, 100);
	enter(f, 2, 200);
	tick_bc_set_device(&f->bc, &fake_bc_dev);
	KUNIT_EXPECT_EQ(test, f->bc.armed, KTIME_MAX);
	KUNIT_EXPECT_TRUE(test, tick_bc_retrigger(&f->bc));
	KUNIT_EXPECT_EQ(test, f->armed_at, 0);

	/* It fires at once and re-evaluates every sleeper. */
	fire(f, 0, 5);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 0);
	KUNIT_EXPECT_EQ(test, f->armed_at, 100);
}

/*
 * A device that replaces the hrtimer one is not treated as it: a CPU may
 * rely on its periodic broadcast, and an arming enter stops its local
 * device without asking where the device runs.
 */
static void replacing_the_hrtimer_device_drops_its_rules(struct kunit *test)
{
	struct fake *f = fake_new(test, NR_TEST_CPUS, true);
	struct tick_bc_enter_out out;

	KUNIT_EXPECT_EQ(test, enter(f, 1, 100), TICK_BC_ENTER_BUSY_HRTIMER);
	tick_bc_set_device(&f->bc, &fake_bc_dev);
	KUNIT_EXPECT_EQ(test, enter(f, 1, 100), TICK_BC_ENTER_PERIODIC);

	tick_bc_switch_oneshot(&f->bc, 0, true, 0, false);
	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 1, 100, &out), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_TRUE(test, out.armed);
	KUNIT_EXPECT_TRUE(test, out.stop_local);
	KUNIT_EXPECT_EQ(test, f->owner_calls, 0);
}

/* The device stays needed while anybody sleeps on it or is forced. */
static void device_busy_while_anybody_relies_on_it(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	KUNIT_EXPECT_FALSE(test, tick_bc_busy(&f->bc));
	enter(f, 1, 100);
	KUNIT_EXPECT_TRUE(test, tick_bc_busy(&f->bc));
	exit_at(&f->bc, 1, 100, 120);
	KUNIT_EXPECT_TRUE(test, tick_bc_busy(&f->bc));
	fire(f, 0, 120);
	KUNIT_EXPECT_FALSE(test, tick_bc_busy(&f->bc));
}

/* ------------------------------------------------------------ hrtimer */

/*
 * The CPU holding the hrtimer device may not sleep. While the CPU its last
 * arming found it on is online, that is the holder, and no enter asks
 * ops->owner(). When that CPU dies, the hotplug code moves the timer to
 * another CPU without arming it, before the pull: enters ask then.
 */
static void hrtimer_owner_may_not_sleep(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, true);

	/* CPU 1 arms it on itself and backs out. */
	KUNIT_EXPECT_EQ(test, enter(f, 1, 100), TICK_BC_ENTER_BUSY_OWNER);
	f->owner_calls = 0;
	KUNIT_EXPECT_EQ(test, enter(f, 3, 200), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_EQ(test, enter(f, 1, 300), TICK_BC_ENTER_BUSY_OWNER);
	KUNIT_EXPECT_EQ(test, f->owner_calls, 0);

	/* CPU 1 dies: offline first, then its timer goes to CPU 2. */
	__clear_bit(1, f->online);
	tick_bc_offline(&f->bc, 1);
	f->owner = 2;
	KUNIT_EXPECT_TRUE(test, tick_bc_owner_busy(&f->bc, 2));
	KUNIT_EXPECT_EQ(test, enter(f, 2, 300), TICK_BC_ENTER_BUSY_OWNER);
	KUNIT_EXPECT_FALSE(test, test_bit(2, f->bc.oneshot));
	KUNIT_EXPECT_EQ(test, enter(f, 4, 300), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_GT(test, f->owner_calls, 0);

	/* The pull re-arms it on the control CPU 0: CPU 2 may sleep. */
	f->caller = 0;
	tick_bc_pull(&f->bc, 1, 0);
	f->caller = -1;
	KUNIT_EXPECT_EQ(test, f->bc.armed_on, 0);
	KUNIT_EXPECT_EQ(test, enter(f, 2, 300), TICK_BC_ENTER_QUEUED);
}

static void hrtimer_arming_cpu_backs_out(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, true);
	struct tick_bc_enter_out out;

	/* CPU 1 is the earliest: it arms the timer on itself. */
	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 1, 100, &out), TICK_BC_ENTER_BUSY_OWNER);
	KUNIT_EXPECT_FALSE(test, out.stop_local);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_EQ(test, f->armed_at, 100);

	/* CPU 3 sleeps later than that: it may stop its local device. */
	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 3, 200, &out), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_TRUE(test, out.stop_local);
}

static void hrtimer_owner_follows_a_running_callback(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, true);
	struct tick_bc_enter_out out;

	/* The callback runs on CPU 3: arming from CPU 1 leaves it there. */
	f->stuck_on = 3;
	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 1, 100, &out), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_FALSE(test, out.stop_local);
	KUNIT_EXPECT_EQ(test, enter(f, 3, 200), TICK_BC_ENTER_BUSY_OWNER);
}

/* ------------------------------------------------------------ hotplug */

static void offline_clears_every_trace(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	tick_bc_control(&f->bc, 1, TICK_BROADCAST_ON);
	tick_bc_control(&f->bc, 2, TICK_BROADCAST_ON);
	enter(f, 1, 100);
	enter(f, 2, 100);
	exit_at(&f->bc, 2, 100, 150);
	tick_bc_offline(&f->bc, 1);
	tick_bc_offline(&f->bc, 2);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.on));
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.periodic));
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_FALSE(test, tick_bc_sleeping(&f->bc, 1));
	KUNIT_EXPECT_FALSE(test, test_bit(2, f->bc.force));
	KUNIT_EXPECT_EQ(test, f->bc.nr_force, 0);
	/* The device keeps its arming in oneshot mode. */
	KUNIT_EXPECT_EQ(test, f->bc.armed, 100);
}

static void pull_moves_the_hrtimer_and_unforces(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, true);

	enter(f, 0, 100);	/* CPU 0 arms it on itself and backs out */
	enter(f, 1, 150);
	exit_at(&f->bc, 1, 150, 120);
	/* CPU 2, the control CPU, is forced. */
	f->bc.armed = 100;
	__set_bit(2, f->bc.force);
	f->bc.nr_force++;

	KUNIT_EXPECT_FALSE(test, tick_bc_pull(&f->bc, 5, 2));
	KUNIT_EXPECT_TRUE(test, tick_bc_pull(&f->bc, 0, 2));
	KUNIT_EXPECT_EQ(test, f->owner, 2);
	KUNIT_EXPECT_EQ(test, f->armed_at, 100);
	KUNIT_EXPECT_FALSE(test, test_bit(2, f->bc.force));
}

/*
 * The hotplug code moved the timer off the dead CPU before the pull, to
 * the control CPU, which is forced: in low resolution mode the timer runs
 * there only at that CPU's tick, which nothing programs. The pull still
 * takes the timer and drops the force bit.
 */
static void pull_takes_a_timer_the_hotplug_code_moved(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, true);

	f->caller = 1;
	enter(f, 3, 100);	/* armed from CPU 1, which stays awake */
	f->caller = -1;
	KUNIT_ASSERT_EQ(test, f->owner, 1);
	enter(f, 4, 150);
	exit_at(&f->bc, 4, 150, 120);
	/* CPU 2, the control CPU, is forced ... */
	__set_bit(2, f->bc.force);
	f->bc.nr_force++;
	/* ... and got CPU 1's timers when CPU 1 died. */
	f->owner = 2;

	KUNIT_EXPECT_TRUE(test, tick_bc_pull(&f->bc, 1, 2));
	KUNIT_EXPECT_EQ(test, f->owner, 2);
	KUNIT_EXPECT_EQ(test, f->armed_at, 100);
	KUNIT_EXPECT_FALSE(test, test_bit(2, f->bc.force));
	/* Another CPU's death pulls nothing. */
	KUNIT_EXPECT_FALSE(test, tick_bc_pull(&f->bc, 5, 2));
}

static void setup_resets_a_running_cpu(struct kunit *test)
{
	struct fake *f = fake_oneshot(test, NR_TEST_CPUS, false);

	enter(f, 1, 100);
	fire(f, 0, 100);
	tick_bc_cpu_reset(&f->bc, 1);
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.oneshot));
	KUNIT_EXPECT_FALSE(test, test_bit(1, f->bc.pending));
}

/* ------------------------------------------------------------ coalescing */

/* Oneshot mode, every CPU's tick in oneshot mode, coalescing window @w. */
static struct fake *fake_coalescing(struct kunit *test, unsigned int nr, u64 w)
{
	struct fake *f = fake_oneshot(test, nr, false);
	unsigned int cpu;

	for (cpu = 1; cpu < nr; cpu++)
		tick_bc_switch_oneshot(&f->bc, cpu, true, 0, false);
	KUNIT_ASSERT_EQ(test, tick_bc_set_window(&f->bc, w), 0);
	return f;
}

static void coalescing_wakes_the_followers_within_the_window(struct kunit *test)
{
	struct fake *f = fake_coalescing(test, NR_TEST_CPUS, 50);

	enter(f, 1, 100);
	enter(f, 2, 130);
	enter(f, 3, 150);
	enter(f, 4, 151);
	enter(f, 5, 400);
	/* Armed for the earliest sleeper, never later. */
	KUNIT_EXPECT_EQ(test, f->armed_at, 100);

	fire(f, 0, 100);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 3);
	KUNIT_EXPECT_TRUE(test, woken(f, 1) && woken(f, 2) && woken(f, 3));
	KUNIT_EXPECT_TRUE(test, test_bit(2, f->bc.pending));
	KUNIT_EXPECT_EQ(test, f->armed_at, 151);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 4);

	/* A late interrupt: the due ones, and the window counts from now. */
	fire(f, 0, 360);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 2);
	KUNIT_EXPECT_TRUE(test, woken(f, 4) && woken(f, 5));
	KUNIT_EXPECT_EQ(test, f->bc.armed, KTIME_MAX);
}

static void coalescing_off_wakes_only_the_due(struct kunit *test)
{
	struct fake *f = fake_coalescing(test, NR_TEST_CPUS, 50);

	enter(f, 1, 100);
	enter(f, 2, 130);
	fire(f, 0, 100);
	KUNIT_EXPECT_TRUE(test, woken(f, 2));
	exit_at(&f->bc, 2, 130, 101);

	KUNIT_ASSERT_EQ(test, tick_bc_set_window(&f->bc, 0), 0);
	KUNIT_EXPECT_EQ(test, enter(f, 2, 130), TICK_BC_ENTER_QUEUED);
	enter(f, 3, 131);
	fire(f, 0, 130);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 1);
	KUNIT_EXPECT_TRUE(test, woken(f, 2));
	KUNIT_EXPECT_EQ(test, f->armed_at, 131);
}

/*
 * Only CPUs whose tick handler runs only what is due: a periodic tick
 * handler moves jiffies, the low resolution one handles a whole tick.
 */
static void coalescing_skips_cpus_with_a_periodic_tick(struct kunit *test)
{
	struct fake *f = fake_coalescing(test, NR_TEST_CPUS, 50);

	tick_bc_offline(&f->bc, 3);	/* back online, not switched yet */
	enter(f, 1, 100);
	enter(f, 3, 120);
	enter(f, 4, 140);
	fire(f, 0, 100);
	KUNIT_EXPECT_EQ(test, nr_woken(f), 2);
	KUNIT_EXPECT_TRUE(test, woken(f, 1) && woken(f, 4));
	KUNIT_EXPECT_TRUE(test, tick_bc_sleeping(&f->bc, 3));
	KUNIT_EXPECT_EQ(test, f->armed_at, 120);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 3);

	/* Once it switched to hrtimer_interrupt(), it may be woken early too. */
	tick_bc_switch_oneshot(&f->bc, 5, true, 0, false);
	KUNIT_EXPECT_TRUE(test, test_bit(5, f->bc.early_ok));
	KUNIT_EXPECT_FALSE(test, test_bit(3, f->bc.early_ok));
}

/*
 * A CPU whose tick switched to oneshot mode without hrtimer_interrupt()
 * (the low resolution NOHZ handler, which runs update_process_times()
 * whenever it is called) is woken at its time, not early: an early wake
 * would handle its tick twice.
 */
static void coalescing_skips_cpus_with_a_low_resolution_tick(struct kunit *test)
{
	struct fake *f = fake_coalescing(test, NR_TEST_CPUS, 50);

	tick_bc_switch_oneshot(&f->bc, 3, false, 0, false);
	KUNIT_EXPECT_FALSE(test, test_bit(3, f->bc.early_ok));
	enter(f, 1, 100);
	enter(f, 3, 120);
	enter(f, 4, 140);
	fire(f, 0, 100);
	KUNIT_EXPECT_TRUE(test, woken(f, 1) && woken(f, 4));
	KUNIT_EXPECT_FALSE(test, woken(f, 3));
	KUNIT_EXPECT_TRUE(test, tick_bc_sleeping(&f->bc, 3));
	KUNIT_EXPECT_EQ(test, f->armed_at, 120);
}

/*
 * A CPU woken early that comes back to deep idle for the same time is
 * queued, and the device re-armed for it: a caller may ignore a refusal
 * and stop the local timer anyway (default_idle_call() with the AMD C1E
 * erratum), and would sleep with nothing armed for it.
 */
static void coalesced_cpu_reentering_for_the_same_time_is_queued(struct kunit *test)
{
	struct fake *f = fake_coalescing(test, NR_TEST_CPUS, 50);
	struct tick_bc_enter_out out;

	enter(f, 1, 100);
	enter(f, 2, 130);
	fire(f, 0, 100);
	KUNIT_EXPECT_TRUE(test, woken(f, 2));
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 2, 130, 101), TICK_BC_EXIT_WOKEN);
	KUNIT_EXPECT_EQ(test, tick_bc_enter(&f->bc, 2, 130, &out), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_TRUE(test, out.stop_local);
	KUNIT_EXPECT_TRUE(test, tick_bc_sleeping(&f->bc, 2));
	KUNIT_EXPECT_EQ(test, f->armed_at, 130);
	KUNIT_EXPECT_EQ(test, f->armed_cpu, 2);
}

/* The handling CPU itself may be due within the window. */
static void coalescing_runs_this_cpu_early_too(struct kunit *test)
{
	struct fake *f = fake_coalescing(test, NR_TEST_CPUS, 50);

	enter(f, 1, 100);
	enter(f, 2, 120);
	KUNIT_EXPECT_TRUE(test, fire(f, 2, 100));
	KUNIT_EXPECT_FALSE(test, woken(f, 2));
	KUNIT_EXPECT_FALSE(test, test_bit(2, f->bc.pending));
	/* Its exit sees a future event: its local device is reprogrammed. */
	KUNIT_EXPECT_EQ(test, exit_at(&f->bc, 2, 120, 101), TICK_BC_EXIT_REPROGRAM);
	KUNIT_EXPECT_EQ(test, enter(f, 2, 120), TICK_BC_ENTER_QUEUED);
	KUNIT_EXPECT_EQ(test, f->armed_at, 120);
}

static void coalescing_window_is_bounded(struct kunit *test)
{
	struct fake *f = fake_coalescing(test, NR_TEST_CPUS, 50);

	KUNIT_EXPECT_EQ(test, tick_bc_set_window(&f->bc, TICK_BC_WINDOW_MAX_NS + 1), -ERANGE);
	KUNIT_EXPECT_EQ(test, f->bc.window, 50);
	KUNIT_EXPECT_EQ(test, tick_bc_set_window(&f->bc, TICK_BC_WINDOW_MAX_NS), 0);
	KUNIT_EXPECT_EQ(test, f->bc.window, TICK_BC_WINDOW_MAX_NS);
}

static int s64_cmp(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/* Fewest points stabbing every [t - w, t]: the greedy offline optimum. */
static unsigned int greedy_stabs(s64 *t, unsigned int n, s64 w)
{
	unsigned int i, stabs = 0;
	s64 point = S64_MIN;

	sort(t, n, sizeof(*t), s64_cmp, NULL);
	for (i = 0; i < n; i++) {
		if (point != S64_MIN && t[i] <= point + w)
			continue;
		point = t[i];
		stabs++;
	}
	return stabs;
}

/*
 * With every wakeup time known at once and the device firing on time,
 * the rule needs exactly as many interrupts as the offline optimum, and
 * wakes every CPU within [t - w, t].
 */
static void coalescing_matches_the_greedy_optimum(struct kunit *test)
{
	const unsigned int nr = 64;
	const s64 w = 100;
	s64 *t = kunit_kcalloc(test, nr, sizeof(*t), GFP_KERNEL);
	struct rnd_state rnd;
	unsigned int round, cpu, irqs;
	struct fake *f;
	ktime_t now;

	KUNIT_ASSERT_NOT_NULL(test, t);
	prandom_seed_state(&rnd, 13);
	for (round = 0; round < 50; round++) {
		f = fake_coalescing(test, nr, w);
		for (cpu = 1; cpu < nr; cpu++) {
			t[cpu - 1] = 1000 + prandom_u32_state(&rnd) % (30 * w);
			enter(f, cpu, t[cpu - 1]);
		}
		for (irqs = 0; (now = f->bc.armed) != KTIME_MAX; irqs++) {
			fire(f, 0, now);
			for_each_set_bit(cpu, f->wake, nr) {
				KUNIT_ASSERT_GE(test, t[cpu - 1], now);
				KUNIT_ASSERT_LE(test, t[cpu - 1], now + w);
			}
		}
		KUNIT_EXPECT_EQ(test, irqs, greedy_stabs(t, nr - 1, w));
	}
}

/* ------------------------------------------------------------ random model */

enum model_state { M_AWAKE, M_ASLEEP, M_WOKEN, M_FORCED, M_OFFLINE };

/*
 * @early_ok: its tick is hrtimer_interrupt(); @early: woken before @wakeup;
 * @on: it asked for broadcast (ON or FORCE); @handed: handed over at the
 * switch to oneshot mode and still asleep for it.
 */
struct model {
	enum model_state	state;
	s64			wakeup;
	bool			early_ok;
	bool			early;
	bool			on;
	bool			handed;
};

/*
 * @window: the coalescing window, toggled between it and 0 with @toggle;
 * @exact: the device fires exactly at its time if an awake CPU can take
 * it, so that the run can check that nobody is woken after its time;
 * @hrtimer: start with the hrtimer device, and let device replacement
 * alternate between it and a real one; @periodic: start in periodic mode
 * (ON/OFF/FORCE, periodic ticks, the hand-over at the first switch);
 * @quiet: no summary line.
 */
struct sim_opts {
	s64			window;
	bool			toggle;
	bool			exact;
	bool			hrtimer;
	bool			periodic;
	bool			quiet;
};

/* What a run did, for its case to check that it did it. */
struct sim_counts {
	unsigned long		wakes;
	unsigned long		early;
	unsigned long		refused;
	unsigned long		forced;
	unsigned long		owner_refused;
	unsigned long		migrated;
	unsigned long		pulls;
	unsigned long		suspends;
	unsigned long		controls;
	unsigned long		handed;
	unsigned long		periodic_ticks;
};

struct sim {
	struct kunit		*test;
	struct fake		*f;
	struct model		*m;
	struct rnd_state	rnd;
	struct sim_opts		o;
	struct sim_counts	c;
	s64			window;
	s64			now;
	unsigned long		steps;
	bool			oneshot;
	bool			forced;
	bool			failed;
};

static u32 sim_rand(struct sim *s, u32 n)
{
	return prandom_u32_state(&s->rnd) % n;
}

static __printf(2, 3) void sim_fail(struct sim *s, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (s->failed)
		return;
	s->failed = true;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	KUNIT_FAIL(s->test, "step %lu, now %lld: %pV", s->steps, s->now, &vaf);
	va_end(args);
}

/* Report only the first failure of a run: the rest follow from it. */
#define SIM_CHECK(s, cond, ...)				\
	do {						\
		if (!(cond))				\
			sim_fail(s, __VA_ARGS__);	\
	} while (0)

/* A CPU running code (awake, or polling while forced) but @except. */
static unsigned int sim_running_cpu(struct sim *s, unsigned int except)
{
	unsigned int i, cpu = sim_rand(s, s->f->nr);

	for (i = 0; i < s->f->nr; i++, cpu = (cpu + 1) % s->f->nr) {
		if (cpu != except && (s->m[cpu].state == M_AWAKE || s->m[cpu].state == M_FORCED))
			return cpu;
	}
	return s->f->nr;
}

static unsigned int sim_nr_on(struct sim *s)
{
	unsigned int cpu, nr = 0;

	for (cpu = 0; cpu < s->f->nr; cpu++)
		nr += s->m[cpu].on;
	return nr;
}

/* Somebody relies on the oneshot broadcast, in the model. */
static bool sim_relied_on(struct sim *s)
{
	unsigned int cpu;

	for (cpu = 0; cpu < s->f->nr; cpu++) {
		enum model_state st = s->m[cpu].state;

		if (st == M_ASLEEP || st == M_WOKEN || st == M_FORCED)
			return true;
	}
	return false;
}

/* I1 to I6 of the design comment in tick-broadcast-core.c, and the model. */
static void sim_check(struct sim *s)
{
	struct tick_bc *bc = &s->f->bc;
	unsigned int cpu, forced = 0;
	ktime_t first = KTIME_MAX;
	int owner = s->f->owner;

	for (cpu = 0; cpu < s->f->nr; cpu++) {
		bool q = tick_bc_sleeping(bc, cpu);
		struct model *m = &s->m[cpu];

		if (q)
			first = min(first, bc->wakeup[cpu]);
		SIM_CHECK(s, !test_bit(cpu, bc->pending) || bc->wakeup[cpu] == KTIME_MAX,
			  "I1 broken for CPU%u", cpu);
		SIM_CHECK(s, !test_bit(cpu, bc->pending) || test_bit(cpu, bc->oneshot),
			  "I2 broken for CPU%u", cpu);
		SIM_CHECK(s, !test_bit(cpu, bc->force) || !test_bit(cpu, bc->oneshot),
			  "I4 broken for CPU%u", cpu);
		SIM_CHECK(s, test_bit(cpu, bc->early_ok) == m->early_ok,
			  "CPU%u early_ok bit disagrees with the model", cpu);
		forced += test_bit(cpu, bc->force);
		SIM_CHECK(s, q == (m->state == M_ASLEEP && m->wakeup != KTIME_MAX),
			  "CPU%u queued %d, model state %d", cpu, q, m->state);
		SIM_CHECK(s, test_bit(cpu, bc->force) == (m->state == M_FORCED),
			  "CPU%u force bit disagrees with the model", cpu);
		SIM_CHECK(s, test_bit(cpu, bc->pending) == (m->state == M_WOKEN),
			  "CPU%u pending bit disagrees with the model", cpu);
		SIM_CHECK(s, test_bit(cpu, bc->on) == m->on && test_bit(cpu, bc->periodic) == m->on,
			  "CPU%u on/periodic bits disagree with the model (on %d)", cpu, m->on);
	}
	SIM_CHECK(s, forced == bc->nr_force, "I4: nr_force %u, bits %u", bc->nr_force, forced);
	SIM_CHECK(s, bc->armed <= first, "I3: armed %lld after sleeper %lld", bc->armed, first);
	SIM_CHECK(s, !forced || bc->armed != KTIME_MAX, "I5: forced CPUs, device disarmed");
	SIM_CHECK(s, bc->armed == KTIME_MAX || s->f->armed_at <= bc->armed,
		  "I6: device fires at %lld, armed %lld", s->f->armed_at, bc->armed);
	SIM_CHECK(s, tick_bc_oneshot_mode(bc) == s->oneshot, "mode %d, model oneshot %d",
		  bc->dev.mode, s->oneshot);
	SIM_CHECK(s, bc->forced == s->forced, "FORCE latch %d, model %d", bc->forced, s->forced);
	/* The CPU noted at the last arming holds the timer while online. */
	if (tick_bc_hrtimer(bc) && bc->armed != KTIME_MAX && bc->armed_on >= 0 &&
	    test_bit(bc->armed_on, s->f->online))
		SIM_CHECK(s, bc->armed_on == owner, "hrtimer noted on CPU%d, runs on CPU%d",
			  bc->armed_on, owner);
	/* The hrtimer device runs on its owner: it must be running code. */
	if (tick_bc_hrtimer(bc) && bc->armed != KTIME_MAX)
		SIM_CHECK(s, owner >= 0 && owner < (int)s->f->nr &&
			  (s->m[owner].state == M_AWAKE || s->m[owner].state == M_FORCED),
			  "hrtimer broadcast on CPU%d, which is in state %d", owner,
			  owner >= 0 && owner < (int)s->f->nr ? s->m[owner].state : -1);
}

/* Due at an expiry at now: its time has come, or it is within the window. */
static bool sim_due(struct sim *s, struct model *m)
{
	if (m->state == M_FORCED)
		return true;
	if (m->state != M_ASLEEP || m->wakeup == KTIME_MAX)
		return false;
	return m->wakeup <= s->now || (m->early_ok && m->wakeup <= s->now + s->window);
}

/*
 * A woken sleeper: never woken after its time unless the device fired
 * late (@armed: the time it was armed for), never more than the window
 * before it.
 */
static void sim_woken(struct sim *s, unsigned int cpu, struct model *m, ktime_t armed)
{
	if (m->state == M_FORCED) {
		m->state = M_AWAKE;
		return;
	}
	SIM_CHECK(s, m->wakeup >= armed, "CPU%u due at %lld, device armed for %lld",
		  cpu, m->wakeup, armed);
	SIM_CHECK(s, m->wakeup >= s->now || !s->o.exact, "CPU%u woken late, due at %lld",
		  cpu, m->wakeup);
	SIM_CHECK(s, m->wakeup <= s->now + s->window, "CPU%u woken too early, due at %lld",
		  cpu, m->wakeup);
	m->early = m->wakeup > s->now;
	s->c.early += m->early;
	m->state = M_WOKEN;
	m->handed = false;
}

/* The device fires on @this_cpu, which is awake: compare with the model. */
static void sim_fire(struct sim *s, unsigned int this_cpu)
{
	struct fake *f = s->f;
	ktime_t armed = f->bc.armed;
	bool hrtimer = tick_bc_hrtimer(&f->bc);
	unsigned int cpu;
	bool local;

	/* A oneshot device fires once. */
	f->armed_at = KTIME_MAX;
	f->caller = this_cpu;
	local = fire(f, this_cpu, s->now);
	for (cpu = 0; cpu < f->nr; cpu++) {
		struct model *m = &s->m[cpu];
		bool due = sim_due(s, m);

		if (cpu == this_cpu) {
			/* The hrtimer device runs this CPU's timers itself. */
			SIM_CHECK(s, local == (due && !hrtimer), "CPU%u: local %d, due %d",
				  cpu, local, due);
			SIM_CHECK(s, !woken(f, cpu), "CPU%u IPIs itself", cpu);
			if (due)
				sim_woken(s, cpu, m, armed);
			if (m->state == M_WOKEN)
				m->state = M_AWAKE;
			continue;
		}
		SIM_CHECK(s, woken(f, cpu) == due, "CPU%u woken %d, due %d (state %d, wakeup %lld)",
			  cpu, woken(f, cpu), due, m->state, m->wakeup);
		if (!due)
			continue;
		s->c.wakes++;
		sim_woken(s, cpu, m, armed);
	}
}

/*
 * The CPU to take the device interrupt: the hrtimer device's owner, any
 * awake (or polling, forced) CPU for a real one; s->f->nr for none.
 */
static unsigned int sim_irq_cpu(struct sim *s)
{
	int owner = s->f->owner;

	if (!tick_bc_hrtimer(&s->f->bc))
		return sim_running_cpu(s, s->f->nr);
	if (owner >= 0 && owner < (int)s->f->nr &&
	    (s->m[owner].state == M_AWAKE || s->m[owner].state == M_FORCED))
		return owner;
	return s->f->nr;
}

/*
 * A new wakeup time, or often the same as before: the tick did not move.
 * A CPU woken early nearly always comes back for the same time.
 */
static s64 sim_wakeup(struct sim *s, struct model *m)
{
	if (m->wakeup > s->now && m->wakeup != KTIME_MAX && sim_rand(s, 8) < (m->early ? 7 : 4))
		return m->wakeup;
	return sim_rand(s, 16) ? s->now + 1 + sim_rand(s, 2000) : KTIME_MAX;
}

static void sim_enter(struct sim *s, unsigned int cpu)
{
	struct tick_bc *bc = &s->f->bc;
	struct model *m = &s->m[cpu];
	s64 wakeup = sim_wakeup(s, m);
	bool hrtimer = tick_bc_hrtimer(bc);
	/* The hrtimer device runs here, or would once this enter arms it. */
	bool owner = hrtimer && bc->armed != KTIME_MAX && s->f->owner == (int)cpu;
	bool arms = wakeup < bc->armed;
	enum tick_bc_enter_result ret;

	s->f->caller = cpu;
	ret = enter(s->f, cpu, wakeup);
	if (!s->oneshot) {
		SIM_CHECK(s, ret == (hrtimer ? TICK_BC_ENTER_BUSY_HRTIMER : TICK_BC_ENTER_PERIODIC),
			  "CPU%u: enter in periodic mode %d", cpu, ret);
		return;
	}
	if (owner) {
		SIM_CHECK(s, ret == TICK_BC_ENTER_BUSY_OWNER, "CPU%u: owner's enter %d", cpu, ret);
		s->c.owner_refused++;
		return;
	}

	switch (m->state) {
	case M_AWAKE:
	case M_ASLEEP:
		m->handed = false;
		if (hrtimer && arms) {
			SIM_CHECK(s, ret == TICK_BC_ENTER_BUSY_OWNER,
				  "CPU%u: enter arming the hrtimer %d", cpu, ret);
			s->c.owner_refused++;
			m->state = M_AWAKE;
			break;
		}
		SIM_CHECK(s, ret == TICK_BC_ENTER_QUEUED, "CPU%u: enter %d", cpu, ret);
		m->state = M_ASLEEP;
		m->wakeup = wakeup;
		m->early = false;
		break;
	case M_FORCED:
		SIM_CHECK(s, ret == TICK_BC_ENTER_BUSY_FORCED,
			  "CPU%u: forced enter not refused", cpu);
		s->c.refused++;
		break;
	case M_WOKEN:
		SIM_CHECK(s, ret == TICK_BC_ENTER_PENDING, "CPU%u: woken enter %d", cpu, ret);
		break;
	default:
		break;
	}
}

static void sim_exit(struct sim *s, unsigned int cpu)
{
	struct model *m = &s->m[cpu];
	/* A CPU woken by the IPI ran its timers, unless it was early. */
	s64 wakeup = m->state == M_WOKEN && !m->early ? s->now + 500 : m->wakeup;
	enum tick_bc_exit_action act;

	s->f->caller = cpu;
	act = exit_at(&s->f->bc, cpu, wakeup, s->now);
	switch (m->state) {
	case M_ASLEEP:
		m->handed = false;
		if (wakeup != KTIME_MAX && wakeup <= s->now && s->f->bc.armed <= s->now) {
			SIM_CHECK(s, act == TICK_BC_EXIT_FORCED,
				  "CPU%u: expired exit %d", cpu, act);
			m->state = M_FORCED;
			s->c.forced++;
		} else {
			SIM_CHECK(s, act == (wakeup == KTIME_MAX ? TICK_BC_EXIT_NO_EVENT :
					     TICK_BC_EXIT_REPROGRAM), "CPU%u: exit %d", cpu, act);
			m->state = M_AWAKE;
		}
		break;
	case M_WOKEN:
		SIM_CHECK(s, act == TICK_BC_EXIT_WOKEN, "CPU%u: woken exit %d", cpu, act);
		m->state = M_AWAKE;
		m->wakeup = wakeup;
		break;
	default:
		SIM_CHECK(s, act == TICK_BC_EXIT_NONE, "CPU%u: exit of an awake CPU %d", cpu, act);
		break;
	}
}

/*
 * An awake CPU goes offline, or an offline one comes back. The hrtimer
 * code may have moved the dying CPU's timers to a running CPU before the
 * pull, which a running control CPU then does.
 */
static void sim_hotplug(struct sim *s, unsigned int cpu)
{
	struct fake *f = s->f;
	struct model *m = &s->m[cpu];
	unsigned int ctl, to;
	bool pulls, forced, was_owner;

	if (m->state == M_OFFLINE) {
		__set_bit(cpu, f->online);
		tick_bc_cpu_reset(&f->bc, cpu);
		tick_bc_set_periodic(&f->bc, cpu, false);
		m->state = M_AWAKE;
		return;
	}
	ctl = sim_running_cpu(s, cpu);
	if (m->state != M_AWAKE || ctl >= f->nr)
		return;
	/*
	 * Offline first, then the tick's dying callback, then the hotplug
	 * code may move the timer, before the pull.
	 */
	__clear_bit(cpu, f->online);
	tick_bc_offline(&f->bc, cpu);
	*m = (struct model) { .state = M_OFFLINE };
	was_owner = f->owner == (int)cpu;
	if (was_owner && sim_rand(s, 2)) {
		to = sim_running_cpu(s, cpu);
		f->owner = to;
		s->c.migrated++;
	}

	pulls = tick_bc_hrtimer(&f->bc) && f->bc.armed != KTIME_MAX && was_owner;
	forced = s->m[ctl].state == M_FORCED;
	f->caller = ctl;
	SIM_CHECK(s, tick_bc_pull(&f->bc, cpu, ctl) == (pulls && forced),
		  "pull of CPU%u's hrtimer to CPU%u (forced %d)", cpu, ctl, forced);
	if (!pulls)
		return;
	s->c.pulls++;
	/* Its force bit is gone: it reprograms its own device. */
	if (forced)
		s->m[ctl].state = M_AWAKE;
}

/*
 * An awake CPU switches its tick to oneshot mode: mostly to
 * hrtimer_interrupt(), sometimes to the low resolution handler. The first
 * switch hands the CPUs of the periodic broadcast over until next_period;
 * a CPU so handed over switches itself in its tick.
 */
static void sim_switch(struct sim *s, unsigned int cpu)
{
	struct fake *f = s->f;
	struct model *m = &s->m[cpu];
	s64 next_period = s->now + 1 + sim_rand(s, 1000);
	unsigned int c, handed = 0;
	bool armed;

	if (m->state != M_AWAKE && !(m->state == M_ASLEEP && m->handed))
		return;
	m->early_ok = sim_rand(s, 4) != 0;
	m->state = M_AWAKE;
	m->handed = false;
	for (c = 0; c < f->nr && !s->oneshot; c++) {
		if (c == cpu || !s->m[c].on)
			continue;
		s->m[c].state = M_ASLEEP;
		s->m[c].wakeup = next_period;
		s->m[c].handed = true;
		handed++;
	}
	s->oneshot = true;
	s->c.handed += handed;
	f->caller = cpu;
	armed = tick_bc_switch_oneshot(&f->bc, cpu, m->early_ok, next_period, false);
	SIM_CHECK(s, armed == (handed > 0), "CPU%u: switch armed %d, %u handed over", cpu, armed,
		  handed);
}

/*
 * An awake CPU turns broadcast on or off, or forces it (rarely: it is for
 * good). The glue stops the device at the last OFF only when nobody
 * relies on it.
 */
static void sim_control(struct sim *s, unsigned int cpu)
{
	struct fake *f = s->f;
	struct model *m = &s->m[cpu];
	u32 r = sim_rand(s, 200);
	enum tick_broadcast_mode mode = !r ? TICK_BROADCAST_FORCE :
		r < 100 ? TICK_BROADCAST_ON : TICK_BROADCAST_OFF;
	unsigned int before = sim_nr_on(s), after;
	bool joined = false, left = false;
	struct tick_bc_change ch;

	if (m->state != M_AWAKE)
		return;
	if (mode == TICK_BROADCAST_FORCE)
		s->forced = true;
	if (mode != TICK_BROADCAST_OFF) {
		joined = !m->on;
		m->on = true;
	} else if (!s->forced) {
		left = m->on;
		m->on = false;
	}
	after = sim_nr_on(s);
	f->caller = cpu;
	ch = tick_bc_control(&f->bc, cpu, mode);
	SIM_CHECK(s, ch.joined == joined && ch.left == left && ch.first == (!before && after) &&
		  ch.last == (before && !after),
		  "CPU%u: control %d: joined %d left %d first %d last %d, %u on before, %u after",
		  cpu, mode, ch.joined, ch.left, ch.first, ch.last, before, after);
	s->c.controls++;
	if (ch.last && (!s->oneshot || !tick_bc_busy(&f->bc))) {
		f->armed_at = KTIME_MAX;
		tick_bc_disarmed(&f->bc);
	}
}

/* A periodic broadcast tick, before the switch to oneshot mode. */
static void sim_periodic_tick(struct sim *s)
{
	struct fake *f = s->f;
	unsigned int this_cpu = sim_running_cpu(s, f->nr), cpu;
	bool self;

	if (s->oneshot || this_cpu >= f->nr)
		return;
	f->caller = this_cpu;
	self = tick_bc_periodic_wake(&f->bc, this_cpu, f->wake);
	SIM_CHECK(s, self == (s->m[this_cpu].on && !tick_bc_hrtimer(&f->bc)),
		  "CPU%u: periodic tick runs itself %d", this_cpu, self);
	for (cpu = 0; cpu < f->nr; cpu++)
		SIM_CHECK(s, woken(f, cpu) == (cpu != this_cpu && s->m[cpu].on),
			  "CPU%u: periodic tick from CPU%u wakes it %d", cpu, this_cpu,
			  woken(f, cpu));
	s->c.periodic_ticks++;
}

/*
 * Suspend to idle: the device is shut down with CPUs asleep on it, time
 * passes (not when the run checks exact wakeups), and the resume on a
 * running CPU arms it at once for whoever relies on it.
 */
static void sim_suspend(struct sim *s)
{
	struct fake *f = s->f;
	unsigned int cpu = sim_running_cpu(s, f->nr);
	bool armed;

	if (!s->oneshot || cpu >= f->nr)
		return;
	f->armed_at = KTIME_MAX;
	tick_bc_disarmed(&f->bc);
	if (!s->o.exact)
		s->now += sim_rand(s, 3000);
	f->caller = cpu;
	armed = tick_bc_retrigger(&f->bc);
	SIM_CHECK(s, armed == sim_relied_on(s), "resume on CPU%u armed %d", cpu, armed);
	s->c.suspends++;
}

/*
 * A better device replaces the current one, registered on a running CPU:
 * the same kind, or with @hrtimer the other kind.
 */
static void sim_replace_device(struct sim *s)
{
	struct fake *f = s->f;
	unsigned int cpu = sim_running_cpu(s, f->nr);
	bool hrtimer = s->o.hrtimer && !tick_bc_hrtimer(&f->bc), armed;

	if (cpu >= f->nr)
		return;
	tick_bc_set_device(&f->bc, hrtimer ? &fake_hrtimer_dev : &fake_bc_dev);
	f->armed_at = KTIME_MAX;
	f->caller = cpu;
	armed = tick_bc_retrigger(&f->bc);
	SIM_CHECK(s, armed == (s->oneshot && sim_relied_on(s)), "new device armed %d", armed);
}

/* The window is switched off, or on again. */
static void sim_toggle_window(struct sim *s)
{
	s->window = s->window ? 0 : s->o.window;
	KUNIT_ASSERT_EQ(s->test, tick_bc_set_window(&s->f->bc, s->window), 0);
}

/*
 * Time passes. With exact firing the clock stops at the device's time,
 * where the device fires at once if a CPU can take it.
 */
static void sim_advance(struct sim *s)
{
	s64 next = s->now + sim_rand(s, 300);
	unsigned int cpu;

	if (!s->o.exact || s->f->armed_at > next) {
		s->now = next;
		return;
	}
	s->now = max_t(s64, s->now, s->f->armed_at);
	cpu = sim_irq_cpu(s);
	if (cpu < s->f->nr)
		sim_fire(s, cpu);
}

enum sim_op {
	OP_ENTER, OP_EXIT, OP_ADVANCE, OP_HOTPLUG, OP_REPLACE, OP_SWITCH, OP_CONTROL,
	OP_SUSPEND, OP_PERIODIC_TICK, OP_WINDOW, OP_NR
};

/* How often each step comes, in percent, in oneshot and in periodic mode. */
static const u8 sim_weights[2][OP_NR] = {
	{ 38, 34, 18, 4, 1, 1, 1, 1, 0, 2 },
	{ 10, 5, 5, 10, 5, 2, 50, 0, 13, 0 },
};

static enum sim_op sim_op(struct sim *s)
{
	const u8 *w = sim_weights[!s->oneshot];
	u32 r = sim_rand(s, 100);
	enum sim_op op;

	for (op = 0; op < OP_NR - 1 && r >= w[op]; op++)
		r -= w[op];
	return op;
}

static void sim_step(struct sim *s)
{
	unsigned int cpu = sim_rand(s, s->f->nr);
	enum sim_op op = sim_op(s);

	/* Offline CPUs come back soon. */
	if (s->m[cpu].state == M_OFFLINE && op <= OP_ADVANCE)
		op = OP_HOTPLUG;
	switch (op) {
	case OP_ENTER:
		sim_enter(s, cpu);
		break;
	case OP_EXIT:
		sim_exit(s, cpu);
		break;
	case OP_ADVANCE:
		sim_advance(s);
		break;
	case OP_HOTPLUG:
		sim_hotplug(s, cpu);
		break;
	case OP_REPLACE:
		sim_replace_device(s);
		break;
	case OP_SWITCH:
		sim_switch(s, cpu);
		break;
	case OP_CONTROL:
		sim_control(s, cpu);
		break;
	case OP_SUSPEND:
		sim_suspend(s);
		break;
	case OP_PERIODIC_TICK:
		sim_periodic_tick(s);
		break;
	default:
		if (s->o.toggle && !sim_rand(s, 10))
			sim_toggle_window(s);
		break;
	}

	/*
	 * An armed device fires once its time has come, on a CPU that can
	 * take it, though its interrupt may take a few steps to arrive: that
	 * is when CPUs exit after their event and get forced.
	 */
	if (s->f->armed_at <= s->now && sim_rand(s, 3) == 0) {
		cpu = sim_irq_cpu(s);
		if (cpu < s->f->nr)
			sim_fire(s, cpu);
	}
	sim_check(s);
	s->steps++;
}

static struct sim_counts sim_run_opts(struct kunit *test, unsigned int nr, unsigned long steps,
				      u64 seed, struct sim_opts o)
{
	struct sim s = { .test = test, .o = o, .window = o.window };
	unsigned int cpu;

	s.f = o.periodic ? fake_new(test, nr, o.hrtimer) : fake_oneshot(test, nr, o.hrtimer);
	s.f->armed_at = KTIME_MAX;
	s.oneshot = !o.periodic;
	s.m = kunit_kcalloc(test, nr, sizeof(*s.m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s.m);
	KUNIT_ASSERT_EQ(test, tick_bc_set_window(&s.f->bc, o.window), 0);
	prandom_seed_state(&s.rnd, seed);
	/* Every tick in oneshot mode but one, which switches later. */
	for (cpu = 0; cpu + 1 < nr && s.oneshot; cpu++)
		sim_switch(&s, cpu);

	while (s.steps < steps && !s.failed)
		sim_step(&s);
	if (!o.quiet)
		kunit_info(test, "seed %llu window %lld: %lu steps, %lu CPUs woken (%lu early), %lu refused forced, %lu forced, %lu refused owner, %lu pulls, %lu suspends, end time %lld\n",
			   seed, o.window, s.steps, s.c.wakes, s.c.early, s.c.refused, s.c.forced,
			   s.c.owner_refused, s.c.pulls, s.c.suspends, s.now);
	KUNIT_EXPECT_GT(test, s.c.wakes, steps / 100);
	/* Each CPU gets fewer of the steps the more there are. */
	if (!o.exact)
		KUNIT_EXPECT_GT(test, s.c.forced, steps / 1000 / DIV_ROUND_UP(nr, BITS_PER_LONG));
	/*
	 * Few enough to be sure the run cannot pass without them; a batch of
	 * quiet runs checks the sum instead.
	 */
	if (o.window && !o.quiet)
		KUNIT_EXPECT_GT(test, s.c.early, steps / 1000);
	return s.c;
}

static struct sim_counts sim_run(struct kunit *test, unsigned int nr, unsigned long steps,
				 u64 seed)
{
	return sim_run_opts(test, nr, steps, seed, (struct sim_opts) { });
}

/* Every step, each often enough to be sure it ran. */
static void random_model_8_cpus(struct kunit *test)
{
	struct sim_counts c = sim_run(test, 8, 50000, 1);

	KUNIT_EXPECT_GT(test, c.suspends, 100);
	KUNIT_EXPECT_GT(test, c.controls, 100);
}

static void random_model_64_cpus(struct kunit *test)
{
	sim_run(test, 64, 100000, 2);
}

/* More CPUs than a word of the masks holds, the last word partly used. */
static void random_model_130_cpus(struct kunit *test)
{
	sim_run(test, 130, 100000, 11);
}

/* Coalescing: nobody woken after its time, nor more than the window before. */
static void random_model_coalescing_8_cpus(struct kunit *test)
{
	sim_run_opts(test, 8, 50000, 3, (struct sim_opts) { .window = 150, .exact = true });
}

static void random_model_coalescing_64_cpus(struct kunit *test)
{
	sim_run_opts(test, 64, 100000, 4, (struct sim_opts) { .window = 400, .exact = true });
}

static void random_model_coalescing_130_cpus(struct kunit *test)
{
	sim_run_opts(test, 130, 100000, 12, (struct sim_opts) { .window = 400, .exact = true });
}

/* Late interrupts and forced CPUs, with the window switched off and on. */
static void random_model_coalescing_toggled(struct kunit *test)
{
	sim_run_opts(test, 16, 100000, 5, (struct sim_opts) { .window = 150, .toggle = true });
}

/*
 * The hrtimer device alternating with a real one: its owner refused, its
 * timer moved by the hotplug code or pulled by the control CPU.
 */
static void random_model_hrtimer_8_cpus(struct kunit *test)
{
	struct sim_counts c = sim_run_opts(test, 8, 50000, 6,
					   (struct sim_opts) { .hrtimer = true });

	KUNIT_EXPECT_GT(test, c.owner_refused, 100);
	KUNIT_EXPECT_GT(test, c.migrated, 10);
	KUNIT_EXPECT_GT(test, c.pulls, 10);
}

/* From periodic mode: ON/OFF/FORCE, periodic ticks, the hand-over. */
static void random_model_from_periodic_mode(struct kunit *test)
{
	struct sim_counts sum = { };
	u64 seed;

	for (seed = 100; seed < 140; seed++) {
		struct sim_counts c;

		c = sim_run_opts(test, 8, 4000, seed, (struct sim_opts) {
			.hrtimer = seed & 1, .window = seed & 2 ? 150 : 0, .periodic = true,
			.quiet = true });
		sum.handed += c.handed;
		sum.periodic_ticks += c.periodic_ticks;
		sum.controls += c.controls;
		sum.early += c.early;
		if (test->status == KUNIT_FAILURE)
			break;
	}
	kunit_info(test, "%lu handed over, %lu periodic ticks, %lu controls, %lu woken early\n",
		   sum.handed, sum.periodic_ticks, sum.controls, sum.early);
	KUNIT_EXPECT_GT(test, sum.handed, 40);
	KUNIT_EXPECT_GT(test, sum.periodic_ticks, 100);
	/* The 20 runs with a window: 4 early wakes each on average. */
	KUNIT_EXPECT_GT(test, sum.early, 80);
}

static struct kunit_case tick_broadcast_core_cases[] = {
	KUNIT_CASE(broadcast_device_eligibility),
	KUNIT_CASE(wakeup_device_eligibility),
	KUNIT_CASE(oneshot_mode_is_a_one_way_latch),
	KUNIT_CASE(on_off_report_mask_edges),
	KUNIT_CASE(force_is_global_and_irrevocable),
	KUNIT_CASE(off_clears_on_and_periodic),
	KUNIT_CASE(periodic_wake_is_online_mask_but_self),
	KUNIT_CASE(periodic_hrtimer_never_runs_self),
	KUNIT_CASE(enter_in_periodic_mode_keeps_local_device),
	KUNIT_CASE(first_switch_hands_over_periodic_cpus),
	KUNIT_CASE(switch_keeps_emulated_periodic_arming),
	KUNIT_CASE(later_switch_resets_own_bits),
	KUNIT_CASE(switch_without_device_hands_over_nothing),
	KUNIT_CASE(enter_queues_and_arms_the_earliest),
	KUNIT_CASE(enter_without_event_never_arms),
	KUNIT_CASE(exit_reprograms_a_future_event),
	KUNIT_CASE(exit_after_expiry_forces_the_cpu),
	KUNIT_CASE(expiry_between_exit_and_late_step),
	KUNIT_CASE(exit_expired_before_device_due_reprograms),
	KUNIT_CASE(exit_without_enter_is_a_noop),
	KUNIT_CASE(pending_exit_does_not_reprogram),
	KUNIT_CASE(forced_enter_is_refused_without_trace),
	KUNIT_CASE(enter_while_pending_arms_nothing),
	KUNIT_CASE(expiry_wakes_the_expired_and_rearms),
	KUNIT_CASE(expiry_past_the_first_word),
	KUNIT_CASE(early_exit_leaves_no_sleeper_behind),
	KUNIT_CASE(expiry_handles_this_cpu_directly),
	KUNIT_CASE(expiry_never_wakes_an_offline_cpu),
	KUNIT_CASE(woken_cpu_is_not_woken_twice),
	KUNIT_CASE(new_device_fires_at_once_for_sleepers),
	KUNIT_CASE(replacing_the_hrtimer_device_drops_its_rules),
	KUNIT_CASE(device_busy_while_anybody_relies_on_it),
	KUNIT_CASE(hrtimer_owner_may_not_sleep),
	KUNIT_CASE(hrtimer_arming_cpu_backs_out),
	KUNIT_CASE(hrtimer_owner_follows_a_running_callback),
	KUNIT_CASE(offline_clears_every_trace),
	KUNIT_CASE(pull_moves_the_hrtimer_and_unforces),
	KUNIT_CASE(pull_takes_a_timer_the_hotplug_code_moved),
	KUNIT_CASE(setup_resets_a_running_cpu),
	KUNIT_CASE(coalescing_wakes_the_followers_within_the_window),
	KUNIT_CASE(coalescing_off_wakes_only_the_due),
	KUNIT_CASE(coalescing_skips_cpus_with_a_periodic_tick),
	KUNIT_CASE(coalescing_skips_cpus_with_a_low_resolution_tick),
	KUNIT_CASE(coalesced_cpu_reentering_for_the_same_time_is_queued),
	KUNIT_CASE(coalescing_runs_this_cpu_early_too),
	KUNIT_CASE(coalescing_window_is_bounded),
	KUNIT_CASE(coalescing_matches_the_greedy_optimum),
	KUNIT_CASE(random_model_8_cpus),
	KUNIT_CASE(random_model_64_cpus),
	KUNIT_CASE(random_model_130_cpus),
	KUNIT_CASE(random_model_coalescing_8_cpus),
	KUNIT_CASE(random_model_coalescing_64_cpus),
	KUNIT_CASE(random_model_coalescing_130_cpus),
	KUNIT_CASE(random_model_coalescing_toggled),
	KUNIT_CASE(random_model_hrtimer_8_cpus),
	KUNIT_CASE(random_model_from_periodic_mode),
	{}
};

static struct kunit_suite tick_broadcast_core_suite = {
	.name = "tick_broadcast_core",
	.test_cases = tick_broadcast_core_cases,
};

/* ------------------------------------------------------------ benchmark */

static bool bench;
module_param(bench, bool, 0444);
MODULE_PARM_DESC(bench, "run the tick_broadcast_core_bench suite");

#define BENCH_ROUNDS	2000

static int bench_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 bench_median(u64 *ns, unsigned int nr)
{
	sort(ns, nr, sizeof(*ns), bench_cmp, NULL);
	return ns[nr / 2];
}

/*
 * Our expiry: CPU 0 handles the interrupt, CPUs 1..n sleep, CPU 1 has
 * expired. Every round CPU 1 goes back to sleep as the earliest.
 */
static u64 bench_core_expire(struct kunit *test, unsigned int n, u64 *ns)
{
	struct fake *f = fake_oneshot(test, n + 1, false);
	unsigned int cpu, i;
	u64 t0;

	for (cpu = 2; cpu <= n; cpu++)
		enter(f, cpu, 1000000 + cpu);
	for (i = 0; i < BENCH_ROUNDS; i++) {
		enter(f, 1, 1000);
		t0 = ktime_get_ns();
		fire(f, 0, 1000);
		ns[i] = ktime_get_ns() - t0;
		KUNIT_ASSERT_TRUE(test, woken(f, 1));
		exit_at(&f->bc, 1, 2000, 1001);
	}
	return bench_median(ns, BENCH_ROUNDS);
}

/* Per-CPU tick device stand-in, one cache line each, as a scan reads them. */
struct bench_dev {
	ktime_t next_event;
} ____cacheline_aligned;

/*
 * Expiry by scanning, for comparison: walk every CPU of the oneshot mask,
 * read its device's next event, collect the expired ones and the earliest
 * of the rest. Same CPUs, same times as above.
 */
static u64 bench_scan_expire(struct kunit *test, unsigned int n, u64 *ns)
{
	struct bench_dev *dev = kunit_kcalloc(test, n + 1, sizeof(*dev), GFP_KERNEL);
	unsigned long *oneshot = kunit_kcalloc(test, BITS_TO_LONGS(n + 1), sizeof(long),
					       GFP_KERNEL);
	unsigned long *wake = kunit_kcalloc(test, BITS_TO_LONGS(n + 1), sizeof(long),
					    GFP_KERNEL);
	unsigned int cpu, i;
	ktime_t next;
	u64 t0;

	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_NOT_NULL(test, oneshot);
	KUNIT_ASSERT_NOT_NULL(test, wake);
	for (cpu = 1; cpu <= n; cpu++) {
		dev[cpu].next_event = 1000000 + cpu;
		__set_bit(cpu, oneshot);
	}
	for (i = 0; i < BENCH_ROUNDS; i++) {
		WRITE_ONCE(dev[1].next_event, 1000);
		t0 = ktime_get_ns();
		next = KTIME_MAX;
		bitmap_zero(wake, n + 1);
		for_each_set_bit(cpu, oneshot, n + 1) {
			ktime_t t = READ_ONCE(dev[cpu].next_event);

			if (t <= 1000)
				__set_bit(cpu, wake);
			else if (t < next)
				next = t;
		}
		ns[i] = ktime_get_ns() - t0;
		KUNIT_ASSERT_TRUE(test, test_bit(1, wake));
		KUNIT_ASSERT_EQ(test, next, 1000002);
	}
	return bench_median(ns, BENCH_ROUNDS);
}

static void bench_expire_vs_sleepers(struct kunit *test)
{
	u64 *ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(*ns), GFP_KERNEL);
	unsigned int n;

	if (!bench)
		kunit_skip(test, "tick_broadcast_kunit.bench not set");
	KUNIT_ASSERT_NOT_NULL(test, ns);
	for (n = 8; n <= 512; n *= 2) {
		u64 core = bench_core_expire(test, n, ns);
		u64 scan = bench_scan_expire(test, n, ns);

		kunit_info(test, "bench_core_expire: n=%u expire_ns=%llu scan_ns=%llu\n",
			   n, core, scan);
	}
}

static struct kunit_case tick_broadcast_core_bench_cases[] = {
	KUNIT_CASE_SLOW(bench_expire_vs_sleepers),
	{}
};

static struct kunit_suite tick_broadcast_core_bench_suite = {
	.name = "tick_broadcast_core_bench",
	.test_cases = tick_broadcast_core_bench_cases,
};

kunit_test_suites(&tick_broadcast_core_suite, &tick_broadcast_core_bench_suite);

MODULE_DESCRIPTION("KUnit tests of the tick broadcast decision core");
MODULE_LICENSE("GPL");
