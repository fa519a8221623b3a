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
 *
 * A second slow case, bench_parts, times in the same way the building
 * blocks such a pair is made of, each in its own loop inside one batch
 * so that drift hits them alike: the local device's stop and restart
 * (the same three calls on every implementation), a clock read, an
 * uncontended lock round trip, a trylock, smp_mb(), a seqcount write, a
 * per-CPU counter, a disabled static key (what a disabled trace point
 * costs), a timerqueue insertion and removal, and the pair itself. It
 * prints one line of medians,
 *
 *   # bench_parts: tick_broadcast_parts cpu=C batches=B pair=N local_dev=N ...
 */

#include <kunit/test.h>
#include <linux/clockchips.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/seqlock.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/static_key.h>
#include <linux/tick.h>
#include <linux/timerqueue.h>

#include "tick_broadcast_test.h"

static unsigned int loops;
module_param(loops, uint, 0444);
MODULE_PARM_DESC(loops, "enter/exit pairs to time (0: skip the benchmark)");

#define PAIRS_PER_BATCH	100
/* A batch is left out if this CPU's event could expire during it. */
#define BATCH_MARGIN_NS	(2 * NSEC_PER_MSEC)

/*
 * A batch that could not run moves the test to the next online CPU: with
 * the hrtimer broadcast, the CPU that armed it is refused deep idle until
 * it fires, and a CPU that keeps re-arming it would never run a batch.
 */
static void bench_next_cpu(void)
{
	unsigned int cpu = cpumask_next(raw_smp_processor_id(), cpu_online_mask);

	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	set_cpus_allowed_ptr(current, cpumask_of(cpu));
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Interrupts disabled: this CPU's local device if a batch can run on it
 * now, else NULL, with *why set if it never will (no broadcast needed, or
 * the tick not oneshot). A next event too close, or in the past (its
 * interrupt is still to come), only skips this batch.
 */
static struct clock_event_device *batch_local_device(const char **why)
{
	struct clock_event_device *local = __this_cpu_read(tick_cpu_device.evtdev);

	if (!bc_device() || !local || !(local->features & CLOCK_EVT_FEAT_C3STOP)) {
		*why = "no broadcast needed on this CPU";
		return NULL;
	}
	if (!tick_broadcast_oneshot_active() ||
	    __this_cpu_read(tick_cpu_device.mode) != TICKDEV_MODE_ONESHOT) {
		*why = "tick is not in oneshot mode";
		return NULL;
	}
	if (ktime_sub(local->next_event, ktime_get()) < BATCH_MARGIN_NS)
		return NULL;
	return local;
}

/*
 * One batch of pairs with interrupts off. Return: ns per pair, or 0 if
 * the batch could not run (event too close, or the CPU cannot use the
 * broadcast).
 */
static u64 bench_batch(const char **why)
{
	struct clock_event_device *local;
	unsigned long flags;
	u64 t0, t1 = 0;
	int i;

	local_irq_save(flags);
	local = batch_local_device(why);
	if (!local)
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
		if (ns[done]) {
			done++;
			continue;
		}
		bench_next_cpu();
		usleep_range(200, 400);
	}
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	if (why)
		kunit_skip(test, "%s", why);
	if (!done)
		kunit_skip(test, "no batch could run: events too close or enter refused");

	sort(ns, done, sizeof(*ns), cmp_u64, NULL);
	kunit_info(test, "tick_broadcast_bench cpu=%d batches=%u pairs=%u ns_per_pair=%llu\n",
		   raw_smp_processor_id(), done, done * PAIRS_PER_BATCH, ns[done / 2]);
}

/* ------------------------------------------------------------ parts */

#define PARTS_PER_BATCH	50

enum {
	PART_PAIR, PART_LOCAL_DEV, PART_CLOCK, PART_LOCK, PART_TRYLOCK, PART_MB,
	PART_SEQCOUNT, PART_PERCPU, PART_KEY_OFF, PART_TIMERQUEUE, PART_LOOP, PART_NR
};

static const char * const part_names[PART_NR] = {
	[PART_PAIR]		= "pair",
	[PART_LOCAL_DEV]	= "local_dev",
	[PART_CLOCK]		= "ktime_get",
	[PART_LOCK]		= "lock",
	[PART_TRYLOCK]		= "trylock",
	[PART_MB]		= "smp_mb",
	[PART_SEQCOUNT]		= "seqcount_write",
	[PART_PERCPU]		= "percpu_inc",
	[PART_KEY_OFF]		= "static_key_off",
	[PART_TIMERQUEUE]	= "timerqueue",
	[PART_LOOP]		= "loop",
};

struct parts_ctx {
	raw_spinlock_t		lock;
	seqcount_raw_spinlock_t	seq;
	struct timerqueue_head	head;
	struct timerqueue_node	nodes[4];
	u64			sink;
};

static DEFINE_PER_CPU(u64, parts_counter);
static DEFINE_STATIC_KEY_FALSE(parts_key);

/* One part, PARTS_PER_BATCH times. Return: false if enter was refused. */
static bool parts_run(struct parts_ctx *c, struct clock_event_device *local, int part)
{
	int i;

	for (i = 0; i < PARTS_PER_BATCH; i++) {
		switch (part) {
		case PART_PAIR:
			if (tick_broadcast_enter())
				return false;
			tick_broadcast_exit();
			break;
		case PART_LOCAL_DEV:
			/* What ENTER and EXIT do to the local device. */
			clockevents_switch_state(local, CLOCK_EVT_STATE_SHUTDOWN);
			clockevents_switch_state(local, CLOCK_EVT_STATE_ONESHOT);
			tick_program_event(local->next_event, 1);
			break;
		case PART_CLOCK:
			c->sink += ktime_get();
			break;
		case PART_LOCK:
			raw_spin_lock(&c->lock);
			raw_spin_unlock(&c->lock);
			break;
		case PART_TRYLOCK:
			if (raw_spin_trylock(&c->lock))
				raw_spin_unlock(&c->lock);
			break;
		case PART_MB:
			/* Timed for its cost alone: it orders nothing here. */
			smp_mb();
			break;
		case PART_SEQCOUNT:
			raw_spin_lock(&c->lock);
			write_seqcount_begin(&c->seq);
			c->sink++;
			write_seqcount_end(&c->seq);
			raw_spin_unlock(&c->lock);
			break;
		case PART_PERCPU:
			__this_cpu_inc(parts_counter);
			break;
		case PART_KEY_OFF:
			if (static_branch_unlikely(&parts_key))
				c->sink++;
			barrier();
			break;
		case PART_TIMERQUEUE:
			c->nodes[0].expires = c->sink & 0xffff;
			timerqueue_add(&c->head, &c->nodes[0]);
			timerqueue_del(&c->head, &c->nodes[0]);
			break;
		default:
			barrier();
			break;
		}
	}
	return true;
}

/*
 * One batch of every part with interrupts off, each timed on its own.
 * Return: false if the batch could not run (see bench_batch()).
 */
static bool parts_batch(struct parts_ctx *c, u64 *ns, const char **why)
{
	struct clock_event_device *local;
	unsigned long flags;
	bool ok = false;
	u64 t0;
	int p;

	local_irq_save(flags);
	local = batch_local_device(why);
	if (!local)
		goto out;
	/* The pair first: a refusal leaves the batch before anything is timed. */
	for (p = 0; p < PART_NR; p++) {
		t0 = ktime_get_ns();
		if (!parts_run(c, local, p))
			goto out;
		ns[p] = (ktime_get_ns() - t0) / PARTS_PER_BATCH;
	}
	ok = true;
out:
	local_irq_restore(flags);
	return ok;
}

static void bench_parts(struct kunit *test)
{
	unsigned int nr = DIV_ROUND_UP(loops, PAIRS_PER_BATCH), done = 0, tries, p, i;
	struct parts_ctx *c;
	const char *why = NULL;
	char *line;
	u64 *ns;

	if (!HAVE_ONESHOT_BROADCAST)
		kunit_skip(test, "needs GENERIC_CLOCKEVENTS_BROADCAST and TICK_ONESHOT");
	if (!loops)
		kunit_skip(test, "tick_broadcast_bench_kunit.loops not set");
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	ns = kunit_kcalloc(test, nr * PART_NR, sizeof(*ns), GFP_KERNEL);
	line = kunit_kzalloc(test, 512, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_NULL(test, ns);
	KUNIT_ASSERT_NOT_NULL(test, line);
	raw_spin_lock_init(&c->lock);
	seqcount_raw_spinlock_init(&c->seq, &c->lock);
	timerqueue_init_head(&c->head);
	/* Three other sleepers, as on a four-CPU machine. */
	for (i = 0; i < ARRAY_SIZE(c->nodes); i++) {
		timerqueue_init(&c->nodes[i]);
		c->nodes[i].expires = NSEC_PER_SEC * (i + 1);
		if (i)
			timerqueue_add(&c->head, &c->nodes[i]);
	}

	for (tries = 0; done < nr && tries < 20 * nr && !why; tries++) {
		if (parts_batch(c, ns + done * PART_NR, &why)) {
			done++;
			continue;
		}
		bench_next_cpu();
		usleep_range(200, 400);
	}
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	if (why)
		kunit_skip(test, "%s", why);
	if (!done)
		kunit_skip(test, "no batch could run: events too close or enter refused");

	i = scnprintf(line, 512, "tick_broadcast_parts cpu=%d batches=%u",
		      raw_smp_processor_id(), done);
	for (p = 0; p < PART_NR; p++) {
		u64 *v = kunit_kcalloc(test, done, sizeof(*v), GFP_KERNEL);
		unsigned int b;

		KUNIT_ASSERT_NOT_NULL(test, v);
		for (b = 0; b < done; b++)
			v[b] = ns[b * PART_NR + p];
		sort(v, done, sizeof(*v), cmp_u64, NULL);
		i += scnprintf(line + i, 512 - i, " %s=%llu", part_names[p], v[done / 2]);
	}
	kunit_info(test, "%s\n", line);
}

static struct kunit_case tick_broadcast_bench_cases[] = {
	KUNIT_CASE_SLOW(bench_enter_exit),
	KUNIT_CASE_SLOW(bench_parts),
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
