// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the kernel side of tick broadcast, with fake devices.
 *
 * Each case takes the broadcast over from the machine
 * (tick_bc_kunit_begin()), registers fake broadcast devices through
 * clockevents_register_device(), as drivers do, and gives every CPU a fake
 * tick device. From the one thread running the case, pinned to one CPU,
 * it then plays three other CPUs entering and leaving deep idle, asking
 * for broadcast, going offline, and the broadcast interrupt, the switch
 * to oneshot mode, suspend and resume, all through the real code; one
 * case has two CPUs, in kthreads, race each other's device writes, and
 * another replaces the device while a CPU, in a kthread, is writing it.
 * The fake devices record every programming, every state change and every
 * wake IPI, and count the state changes made while they are being
 * programmed; they fire only when the case says so.
 *
 * After every call the case checks the device against the decision core:
 * in oneshot mode the broadcast device fires no later than the earliest
 * sleeping CPU needs it, and no later than the core believes it does (a
 * later sleeper is armed for only if it is earlier than that belief);
 * nothing decided is left unwritten; a forced CPU has an interrupt
 * coming.
 */

#include <kunit/test.h>
#include <linux/clockchips.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tick.h>

#include "../tick-internal.h"

#if defined(CONFIG_GENERIC_CLOCKEVENTS_BROADCAST) && defined(CONFIG_TICK_ONESHOT)

#include "../tick-broadcast-kunit.h"

#define NR_PLAYED	3	/* CPUs played besides the one running the case */
#define NR_FAKE_BC	2	/* broadcast devices a case may register */
#define NR_EVENTS	64	/* recorded events per device */
#define HOLD_US		10000	/* a held programming's wait once let go */

enum fake_event_type { EV_STATE, EV_PROGRAM, EV_IPI, EV_TICK, EV_RESUME };

struct fake_event {
	enum fake_event_type	type;
	ktime_t			t;	/* EV_PROGRAM: the expiry */
	int			state;	/* EV_STATE: the new state */
};

/*
 * A fake clock event device: a broadcast device or a CPU's tick device.
 * @armed is when it would fire: what it was programmed for last, KTIME_MAX
 * once shut down, switched or fired. Programming takes @slow_us, as an
 * HPET's MMIO accesses do under virtualisation, and more until
 * @hold_until (KTIME_MAX: until the case sets a time; a second at most).
 * @in_program is set while a CPU programs it; @overlaps counts the state
 * changes made meanwhile.
 */
struct fake_dev {
	struct clock_event_device	ced;
	unsigned int			slow_us;
	ktime_t				hold_until;
	bool				in_program;
	unsigned int			overlaps;
	ktime_t				armed;
	unsigned int			nr;
	struct fake_event		ev[NR_EVENTS];
};

struct glue {
	struct kunit			*test;
	struct tick_bc_kunit		t;
	struct clock_event_device	**local_ced;
	struct fake_dev			*local;
	struct fake_dev			bc[NR_FAKE_BC];
	unsigned int			nr_bc;
	unsigned int			self;
	unsigned int			cpu[NR_PLAYED];
	ktime_t				t0;
	int				irq;
	bool				begun;
};

static struct fake_dev *to_fake(struct clock_event_device *ced)
{
	return container_of(ced, struct fake_dev, ced);
}

static void record(struct fake_dev *f, enum fake_event_type type, ktime_t t, int state)
{
	if (f->nr < NR_EVENTS)
		f->ev[f->nr] = (struct fake_event) { type, t, state };
	f->nr++;
}

/* A held programming: wait until @hold_until, or a second. */
static void fake_hold(struct fake_dev *f)
{
	ktime_t now = ktime_get(), end = ktime_add_ms(now, 1000);

	while (ktime_before(now, READ_ONCE(f->hold_until)) && ktime_before(now, end)) {
		cpu_relax();
		now = ktime_get();
	}
}

static int fake_set_next_ktime(ktime_t expires, struct clock_event_device *ced)
{
	struct fake_dev *f = to_fake(ced);

	WRITE_ONCE(f->in_program, true);
	udelay(f->slow_us);
	fake_hold(f);
	f->armed = expires;
	record(f, EV_PROGRAM, expires, 0);
	WRITE_ONCE(f->in_program, false);
	return 0;
}

static int fake_state(struct clock_event_device *ced, enum clock_event_state state)
{
	struct fake_dev *f = to_fake(ced);

	if (READ_ONCE(f->in_program))
		f->overlaps++;
	f->armed = KTIME_MAX;
	record(f, EV_STATE, 0, state);
	return 0;
}

static int fake_shutdown(struct clock_event_device *ced)
{
	return fake_state(ced, CLOCK_EVT_STATE_SHUTDOWN);
}

static int fake_oneshot(struct clock_event_device *ced)
{
	return fake_state(ced, CLOCK_EVT_STATE_ONESHOT);
}

/* It ticks on its own: due within a period. */
static int fake_periodic(struct clock_event_device *ced)
{
	struct fake_dev *f = to_fake(ced);

	fake_state(ced, CLOCK_EVT_STATE_PERIODIC);
	f->armed = ktime_add_ns(ktime_get(), TICK_NSEC);
	return 0;
}

static int fake_oneshot_stopped(struct clock_event_device *ced)
{
	return fake_state(ced, CLOCK_EVT_STATE_ONESHOT_STOPPED);
}

static int fake_tick_resume(struct clock_event_device *ced)
{
	record(to_fake(ced), EV_RESUME, 0, 0);
	return 0;
}

/* A CPU's own tick handler, run by the broadcast interrupt's CPU. */
static void fake_local_tick(struct clock_event_device *ced)
{
	record(to_fake(ced), EV_TICK, 0, 0);
}

/* The case running: the wake IPI callback has no device to find it by. */
static struct glue *glue_now;

/* The wake IPI, recorded by the tick device of each CPU it goes to. */
static void fake_ipi(const struct cpumask *mask)
{
	unsigned int cpu;

	for_each_cpu(cpu, mask)
		record(&glue_now->local[cpu], EV_IPI, 0, 0);
}

/*
 * A fresh device, as a driver registers it: also when a case that started
 * over registers it again, not with the handler the glue gave it before.
 */
static void fake_init(struct fake_dev *f, const char *name, unsigned int features,
		      int rating, const struct cpumask *mask)
{
	struct clock_event_device *ced = &f->ced;

	memset(f, 0, sizeof(*f));
	f->armed = KTIME_MAX;
	ced->name = name;
	ced->features = features | CLOCK_EVT_FEAT_ONESHOT | CLOCK_EVT_FEAT_KTIME;
	ced->rating = rating;
	ced->cpumask = mask;
	ced->irq = -1;
	ced->mult = 1;
	ced->min_delta_ns = 1;
	ced->min_delta_ticks = 1;
	ced->max_delta_ns = KTIME_MAX;
	ced->max_delta_ticks = ULONG_MAX;
	ced->set_next_ktime = fake_set_next_ktime;
	ced->set_state_shutdown = fake_shutdown;
	ced->set_state_oneshot = fake_oneshot;
	ced->set_state_periodic = fake_periodic;
	ced->set_state_oneshot_stopped = fake_oneshot_stopped;
	ced->tick_resume = fake_tick_resume;
}

/* A running CPU's tick device: oneshot, stops in deep idle. */
static void local_init(struct glue *g, unsigned int cpu)
{
	struct fake_dev *f = &g->local[cpu];

	fake_init(f, "glue_local", CLOCK_EVT_FEAT_C3STOP, 100, cpumask_of(cpu));
	f->ced.event_handler = fake_local_tick;
	f->ced.broadcast = fake_ipi;
	f->ced.next_event = KTIME_MAX;
	clockevents_switch_state(&f->ced, CLOCK_EVT_STATE_ONESHOT);
	f->nr = 0;
	g->local_ced[cpu] = &f->ced;
}

static void glue_end(void *data)
{
	struct glue *g = data;
	unsigned int i;

	if (g->begun)
		tick_bc_kunit_end(&g->t);
	glue_now = NULL;
	for (i = 0; i < g->nr_bc; i++)
		KUNIT_EXPECT_EQ(g->test, clockevents_unbind_device(&g->bc[i].ced, g->self), 0);
	if (g->irq >= 0)
		irq_free_desc(g->irq);
}

/* Take the broadcast over, pinned to one CPU, and pick the CPUs to play. */
static struct glue *glue_begin(struct kunit *test)
{
	unsigned int cpu, n = 0;
	struct glue *g;
	int ret;

	if (num_online_cpus() < NR_PLAYED + 1)
		kunit_skip(test, "needs %d CPUs online", NR_PLAYED + 1);
	g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g);
	g->local = kunit_kcalloc(test, nr_cpu_ids, sizeof(*g->local), GFP_KERNEL);
	g->local_ced = kunit_kcalloc(test, nr_cpu_ids, sizeof(*g->local_ced), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g->local);
	KUNIT_ASSERT_NOT_NULL(test, g->local_ced);
	g->test = test;
	g->irq = -1;
	g->self = cpumask_first(cpu_online_mask);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(g->self)), 0);
	for_each_online_cpu(cpu)
		if (cpu != g->self && n < NR_PLAYED)
			g->cpu[n++] = cpu;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		local_init(g, cpu);
	g->t.local = g->local_ced;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, glue_end, g), 0);
	ret = tick_bc_kunit_begin(&g->t);
	if (ret == -EBUSY)
		kunit_skip(test, "the machine's broadcast is in use");
	if (ret == -EAGAIN)
		kunit_skip(test, "a CPU's tick is not in oneshot mode yet");
	KUNIT_ASSERT_EQ(test, ret, 0);
	g->begun = true;
	glue_now = g;
	g->t0 = ktime_get();
	return g;
}

/* Give the broadcast back and take it over afresh, for another attempt. */
static void glue_restart(struct glue *g)
{
	unsigned int cpu;

	glue_end(g);
	g->begun = false;
	g->nr_bc = 0;
	g->irq = -1;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		local_init(g, cpu);
	KUNIT_ASSERT_EQ(g->test, tick_bc_kunit_begin(&g->t), 0);
	g->begun = true;
	glue_now = g;
	g->t0 = ktime_get();
}

/* Register a fake broadcast device, rated above the ones before it. */
static struct fake_dev *glue_register_bc(struct glue *g, unsigned int features)
{
	static const char * const names[NR_FAKE_BC] = { "glue_bc0", "glue_bc1" };
	struct fake_dev *f = &g->bc[g->nr_bc];

	fake_init(f, names[g->nr_bc], features, 400 + 10 * g->nr_bc, cpu_possible_mask);
	if (features & CLOCK_EVT_FEAT_DYNIRQ) {
		g->irq = irq_alloc_desc(NUMA_NO_NODE);
		KUNIT_ASSERT_GE(g->test, g->irq, 0);
		f->ced.irq = g->irq;
	}
	g->nr_bc++;
	clockevents_register_device(&f->ced);
	return f;
}

/* The fake broadcast device installed, NULL if none is. */
static struct fake_dev *glue_bc(struct glue *g)
{
	struct clock_event_device *ced = tick_get_broadcast_device()->evtdev;
	unsigned int i;

	for (i = 0; i < g->nr_bc; i++)
		if (ced == &g->bc[i].ced)
			return &g->bc[i];
	return NULL;
}

static unsigned int count(struct fake_dev *f, enum fake_event_type type)
{
	unsigned int i, n = 0;

	for (i = 0; i < min(f->nr, NR_EVENTS); i++)
		n += f->ev[i].type == type;
	return n;
}

static unsigned int ipis(struct glue *g, unsigned int cpu)
{
	return count(&g->local[cpu], EV_IPI);
}

/* A time for a failure message, in microseconds since the case began. */
static const char *fmt_t(struct glue *g, ktime_t t, char *buf, size_t len)
{
	if (t == KTIME_MAX)
		return "never";
	snprintf(buf, len, "%lld us", ktime_to_us(ktime_sub(t, g->t0)));
	return buf;
}

/* The earliest wakeup of a CPU sleeping on the broadcast, KTIME_MAX if none. */
static ktime_t first_sleeper(struct glue *g, unsigned int *first)
{
	struct tick_bc *core = g->t.core;
	ktime_t t = KTIME_MAX;
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (tick_bc_sleeping(core, cpu) && core->sleep[cpu].expires < t) {
			t = core->sleep[cpu].expires;
			*first = cpu;
		}
	}
	return t;
}

static void expect_oneshot_armed(struct glue *g, const char *after, struct fake_dev *bc)
{
	ktime_t armed = bc ? bc->armed : KTIME_MAX, first;
	struct tick_bc *core = g->t.core;
	char a[32], b[32];
	unsigned int cpu = 0;
	const char *at;

	first = first_sleeper(g, &cpu);
	at = fmt_t(g, armed, a, sizeof(a));
	if (armed > core->armed)
		KUNIT_FAIL(g->test, "after %s: the device fires at %s, the core believes at %s",
			   after, at, fmt_t(g, core->armed, b, sizeof(b)));
	if (armed > first)
		KUNIT_FAIL(g->test, "after %s: the device fires at %s, CPU%u sleeps until %s",
			   after, at, cpu, fmt_t(g, first, b, sizeof(b)));
	if (core->nr_force && armed == KTIME_MAX)
		KUNIT_FAIL(g->test, "after %s: %u CPUs wait for a forced wakeup, the device is off",
			   after, core->nr_force);
}

/*
 * What must hold after every call: the device has what the core decided,
 * and fires in time for every CPU relying on it.
 */
static void expect_consistent(struct glue *g, const char *after)
{
	struct fake_dev *bc = glue_bc(g);

	if (!tick_bc_kunit_synced())
		KUNIT_FAIL(g->test, "after %s: an arming decided is not written", after);
	if (tick_broadcast_oneshot_active()) {
		expect_oneshot_armed(g, after, bc);
		return;
	}
	if (bc && !tick_bc_periodic_empty(g->t.core) && bc->armed == KTIME_MAX)
		KUNIT_FAIL(g->test, "after %s: CPUs wait for periodic ticks, the device is off",
			   after);
}

static void play_enter(struct glue *g, unsigned int cpu, ktime_t wakeup)
{
	char what[32];

	g->local[cpu].ced.next_event = wakeup;
	KUNIT_EXPECT_EQ(g->test, tick_bc_kunit_oneshot_control(cpu, TICK_BROADCAST_ENTER), 0);
	snprintf(what, sizeof(what), "CPU%u's enter", cpu);
	expect_consistent(g, what);
}

static void play_exit(struct glue *g, unsigned int cpu)
{
	char what[32];

	KUNIT_EXPECT_EQ(g->test, tick_bc_kunit_oneshot_control(cpu, TICK_BROADCAST_EXIT), 0);
	snprintf(what, sizeof(what), "CPU%u's exit", cpu);
	expect_consistent(g, what);
}

static void play_control(struct glue *g, unsigned int cpu, enum tick_broadcast_mode mode)
{
	char what[40];

	tick_bc_kunit_control(cpu, mode);
	snprintf(what, sizeof(what), "CPU%u's broadcast control %d", cpu, mode);
	expect_consistent(g, what);
}

/* Run @handler as the interrupt of @f, which has fired already. */
static void play_handler(struct glue *g, struct fake_dev *f,
			 void (*handler)(struct clock_event_device *ced), const char *what)
{
	unsigned long flags;

	local_irq_save(flags);
	handler(&f->ced);
	local_irq_restore(flags);
	expect_consistent(g, what);
}

/* @f fires: a oneshot device is no longer armed, a periodic one ticks on. */
static void fired(struct fake_dev *f)
{
	if (clockevent_state_periodic(&f->ced))
		f->armed = ktime_add_ns(ktime_get(), TICK_NSEC);
	else
		f->armed = KTIME_MAX;
}

/* @f fires: its interrupt runs its handler at once. */
static void play_irq(struct glue *g, struct fake_dev *f)
{
	fired(f);
	play_handler(g, f, f->ced.event_handler, "the broadcast interrupt");
}

static void play_switch(struct glue *g)
{
	tick_broadcast_switch_to_oneshot();
	expect_consistent(g, "the switch to oneshot mode");
}

/* Register a broadcast device and switch to oneshot mode. */
static struct fake_dev *glue_oneshot(struct glue *g, unsigned int features)
{
	struct fake_dev *bc = glue_register_bc(g, features);

	KUNIT_ASSERT_PTR_EQ(g->test, glue_bc(g), bc);
	play_switch(g);
	return bc;
}

/* Just after a jiffy: the next periodic tick stays put for a while. */
static void wait_for_jiffy(void)
{
	unsigned long j = jiffies;

	while (time_before_eq(jiffies, j))
		cpu_relax();
}

static ktime_t in_ms(unsigned int ms)
{
	return ktime_add_ms(ktime_get(), ms);
}

/*
 * The periodic broadcast tick fires and its handler is held up (on the
 * lock) while another CPU switches to oneshot mode, which hands the
 * periodic CPUs over to sleep until the next period. The late handler
 * must leave the device armed for them, and for no later time than the
 * core believes: else a CPU that goes to sleep until between the two is
 * not armed for, and is woken up to a tick late.
 */
static void glue_periodic_irq_after_switch_keeps_handed_over_cpus_armed(struct kunit *test)
{
	const unsigned int *features = test->param_value;
	void (*periodic_handler)(struct clock_event_device *ced);
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_register_bc(g, *features);
	unsigned int c = g->cpu[2];
	ktime_t handed_over;

	KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
	wait_for_jiffy();
	play_control(g, g->cpu[0], TICK_BROADCAST_ON);
	play_control(g, g->cpu[1], TICK_BROADCAST_ON);
	KUNIT_ASSERT_NE(test, bc->armed, KTIME_MAX);

	periodic_handler = bc->ced.event_handler;
	fired(bc);
	tick_broadcast_switch_to_oneshot();
	handed_over = g->t.core->armed;
	KUNIT_ASSERT_NE(test, handed_over, KTIME_MAX);
	play_handler(g, bc, periodic_handler, "a periodic interrupt held up across the switch");

	play_enter(g, c, ktime_add_ns(handed_over, TICK_NSEC / 2));
}

/*
 * The switch to oneshot mode right after a periodic tick re-armed the
 * device, before the tick moved the next period on: the handed-over CPUs
 * sleep until the period that just passed, and the device must be armed
 * for them, not for the next period. When a jiffy passes between the
 * tick and the switch (a busy host), the case tries again.
 */
static void glue_switch_after_periodic_tick_arms_for_handed_over_cpus(struct kunit *test)
{
	const unsigned int *features = test->param_value;
	struct glue *g = glue_begin(test);
	unsigned int i, attempt;
	struct fake_dev *bc;
	ktime_t ticked;

	for (attempt = 0; ; attempt++) {
		bc = glue_register_bc(g, *features);
		KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
		wait_for_jiffy();
		for (i = 0; i < NR_PLAYED; i++)
			play_control(g, g->cpu[i], TICK_BROADCAST_ON);
		play_irq(g, bc);
		ticked = bc->armed;
		tick_broadcast_switch_to_oneshot();
		if (ticked > g->t.core->sleep[g->cpu[0]].expires || *features)
			break;
		if (attempt == 10)
			kunit_skip(test, "a jiffy passed between tick and switch every time");
		glue_restart(g);
	}
	for (i = 0; i < NR_PLAYED; i++)
		KUNIT_EXPECT_EQ(test, ipis(g, g->cpu[i]), 1);
	KUNIT_EXPECT_EQ(test, count(&g->local[g->self], EV_TICK), 0);
	expect_consistent(g, "the switch to oneshot mode");
}

/* Expiry wakes the CPUs whose time came, and re-arms for the next one. */
static void glue_expiry_wakes_due_cpus_and_rearms(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_oneshot(g, 0);
	unsigned int a = g->cpu[0], b = g->cpu[1];
	ktime_t tb = in_ms(1000);

	play_enter(g, a, ktime_sub_ms(ktime_get(), 1));
	play_enter(g, b, tb);
	play_irq(g, bc);
	KUNIT_EXPECT_EQ(test, ipis(g, a), 1);
	KUNIT_EXPECT_EQ(test, ipis(g, b), 0);
	KUNIT_EXPECT_EQ(test, bc->armed, tb);

	/* Woken: the IPI delivers its event, its device is not programmed. */
	play_exit(g, a);
	KUNIT_EXPECT_EQ(test, count(&g->local[a], EV_PROGRAM), 0);
	play_exit(g, b);
	KUNIT_EXPECT_EQ(test, g->local[b].armed, tb);
}

/*
 * A better broadcast device registered while CPUs sleep replaces the old
 * one, which is detached and no longer handles anything, and is armed at
 * once; its first interrupt re-arms it for the earliest sleeper.
 */
static void glue_replacing_device_while_cpus_sleep_rearms_new_one(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *old = glue_oneshot(g, 0), *bc;
	unsigned int a = g->cpu[0], b = g->cpu[1];
	ktime_t ta = in_ms(1000), tb = in_ms(2000);

	play_enter(g, a, ta);
	play_enter(g, b, tb);
	KUNIT_EXPECT_EQ(test, old->armed, ta);

	bc = glue_register_bc(g, 0);
	KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
	expect_consistent(g, "the replacement");
	KUNIT_EXPECT_TRUE(test, clockevent_state_detached(&old->ced));
	KUNIT_EXPECT_EQ(test, old->armed, KTIME_MAX);
	KUNIT_EXPECT_TRUE(test, old->ced.event_handler == clockevents_handle_noop);

	play_irq(g, bc);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	KUNIT_EXPECT_EQ(test, ipis(g, a) + ipis(g, b), 0);
	play_exit(g, a);
	play_exit(g, b);
}

/*
 * The last TICK_BROADCAST_OFF in oneshot mode leaves the device armed
 * for a CPU still asleep; once nobody relies on it, it is shut down, and
 * the next sleeper brings it back.
 */
static void glue_last_off_shuts_device_down_only_when_nobody_sleeps(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_oneshot(g, 0);
	unsigned int a = g->cpu[0], b = g->cpu[1];
	ktime_t ta = in_ms(1000);

	play_control(g, a, TICK_BROADCAST_ON);
	play_control(g, b, TICK_BROADCAST_ON);
	play_enter(g, a, ta);
	play_control(g, a, TICK_BROADCAST_OFF);
	play_control(g, b, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(g, a);

	play_control(g, b, TICK_BROADCAST_ON);
	play_control(g, b, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_TRUE(test, clockevent_state_shutdown(&bc->ced));
	play_enter(g, b, ta);
	KUNIT_EXPECT_TRUE(test, clockevent_state_oneshot(&bc->ced));
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(g, b);
}

/* In periodic mode the last OFF stops the device and restarts the CPU's. */
static void glue_periodic_last_off_stops_device(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_register_bc(g, 0);
	unsigned int a = g->cpu[0];

	KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
	play_control(g, a, TICK_BROADCAST_ON);
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, g->local[a].armed, KTIME_MAX);
	play_irq(g, bc);
	KUNIT_EXPECT_EQ(test, ipis(g, a), 1);
	play_control(g, a, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_TRUE(test, clockevent_state_shutdown(&bc->ced));
	KUNIT_EXPECT_NE(test, g->local[a].armed, KTIME_MAX);
}

/*
 * After TICK_BROADCAST_FORCE an OFF is ignored: in periodic mode the
 * device keeps ticking the CPU, whose own device stays off.
 */
static void glue_off_after_force_keeps_periodic_ticks(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_register_bc(g, 0);
	unsigned int a = g->cpu[0];

	KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
	play_control(g, a, TICK_BROADCAST_FORCE);
	play_control(g, a, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, g->local[a].armed, KTIME_MAX);
	play_irq(g, bc);
	KUNIT_EXPECT_EQ(test, ipis(g, a), 1);
}

/*
 * A better device registered in periodic mode takes the periodic ticks
 * over; the old one is detached and a late interrupt of it does nothing.
 */
static void glue_replacing_device_in_periodic_mode_moves_the_ticks(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *old = glue_register_bc(g, 0), *bc;
	void (*old_handler)(struct clock_event_device *ced);
	unsigned int a = g->cpu[0];

	KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), old);
	play_control(g, a, TICK_BROADCAST_ON);
	old_handler = old->ced.event_handler;
	bc = glue_register_bc(g, 0);
	KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
	expect_consistent(g, "the replacement");
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	KUNIT_EXPECT_TRUE(test, clockevent_state_detached(&old->ced));
	KUNIT_EXPECT_TRUE(test, old->ced.event_handler != old_handler);

	play_handler(g, old, old->ced.event_handler, "a late interrupt of the old device");
	KUNIT_EXPECT_EQ(test, ipis(g, a), 0);
	play_irq(g, bc);
	KUNIT_EXPECT_EQ(test, ipis(g, a), 1);
}

/* In periodic mode the last periodic CPU going offline stops the device. */
static void glue_offline_of_last_periodic_cpu_stops_device(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_register_bc(g, 0);
	unsigned int a = g->cpu[0];

	KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
	play_control(g, a, TICK_BROADCAST_ON);
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	cpumask_clear_cpu(a, g->t.online);
	local_irq_disable();
	tick_broadcast_offline(a);
	local_irq_enable();
	expect_consistent(g, "the offline of the last periodic CPU");
	KUNIT_EXPECT_TRUE(test, clockevent_state_shutdown(&bc->ced));
	KUNIT_EXPECT_TRUE(test, tick_bc_periodic_empty(g->t.core));
}

/*
 * Suspend shuts the device down; resume brings it back and, with a CPU
 * still relying on it, arms it at once so that expiry looks at every
 * sleeper again. With nobody relying on it, it stays off.
 */
static void glue_resume_rearms_for_sleeping_cpus(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_oneshot(g, 0);
	unsigned int a = g->cpu[0];
	ktime_t ta = in_ms(1000);

	play_enter(g, a, ta);
	tick_suspend_broadcast();
	KUNIT_EXPECT_TRUE(test, clockevent_state_shutdown(&bc->ced));
	KUNIT_EXPECT_EQ(test, bc->armed, KTIME_MAX);
	tick_resume_broadcast();
	expect_consistent(g, "resume");
	KUNIT_EXPECT_EQ(test, count(bc, EV_RESUME), 1);
	play_irq(g, bc);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(g, a);

	tick_suspend_broadcast();
	tick_resume_broadcast();
	expect_consistent(g, "resume with nobody asleep");
	KUNIT_EXPECT_EQ(test, bc->armed, KTIME_MAX);
}

/*
 * The CPU the device's interrupt is steered to goes offline with its
 * event forced: it leaves the force mask, the device stays armed for the
 * others, and the next interrupt wakes nobody and steers to the next
 * sleeper.
 */
static void glue_offline_of_steered_cpu_keeps_others_armed(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_oneshot(g, CLOCK_EVT_FEAT_DYNIRQ);
	unsigned int a = g->cpu[0], b = g->cpu[1], c = g->cpu[2];
	ktime_t ta = in_ms(1000), tb = in_ms(2000);

	play_enter(g, b, tb);
	play_enter(g, a, ta);
	KUNIT_EXPECT_TRUE(test, cpumask_equal(bc->ced.cpumask, cpumask_of(a)));
	play_enter(g, c, ktime_sub_ms(ktime_get(), 1));
	KUNIT_EXPECT_TRUE(test, cpumask_equal(bc->ced.cpumask, cpumask_of(c)));
	play_exit(g, c);
	KUNIT_EXPECT_EQ(test, g->t.core->nr_force, 1);
	KUNIT_EXPECT_TRUE(test, tick_bc_kunit_synced());

	cpumask_clear_cpu(c, g->t.online);
	local_irq_disable();
	tick_broadcast_offline(c);
	local_irq_enable();
	expect_consistent(g, "the offline of the CPU the interrupt is steered to");
	KUNIT_EXPECT_EQ(test, g->t.core->nr_force, 0);

	play_irq(g, bc);
	KUNIT_EXPECT_EQ(test, ipis(g, c) + ipis(g, a) + ipis(g, b), 0);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	KUNIT_EXPECT_TRUE(test, cpumask_equal(bc->ced.cpumask, cpumask_of(a)));
	play_exit(g, a);
	play_exit(g, b);
}

#define RACE_ROUNDS	200

/* Two CPUs entering deep idle at once, round after round. */
struct race {
	struct glue		*g;
	atomic_t		round;
	atomic_t		done;
	struct completion	finished[2];
};

struct racer {
	struct race		*race;
	unsigned int		nr;
};

/*
 * Each round, enter with a wakeup earlier than any before, so that the
 * enter records an arming and flushes it, then leave again.
 */
static int racer_fn(void *data)
{
	struct racer *r = data;
	struct glue *g = r->race->g;
	unsigned int cpu = g->cpu[r->nr];
	ktime_t base = ktime_add_ms(g->t0, 10000);
	int round;

	for (round = 1; round <= RACE_ROUNDS; round++) {
		/* Yielding: a stop_machine() (a clocksource change) may wait. */
		while (atomic_read(&r->race->round) < round)
			cond_resched();
		g->local[cpu].ced.next_event = base - round * 10000 - r->nr * 1000;
		tick_bc_kunit_oneshot_control(cpu, TICK_BROADCAST_ENTER);
		tick_bc_kunit_oneshot_control(cpu, TICK_BROADCAST_EXIT);
		atomic_inc(&r->race->done);
	}
	complete(&r->race->finished[r->nr]);
	return 0;
}

/*
 * Two CPUs record an arming at once while the device is slow to program:
 * one finds the other writing the device and leaves its request to it,
 * which must write it before it lets go. After every round nothing
 * decided is left unwritten.
 */
static void glue_concurrent_enters_leave_no_arming_unwritten(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	struct fake_dev *bc = glue_oneshot(g, 0);
	static struct racer racers[2] = { { .nr = 0 }, { .nr = 1 } };
	static struct race race;
	unsigned int unsynced = 0;
	struct task_struct *task;
	int round;

	race = (struct race) { .g = g };
	init_completion(&race.finished[0]);
	init_completion(&race.finished[1]);
	bc->slow_us = 200;
	racers[0].race = &race;
	racers[1].race = &race;
	task = kthread_run_on_cpu(racer_fn, &racers[0], g->cpu[0], "glue_racer/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	task = kthread_run_on_cpu(racer_fn, &racers[1], g->cpu[1], "glue_racer/%u");
	if (IS_ERR(task))
		complete(&race.finished[1]);
	for (round = 1; round <= RACE_ROUNDS; round++) {
		atomic_set(&race.round, round);
		while (!IS_ERR(task) && atomic_read(&race.done) < 2 * round)
			cond_resched();
		unsynced += !tick_bc_kunit_synced();
	}
	wait_for_completion(&race.finished[0]);
	wait_for_completion(&race.finished[1]);
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	KUNIT_EXPECT_EQ_MSG(test, unsynced, 0, "rounds that left an arming unwritten");
	expect_consistent(g, "the last round");
	kunit_info(test, "%u device events in %d rounds\n", bc->nr, RACE_ROUNDS);
}

#define REPLACE_ROUNDS	5

/* A CPU entering deep idle in a kthread, whose enter writes the device. */
struct flusher {
	struct glue		*g;
	unsigned int		cpu;
	ktime_t			wakeup;
	struct completion	done;
};

static int flusher_fn(void *data)
{
	struct flusher *fl = data;

	fl->g->local[fl->cpu].ced.next_event = fl->wakeup;
	tick_bc_kunit_oneshot_control(fl->cpu, TICK_BROADCAST_ENTER);
	complete(&fl->done);
	return 0;
}

/* Wait up to ten seconds for a CPU to be inside the programming of @f. */
static bool wait_in_program(struct fake_dev *f)
{
	ktime_t end = ktime_add_ms(ktime_get(), 10000);

	while (!READ_ONCE(f->in_program)) {
		if (ktime_after(ktime_get(), end))
			return false;
		cond_resched();
	}
	return true;
}

/*
 * A CPU entering deep idle records an arming and writes it to the device
 * after dropping the lock; a better device registered meanwhile replaces
 * the old one, which is shut down and released, only once that write is
 * over. Else the old device is switched while being programmed and left
 * armed after its release, firing for nobody. Each round, the old device
 * holds the write (as a slow HPET does, only longer) from before the
 * replacement starts until it returns, or for HOLD_US once it has
 * started: a replacement that waits for the write waits that long.
 */
static void glue_replacement_waits_for_deferred_write(struct kunit *test)
{
	struct glue *g = glue_begin(test);
	unsigned int a = g->cpu[0], b = g->cpu[1], c = g->cpu[2];
	static struct flusher fl;
	struct fake_dev *old, *bc;
	struct task_struct *task;
	bool inside;
	int round;

	for (round = 1; round <= REPLACE_ROUNDS; round++) {
		if (round > 1)
			glue_restart(g);
		old = glue_oneshot(g, 0);
		play_enter(g, a, in_ms(1000));
		play_enter(g, c, in_ms(2000));

		fl = (struct flusher) { .g = g, .cpu = b, .wakeup = in_ms(500) };
		init_completion(&fl.done);
		WRITE_ONCE(old->hold_until, KTIME_MAX);
		task = kthread_run_on_cpu(flusher_fn, &fl, b, "glue_flusher/%u");
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
		inside = wait_in_program(old);
		WRITE_ONCE(old->hold_until, ktime_add_us(ktime_get(), HOLD_US));
		bc = glue_register_bc(g, 0);
		WRITE_ONCE(old->hold_until, 0);
		wait_for_completion(&fl.done);

		KUNIT_EXPECT_TRUE_MSG(test, inside, "round %d: the enter did not write the device",
				      round);
		KUNIT_ASSERT_PTR_EQ(test, glue_bc(g), bc);
		KUNIT_EXPECT_EQ_MSG(test, old->overlaps, 0,
				    "round %d: the old device was switched while being programmed",
				    round);
		KUNIT_EXPECT_TRUE(test, clockevent_state_detached(&old->ced));
		KUNIT_EXPECT_EQ_MSG(test, old->armed, KTIME_MAX,
				    "round %d: the old device was programmed after its release",
				    round);
		expect_consistent(g, "the replacement during a deferred write");

		play_exit(g, b);
		play_exit(g, a);
		play_exit(g, c);
	}
}

/*
 * Built-in suites run right after the initcalls, possibly before every
 * CPU's tick has switched to oneshot mode, which would switch the state a
 * case runs on. Give the switch up to ten seconds.
 */
static int tick_broadcast_glue_init(struct kunit_suite *suite)
{
	unsigned int cpu, waited_ms;
	bool settled = false;

	for (waited_ms = 0; !settled && waited_ms < 10000; waited_ms += 20) {
		settled = true;
		for_each_online_cpu(cpu)
			settled &= READ_ONCE(per_cpu(tick_cpu_device, cpu).mode) ==
				   TICKDEV_MODE_ONESHOT;
		if (!settled)
			msleep(20);
	}
	return 0;
}

/* Periodic broadcast emulated on a oneshot device, or a periodic one. */
static const unsigned int periodic_features[] = { 0, CLOCK_EVT_FEAT_PERIODIC };

static void periodic_features_desc(const unsigned int *features, char *desc)
{
	strscpy(desc, *features ? "periodic device" : "oneshot device", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(periodic_features, periodic_features, periodic_features_desc);

static struct kunit_case tick_broadcast_glue_cases[] = {
	KUNIT_CASE_PARAM(glue_periodic_irq_after_switch_keeps_handed_over_cpus_armed,
			 periodic_features_gen_params),
	KUNIT_CASE_PARAM(glue_switch_after_periodic_tick_arms_for_handed_over_cpus,
			 periodic_features_gen_params),
	KUNIT_CASE(glue_expiry_wakes_due_cpus_and_rearms),
	KUNIT_CASE(glue_replacing_device_while_cpus_sleep_rearms_new_one),
	KUNIT_CASE(glue_last_off_shuts_device_down_only_when_nobody_sleeps),
	KUNIT_CASE(glue_periodic_last_off_stops_device),
	KUNIT_CASE(glue_off_after_force_keeps_periodic_ticks),
	KUNIT_CASE(glue_replacing_device_in_periodic_mode_moves_the_ticks),
	KUNIT_CASE(glue_offline_of_last_periodic_cpu_stops_device),
	KUNIT_CASE(glue_resume_rearms_for_sleeping_cpus),
	KUNIT_CASE(glue_offline_of_steered_cpu_keeps_others_armed),
	KUNIT_CASE_SLOW(glue_concurrent_enters_leave_no_arming_unwritten),
	KUNIT_CASE(glue_replacement_waits_for_deferred_write),
	{}
};

#else

static void glue_needs_oneshot_broadcast(struct kunit *test)
{
	kunit_skip(test, "needs GENERIC_CLOCKEVENTS_BROADCAST and TICK_ONESHOT");
}

static struct kunit_case tick_broadcast_glue_cases[] = {
	KUNIT_CASE(glue_needs_oneshot_broadcast),
	{}
};

static int tick_broadcast_glue_init(struct kunit_suite *suite)
{
	return 0;
}

#endif

static struct kunit_suite tick_broadcast_glue_suite = {
	.name = "tick_broadcast_glue",
	.suite_init = tick_broadcast_glue_init,
	.test_cases = tick_broadcast_glue_cases,
};

kunit_test_suite(tick_broadcast_glue_suite);

MODULE_DESCRIPTION("KUnit tests of the tick broadcast glue with fake devices");
MODULE_LICENSE("GPL");
