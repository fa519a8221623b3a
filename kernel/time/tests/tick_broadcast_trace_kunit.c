// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the tick broadcast trace events.
 *
 * Each case attaches probes to the tick_bc trace events, plays a
 * scripted ENTER/EXIT sequence on the CPU running it with interrupts
 * disabled (as cpuidle does around a CPUIDLE_FLAG_TIMER_STOP state), and
 * checks the events recorded against the script. Skipped where the
 * machine needs no broadcast, and where the kernel has no oneshot
 * broadcast or no tracepoints (FTRACE and a tracer).
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/clockchips.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/tick.h>
#include <linux/tracepoint.h>

#include "../tick-broadcast-core.h"
#include "../tick-internal.h"

#if defined(CONFIG_GENERIC_CLOCKEVENTS_BROADCAST) && defined(CONFIG_TICK_ONESHOT) && \
	defined(CONFIG_TRACEPOINTS)

#include "../tick-broadcast-trace.h"

enum rec_type { REC_ENTER, REC_EXIT, REC_PROGRAM, REC_EXPIRE };

struct rec {
	enum rec_type	type;
	s64		t;	/* expires, or now for REC_EXPIRE */
	s64		next;	/* REC_EXPIRE: what the device is armed for */
	int		result;	/* REC_ENTER, REC_EXIT; target CPU of REC_PROGRAM */
};

#define NR_RECS	32

/* What the probes saw of one CPU; written from any CPU, in any context. */
static struct {
	unsigned int	cpu;
	atomic_t	n;
	struct rec	recs[NR_RECS];
} trace_log;

static void log_add(enum rec_type type, s64 t, s64 next, int result)
{
	int i = atomic_inc_return(&trace_log.n) - 1;

	if (i < NR_RECS)
		trace_log.recs[i] = (struct rec) { type, t, next, result };
}

static void probe_enter(void *data, unsigned int cpu, ktime_t expires, int result)
{
	if (cpu == READ_ONCE(trace_log.cpu))
		log_add(REC_ENTER, expires, 0, result);
}

static void probe_exit(void *data, unsigned int cpu, ktime_t expires, int result)
{
	if (cpu == READ_ONCE(trace_log.cpu))
		log_add(REC_EXIT, expires, 0, result);
}

static void probe_program(void *data, ktime_t expires, unsigned int cpu)
{
	/* Armed for the scripted CPU: other CPUs may arm it meanwhile. */
	if (cpu == READ_ONCE(trace_log.cpu))
		log_add(REC_PROGRAM, expires, 0, cpu);
}

static void probe_expire(void *data, ktime_t now, const struct cpumask *woken, ktime_t next)
{
	unsigned int cpu = READ_ONCE(trace_log.cpu);

	if (cpu < nr_cpu_ids && cpumask_test_cpu(cpu, woken))
		log_add(REC_EXPIRE, now, next, 0);
}

static int trace_attach(struct kunit *test)
{
	int ret;

	atomic_set(&trace_log.n, 0);
	WRITE_ONCE(trace_log.cpu, UINT_MAX);
	ret = register_trace_tick_bc_enter(probe_enter, NULL);
	ret = ret ?: register_trace_tick_bc_exit(probe_exit, NULL);
	ret = ret ?: register_trace_tick_bc_program(probe_program, NULL);
	ret = ret ?: register_trace_tick_bc_expire(probe_expire, NULL);
	return ret;
}

static void trace_detach(struct kunit *test)
{
	unregister_trace_tick_bc_enter(probe_enter, NULL);
	unregister_trace_tick_bc_exit(probe_exit, NULL);
	unregister_trace_tick_bc_program(probe_program, NULL);
	unregister_trace_tick_bc_expire(probe_expire, NULL);
	tracepoint_synchronize_unregister();
}

/*
 * Run with interrupts disabled. Return: this CPU's tick device if the
 * script can run on it (oneshot broadcast through a real device, or
 * through the hrtimer one if @hrtimer, local timer stopping in deep
 * idle), else NULL with *why set.
 */
static struct clock_event_device *script_cpu_on(bool hrtimer, const char **why)
{
	struct clock_event_device *bc = tick_get_broadcast_device()->evtdev;
	struct clock_event_device *local = __this_cpu_read(tick_cpu_device.evtdev);

	*why = NULL;
	if (!bc || !!(bc->features & CLOCK_EVT_FEAT_HRTIMER) != hrtimer)
		*why = hrtimer ? "no hrtimer broadcast device" : "no real broadcast device";
	else if (!local || !(local->features & CLOCK_EVT_FEAT_C3STOP))
		*why = "local timer keeps running in deep idle";
	else if (!tick_broadcast_oneshot_active() ||
		 __this_cpu_read(tick_cpu_device.mode) != TICKDEV_MODE_ONESHOT)
		*why = "tick is not in oneshot mode";
	return *why ? NULL : local;
}

static struct clock_event_device *script_cpu(const char **why)
{
	return script_cpu_on(false, why);
}

/*
 * Let the broadcast device run out of work. False if it stays armed: other
 * CPUs sleep on it, and an enter of ours may then arm nothing.
 */
static bool wait_bc_idle(void)
{
	struct clock_event_device *bc = tick_get_broadcast_device()->evtdev;
	int i;

	for (i = 0; bc && i < 100 && READ_ONCE(bc->next_event) != KTIME_MAX; i++)
		usleep_range(1000, 2000);
	return !bc || READ_ONCE(bc->next_event) == KTIME_MAX;
}

/* Skip the case, the probes detached, if other CPUs keep the device armed. */
static void bc_idle_or_skip(struct kunit *test)
{
	if (wait_bc_idle())
		return;
	trace_detach(test);
	kunit_skip(test, "other CPUs keep the broadcast device armed");
}

static struct rec *rec_at(int i)
{
	return i < min(atomic_read(&trace_log.n), NR_RECS) ? &trace_log.recs[i] : NULL;
}

static bool expired_seen(void)
{
	struct rec *r;
	int i;

	for (i = 0; (r = rec_at(i)); i++)
		if (r->type == REC_EXPIRE)
			return true;
	return false;
}

#define EXPECT_REC(test, r, what)					\
	KUNIT_ASSERT_NOT_NULL_MSG(test, r, "no %s event recorded", what)

/* The first ENTER queues @cpu for @t, programming the device inside it. */
static void expect_program_enter(struct kunit *test, unsigned int cpu, ktime_t t)
{
	struct rec *r = rec_at(0);

	EXPECT_REC(test, r, "program");
	KUNIT_EXPECT_EQ(test, r->type, REC_PROGRAM);
	KUNIT_EXPECT_EQ(test, r->t, t);
	KUNIT_EXPECT_EQ(test, r->result, (int)cpu);
	r = rec_at(1);
	EXPECT_REC(test, r, "enter");
	KUNIT_EXPECT_EQ(test, r->type, REC_ENTER);
	KUNIT_EXPECT_EQ(test, r->t, t);
	KUNIT_EXPECT_EQ(test, r->result, TICK_BC_ENTER_QUEUED);
}

/*
 * Woken early by another interrupt: ENTER queues the CPU and programs the
 * device for its event, EXIT reprograms the local device. No expiry.
 */
static void trace_enter_exit_early(struct kunit *test)
{
	struct clock_event_device *local;
	unsigned long flags;
	const char *why;
	unsigned int cpu;
	struct rec *r;
	int ret, tries;
	ktime_t t, done;

	KUNIT_ASSERT_EQ(test, trace_attach(test), 0);
	bc_idle_or_skip(test);

	for (tries = 0; ; tries++) {
		local_irq_save(flags);
		local = script_cpu(&why);
		if (!local) {
			local_irq_restore(flags);
			trace_detach(test);
			kunit_skip(test, "%s", why);
		}
		t = local->next_event;
		/* Far enough that no expiry can come before the exit. */
		if (tries == 20 || ktime_after(t, ktime_add_ms(ktime_get(), 1)))
			break;
		local_irq_restore(flags);
		usleep_range(200, 400);
	}
	cpu = smp_processor_id();
	WRITE_ONCE(trace_log.cpu, cpu);
	ret = tick_broadcast_enter();
	tick_broadcast_exit();
	done = ktime_get();
	WRITE_ONCE(trace_log.cpu, UINT_MAX);
	local_irq_restore(flags);
	trace_detach(test);

	/* A slow kernel (lockdep, KASAN) or host may not exit early at all. */
	if (!ktime_before(done, t))
		kunit_skip(test, "the exit came %lld us after the CPU's event: not early",
			   ktime_us_delta(done, t));
	KUNIT_EXPECT_EQ(test, ret, 0);
	expect_program_enter(test, cpu, t);
	/*
	 * Then the exit. Another CPU's broadcast interrupt (one armed at
	 * boot, say) may re-arm the device for this CPU meanwhile: a program
	 * event may come first, an expiry of this CPU may not.
	 */
	r = rec_at(2);
	if (r && r->type == REC_PROGRAM)
		r = rec_at(3);
	EXPECT_REC(test, r, "exit");
	KUNIT_EXPECT_EQ(test, r->type, REC_EXIT);
	KUNIT_EXPECT_EQ(test, r->result, TICK_BC_EXIT_REPROGRAM);
	KUNIT_EXPECT_EQ(test, atomic_read(&trace_log.n), (int)(r - rec_at(0)) + 1);
}

/*
 * With the hrtimer broadcast a CPU alone in deep idle arms the hrtimer
 * on itself and so becomes its owner, whose local timer must keep
 * running: the ENTER programs the device, is refused (busy_owner, no
 * EXIT owed).
 */
static void trace_owner_enter_is_refused(struct kunit *test)
{
	struct clock_event_device *local;
	unsigned long flags;
	const char *why;
	unsigned int cpu;
	struct rec *r;
	ktime_t t;
	int ret;

	KUNIT_ASSERT_EQ(test, trace_attach(test), 0);
	bc_idle_or_skip(test);

	local_irq_save(flags);
	local = script_cpu_on(true, &why);
	if (!local) {
		local_irq_restore(flags);
		trace_detach(test);
		kunit_skip(test, "%s", why);
	}
	cpu = smp_processor_id();
	WRITE_ONCE(trace_log.cpu, cpu);
	t = local->next_event;
	ret = tick_broadcast_enter();
	if (!ret)
		tick_broadcast_exit();
	WRITE_ONCE(trace_log.cpu, UINT_MAX);
	local_irq_restore(flags);
	trace_detach(test);

	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	r = rec_at(0);
	EXPECT_REC(test, r, "program");
	KUNIT_EXPECT_EQ(test, r->type, REC_PROGRAM);
	KUNIT_EXPECT_EQ(test, r->t, t);
	r = rec_at(1);
	EXPECT_REC(test, r, "enter");
	KUNIT_EXPECT_EQ(test, r->type, REC_ENTER);
	KUNIT_EXPECT_EQ(test, r->result, TICK_BC_ENTER_BUSY_OWNER);
}

/*
 * Asleep past its event with interrupts off: the CPU's wakeup comes from
 * the broadcast device. Either EXIT finds the event expired first (forced:
 * a second ENTER is refused, and the expiry wakes it afterwards), or the
 * broadcast interrupt, handled on another CPU, woke it before its EXIT.
 * The expiry may also come between the forced EXIT and the second ENTER,
 * which is then accepted (and exited, as cpuidle would). Or it comes
 * inside the EXIT, after the CPU left the sleepers and before its local
 * device found the event expired: the device is then not due, and the
 * local device fires at once (reprogram).
 */
static void trace_enter_expire_exit(struct kunit *test)
{
	struct clock_event_device *local;
	int ret, refused = 0, i, woken_at = -1, exit_at = -1;
	unsigned long flags;
	bool forced = false, reprogram;
	const char *why;
	unsigned int cpu;
	struct rec *r;
	ktime_t t, t_wait;

	KUNIT_ASSERT_EQ(test, trace_attach(test), 0);
	bc_idle_or_skip(test);

	local_irq_save(flags);
	local = script_cpu(&why);
	if (!local) {
		local_irq_restore(flags);
		trace_detach(test);
		kunit_skip(test, "%s", why);
	}
	cpu = smp_processor_id();
	WRITE_ONCE(trace_log.cpu, cpu);
	t = local->next_event;
	ret = tick_broadcast_enter();
	while (ktime_before(ktime_get(), ktime_add_us(t, 100)))
		cpu_relax();
	tick_broadcast_exit();
	for (i = 2; (r = rec_at(i)) && exit_at < 0; i++)
		if (r->type == REC_EXIT)
			exit_at = i;
	reprogram = exit_at >= 0 && rec_at(exit_at)->result == TICK_BC_EXIT_REPROGRAM;
	if (tick_check_broadcast_expired()) {
		forced = true;
		refused = tick_broadcast_enter();
		/*
		 * The expiry, on another CPU, may have delivered the forced
		 * event since the check: then the enter is accepted, and
		 * like every accepted enter it needs its exit.
		 */
		if (!refused)
			tick_broadcast_exit();
	}
	local_irq_restore(flags);
	/*
	 * The broadcast interrupt delivers the forced event; it can be late
	 * on a loaded host.
	 */
	t_wait = ktime_get();
	while (!reprogram && !expired_seen() && ktime_ms_delta(ktime_get(), t_wait) < 5000)
		usleep_range(1000, 2000);
	kunit_info(test, "CPU%u %s, %d events\n", cpu,
		   reprogram ? "reprogrammed" :
		   forced ? (refused ? "forced, enter refused" : "forced, enter accepted") :
		   "forced or woken, no second enter", atomic_read(&trace_log.n));
	WRITE_ONCE(trace_log.cpu, UINT_MAX);
	trace_detach(test);

	KUNIT_EXPECT_EQ(test, ret, 0);
	expect_program_enter(test, cpu, t);

	KUNIT_ASSERT_GE_MSG(test, exit_at, 0, "no exit of CPU%u", cpu);
	for (i = 2; (r = rec_at(i)); i++) {
		if (r->type == REC_EXPIRE && woken_at < 0)
			woken_at = i;
	}
	if (reprogram) {
		KUNIT_EXPECT_FALSE(test, forced);
		KUNIT_EXPECT_LT_MSG(test, woken_at, 0, "an expiry woke CPU%u after a reprogram",
				    cpu);
		return;
	}
	KUNIT_ASSERT_GE_MSG(test, woken_at, 0, "no expiry woke CPU%u", cpu);
	r = rec_at(woken_at);
	KUNIT_EXPECT_GE(test, r->t, t);
	KUNIT_EXPECT_EQ(test, r->next, KTIME_MAX);

	r = rec_at(exit_at);
	if (r->result == TICK_BC_EXIT_WOKEN) {
		KUNIT_EXPECT_LT(test, woken_at, exit_at);
		return;
	}
	KUNIT_ASSERT_EQ(test, r->result, TICK_BC_EXIT_FORCED);
	KUNIT_EXPECT_GT(test, woken_at, exit_at);
	/*
	 * The expiry may have delivered the forced event before the check
	 * (no second enter) or between the check and the enter (accepted).
	 */
	if (!forced || !refused)
		return;
	r = rec_at(exit_at + 1);
	EXPECT_REC(test, r, "refused enter");
	KUNIT_EXPECT_EQ(test, r->type, REC_ENTER);
	KUNIT_EXPECT_EQ(test, r->result, TICK_BC_ENTER_BUSY_FORCED);
	KUNIT_EXPECT_EQ(test, refused, -EBUSY);
}

static struct kunit_case tick_broadcast_trace_cases[] = {
	KUNIT_CASE(trace_enter_exit_early),
	KUNIT_CASE(trace_enter_expire_exit),
	KUNIT_CASE(trace_owner_enter_is_refused),
	{}
};

#else /* no oneshot broadcast, or tracepoints */

static void trace_needs_broadcast_and_tracepoints(struct kunit *test)
{
	kunit_skip(test,
		   "needs GENERIC_CLOCKEVENTS_BROADCAST, TICK_ONESHOT and TRACEPOINTS");
}

static struct kunit_case tick_broadcast_trace_cases[] = {
	KUNIT_CASE(trace_needs_broadcast_and_tracepoints),
	{}
};

#endif

static struct kunit_suite tick_broadcast_trace_suite = {
	.name = "tick_broadcast_trace",
	.test_cases = tick_broadcast_trace_cases,
};

kunit_test_suite(tick_broadcast_trace_suite);

MODULE_DESCRIPTION("KUnit tests of the tick broadcast trace events");
MODULE_LICENSE("GPL");
