// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark of the tick broadcast API on the running kernel, identical for
 * every implementation of tick-broadcast.c: the cost of one
 * tick_broadcast_enter()/tick_broadcast_exit() pair on an awake CPU with
 * interrupts disabled, the pair cpuidle makes around every
 * CPUIDLE_FLAG_TIMER_STOP state.
 *
 * The case is marked slow, and it skips unless
 * tick_broadcast_bench_kunit.loops=N is given on the kernel command line.
 * It prints one line,
 *
 *   # bench_enter_exit: tick_broadcast_bench cpu=C batches=B pairs=P ns_per_pair=N
 *
 * N being the median over batches of the mean cost per pair.
 */

#include <kunit/test.h>
#include <linux/clockchips.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/tick.h>

#include "../tick-internal.h"

#define HAVE_ONESHOT_BROADCAST	(IS_ENABLED(CONFIG_GENERIC_CLOCKEVENTS_BROADCAST) && \
				 IS_ENABLED(CONFIG_TICK_ONESHOT))

/* The broadcast device, NULL if there is none. */
static struct clock_event_device *bc_device(void)
{
#ifdef CONFIG_GENERIC_CLOCKEVENTS_BROADCAST
	return tick_get_broadcast_device()->evtdev;
#else
	return NULL;
#endif
}

static unsigned int loops;
module_param(loops, uint, 0444);
MODULE_PARM_DESC(loops, "enter/exit pairs to time (0: skip the benchmark)");

#define PAIRS_PER_BATCH	100
/* A batch is left out if this CPU's event could expire during it. */
#define BATCH_MARGIN_NS	(2 * NSEC_PER_MSEC)

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * One batch of pairs with interrupts off. Return: ns per pair, or 0 if
 * the batch could not run (event too close, or the CPU cannot use the
 * broadcast).
 */
static u64 bench_batch(const char **why)
{
	struct clock_event_device *local, *bc;
	unsigned long flags;
	u64 t0, t1 = 0;
	int i;

	local_irq_save(flags);
	local = __this_cpu_read(tick_cpu_device.evtdev);
	bc = bc_device();
	if (!bc || !local || !(local->features & CLOCK_EVT_FEAT_C3STOP)) {
		*why = "no broadcast needed on this CPU";
		goto out;
	}
	if (!tick_broadcast_oneshot_active() ||
	    __this_cpu_read(tick_cpu_device.mode) != TICKDEV_MODE_ONESHOT) {
		*why = "tick is not in oneshot mode";
		goto out;
	}
	/* Also skips an event in the past: its interrupt is still to come. */
	if (ktime_sub(local->next_event, ktime_get()) < BATCH_MARGIN_NS)
		goto out;
	t0 = ktime_get_ns();
	for (i = 0; i < PAIRS_PER_BATCH; i++) {
		/* Refused (no exit needed): try another batch later. */
		if (tick_broadcast_enter())
			goto out;
		tick_broadcast_exit();
	}
	t1 = (ktime_get_ns() - t0) / PAIRS_PER_BATCH;
out:
	local_irq_restore(flags);
	return t1;
}

static void bench_enter_exit(struct kunit *test)
{
	unsigned int nr = DIV_ROUND_UP(loops, PAIRS_PER_BATCH), done = 0, tries;
	const char *why = NULL;
	u64 *ns;

	if (!HAVE_ONESHOT_BROADCAST)
		kunit_skip(test, "needs GENERIC_CLOCKEVENTS_BROADCAST and TICK_ONESHOT");
	if (!loops)
		kunit_skip(test, "tick_broadcast_bench_kunit.loops not set");
	ns = kunit_kcalloc(test, nr, sizeof(*ns), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ns);

	for (tries = 0; done < nr && tries < 20 * nr && !why; tries++) {
		ns[done] = bench_batch(&why);
		if (ns[done])
			done++;
		else
			usleep_range(200, 400);
	}
	if (why)
		kunit_skip(test, "%s", why);
	if (!done)
		kunit_skip(test, "no batch could run: events too close or enter refused");

	sort(ns, done, sizeof(*ns), cmp_u64, NULL);
	kunit_info(test, "tick_broadcast_bench cpu=%d batches=%u pairs=%u ns_per_pair=%llu\n",
		   raw_smp_processor_id(), done, done * PAIRS_PER_BATCH, ns[done / 2]);
}

static struct kunit_case tick_broadcast_bench_cases[] = {
	KUNIT_CASE_SLOW(bench_enter_exit),
	{}
};

/* Built-in suites may run before the tick switched to oneshot mode. */
static int tick_broadcast_bench_init(struct kunit_suite *suite)
{
	int waited_ms;

	for (waited_ms = 0; HAVE_ONESHOT_BROADCAST && loops && waited_ms < 10000;
	     waited_ms += 20) {
		if (tick_broadcast_oneshot_active() &&
		    READ_ONCE(raw_cpu_ptr(&tick_cpu_device)->mode) == TICKDEV_MODE_ONESHOT)
			break;
		msleep(20);
	}
	return 0;
}

static struct kunit_suite tick_broadcast_bench_suite = {
	.name = "tick_broadcast_bench",
	.suite_init = tick_broadcast_bench_init,
	.test_cases = tick_broadcast_bench_cases,
};

kunit_test_suite(tick_broadcast_bench_suite);

MODULE_DESCRIPTION("Benchmark of the tick broadcast API");
MODULE_LICENSE("GPL");
