// SPDX-License-Identifier: GPL-2.0
/*
 * Tick broadcast, the decision core.
 *
 * Design
 * ======
 *
 * A CPU whose local clock event device stops in deep idle (C3STOP) hands
 * its next event to the broadcast device before going there, and the
 * broadcast device, which keeps running, wakes it with an IPI. This file
 * decides everything about that hand-over; tick-broadcast.c carries the
 * decisions out (devices, IPIs, the lock, the kernel interfaces).
 *
 * The core has no globals, takes no locks and reads no clock: one
 * instance, struct tick_bc, holds the state of a machine, the time comes
 * in as an argument, and the only side effect is arming the broadcast
 * device through struct tick_bc_ops. The kernel has one instance; the
 * KUnit suite makes as many as it likes, with hundreds of simulated CPUs.
 *
 * Data structures
 * ---------------
 *
 *   wakeup     array: each CPU's wakeup time, read only for the CPUs in
 *              oneshot. An enter writes it, KTIME_MAX for none; an expiry
 *              that wakes the CPU sets it to KTIME_MAX, so that no later
 *              expiry wakes it again.
 *   oneshot    bitmap: CPUs relying on the oneshot broadcast right now
 *              (between enter and exit, or handed over at the switch from
 *              periodic mode until they switch themselves).
 *   pending    bitmap: CPUs woken by expiry whose IPI is on its way. Their
 *              exit must not reprogram the local device.
 *   force      bitmap: CPUs whose event had already expired at exit, before
 *              the broadcast interrupt came. They must not go deep again
 *              (tick_check_broadcast_expired() makes the idle loop poll)
 *              and the next expiry wakes them whatever their time.
 *   on         bitmap: CPUs that asked for broadcast (ON or FORCE).
 *   periodic   bitmap: CPUs whose periodic tick comes from the broadcast
 *              device (tick_get_broadcast_mask()).
 *   armed      what the device is armed for, KTIME_MAX when it is not.
 *   dev        the device itself (NULL for none) and the broadcast mode,
 *              periodic until the first CPU switches its tick to oneshot
 *              mode, then oneshot for good.
 *   early_ok   bitmap: CPUs that may be woken early, see "Coalescing"
 *              below (set when they switch their tick to hrtimer_interrupt(),
 *              cleared when they go offline).
 *
 * Invariants, after every function returns, with
 * sleeping(cpu) = oneshot(cpu) && wakeup(cpu) != KTIME_MAX:
 *
 *   I1  pending(cpu)  =>  wakeup(cpu) == KTIME_MAX, so !sleeping(cpu)
 *   I2  pending(cpu) =>  oneshot(cpu)
 *   I3  some CPU sleeping  =>  armed <= earliest wakeup of the sleeping
 *   I4  force(cpu)   =>  !oneshot(cpu), and nr_force counts force
 *   I5  force not empty  =>  armed != KTIME_MAX
 *
 * (I2 holds for the CPU handling an expiry too: expiry clears its
 * pending bit, since that CPU runs its own handler at once.)
 *
 * I3 and I5 are what "no lost wakeup" means here: every sleeper and every
 * forced CPU has a device interrupt coming no later than it needs one.
 * They hold for the device only if the caller keeps one more:
 *
 *   I6  the device fires no later than armed
 *
 * since an enter arms the device only for a wakeup earlier than armed.
 * In oneshot mode the device is therefore programmed only through
 * ops->arm and by its own interrupt, which always runs tick_bc_expire()
 * and then arms the device for what that sets armed to.
 *
 * Why an array
 * ------------
 *
 * Enter and exit run around every deep idle state, under the lock every
 * CPU of the machine takes: they write one time and one bit, whatever
 * the number of sleepers. Expiry runs once per device interrupt and
 * walks the oneshot bitmap a word at a time, reading the times of the
 * CPUs in it from one array, eight to a 64-byte cache line, where a scan
 * of the CPUs' tick devices would read a remote cache line per sleeper.
 * Each expired CPU costs a few stores. A queue ordered by time would make
 * the expiry follow the number of CPUs woken rather than of sleepers,
 * but would move its cost to every enter, taken far more often.
 *
 * Coalescing
 * ----------
 *
 * With a window W > 0 (tick_bc_set_window(), 0 by default) one device
 * interrupt also wakes the sleepers that are due shortly after it. The
 * rule, and what it guarantees:
 *
 *   the device stays armed for the earliest sleeper, exactly as without
 *   coalescing; an expiry at now wakes every sleeper due at now or
 *   before, and also every sleeper of early_ok due in (now, now + W].
 *
 * No CPU is woken later because of it: arming is untouched (I3), so every
 * sleeper still has an interrupt coming no later than its wakeup time,
 * and coalescing only ever wakes sleepers earlier. No CPU is woken more
 * than W early: the expiry wakes nobody due after now + W. Arming later
 * than the earliest wakeup time would buy more company for one interrupt
 * at the price of making the earliest sleeper late, so the gain can only
 * come from waking the followers early.
 *
 * Each sleeper must be woken within [t - W, t], t its wakeup time. When
 * all of them are known at once, the fewest interrupts that do it is the
 * interval stabbing problem, and its greedy solution (take the earliest
 * unserved t, serve every t' <= t + W with it, repeat) is what the rule
 * does, expiry after expiry: only sleepers that enter after an expiry
 * and would have fitted in its window are served by a later interrupt.
 *
 * A CPU woken early runs its tick handler before its event. Only CPUs
 * whose handler is hrtimer_interrupt() are woken early (early_ok): it
 * runs only the timers that are due, finds none, and programs the local
 * device for the event. Every other tick handler would do a tick's work
 * early: the periodic handlers advance jiffies, and the low resolution
 * NOHZ handler runs update_process_times() whenever it is called, so the
 * tick would be handled twice. A CPU whose tick is periodic (handed over,
 * or just brought online) or low resolution is woken at its time.
 *
 * A CPU woken early that comes back to deep idle for the same wakeup
 * time sleeps again like any other, and may re-arm the device for the
 * time just served: refusing it instead would leave it with nothing armed
 * for it whenever its caller ignores the refusal and stops the local
 * timer anyway (default_idle_call() on AMD's C1E erratum, acpi_pad), and
 * cpuidle, which honours it, mostly picks a shallow state for an event
 * that close.
 *
 * With W = 0 nothing of this runs: the expiry tests the window first.
 *
 * Per-CPU state machine (oneshot mode)
 * ------------------------------------
 *
 *           enter(t)                 expire: t <= now
 *   AWAKE ------------> SLEEPING(t) -----------------> WOKEN (pending)
 *     ^  ^                 |   |                           |
 *     |  |   exit: t > now |   | exit: t <= now, due       | exit
 *     |  +-----------------+   v                           |
 *     |  (reprogram local)   FORCED (polls) --expire-->    |
 *     +-------------------------------------------------<--+
 *                                   (resume, no reprogram)
 *
 * Enter with t == KTIME_MAX sleeps with no wakeup time: the tick is
 * stopped and no timer is queued, so nothing wakes the CPU but an
 * unrelated interrupt.
 *
 * Lifetime
 * --------
 *
 * The instance lives as long as the machine. A CPU leaves every mask when
 * it goes offline (tick_bc_offline()). Replacing the
 * device keeps all state but "armed", which restarts at KTIME_MAX, and
 * tick_bc_retrigger() arms the new device at once if anybody sleeps.
 *
 * Locking rules
 * -------------
 *
 * The caller serialises all calls on an instance; in the kernel that is
 * tick_broadcast_lock, a raw spinlock taken with interrupts disabled,
 * nested inside clockevents_lock. The ops are called under it. The idle
 * loop's tick_check_broadcast_expired() reads its own CPU's force bit
 * without it; that CPU's own exit sets the bit and expiry on another CPU
 * clears it: a stale read only costs one more round of the poll loop or
 * one shallow idle entry.
 *
 * Races handled
 * -------------
 *
 * 1) Exit before the IPI arrives (pending). Expiry wakes CPU1 and sends the
 *    IPI after dropping the lock; CPU1 leaves idle for another reason
 *    first:
 *
 *      CPU0 (broadcast irq)          CPU1
 *      lock; expire: pending(1)
 *      unlock
 *                                    lock; exit: pending -> WOKEN
 *                                    (local device not reprogrammed)
 *                                    unlock
 *      IPI(1)  ------------------->  tick handler runs the expired event
 *
 *    Reprogramming on exit would set the local device min_delta in the
 *    future for an event the IPI delivers anyway.
 *
 * 2) Exit after the event expired, before the broadcast interrupt (force):
 *
 *      CPU0                          CPU1 (sleeping, t1 <= now)
 *                                    lock; exit: reprogram; unlock
 *                                    local device: t1 expired
 *                                    lock; exit_late: force(1); unlock
 *                                    idle loop polls (expired check)
 *      broadcast irq: lock; expire:
 *      wake |= force, clear force
 *      unlock; IPI(1)  ------------> tick handler
 *
 *    Reprogramming instead would let CPU1 re-enter deep idle, re-arm the
 *    broadcast device for the same expired time and ping-pong. Between
 *    the exit and its late step CPU1 is neither sleeping nor forced: an
 *    expiry then skips it and arms for the others (or a last
 *    OFF or a replacement disarms the device), the late step finds the
 *    device not due, and CPU1's local device fires at once. Forced only
 *    with the device armed, I5 holds. Offline and the hrtimer pull cannot
 *    come in between: the exit runs with interrupts disabled. An enter
 *    while forced is refused (BUSY_FORCED) and leaves no trace: the CPU
 *    is not added to the oneshot mask and its local device is not
 *    stopped. Left in the mask with its device down, the CPU would have a
 *    later enter find its bit set and arm nothing.
 *
 * 3) The IPI is sent outside the lock. Between unlock and IPI, a woken
 *    CPU may exit (race 1) and even enter again with a new time; the late
 *    IPI then wakes it early, once, and it goes back to sleep through the
 *    normal path. Nothing is lost, and enter/exit on other CPUs do not
 *    wait for IPIs to be sent.
 *
 * 4) Woken CPUs are not woken again. Expiry sets a woken CPU's wakeup
 *    time to KTIME_MAX, so the expiries between that and its exit send
 *    it no further IPI although it stays in the oneshot mask.
 *
 * 5) The hrtimer pseudo device runs on some awake CPU. The CPU holding the
 *    timer must not go deep (tick_bc_owner_busy()), and a CPU that arms it
 *    and finds the timer on itself backs out of its enter (BUSY_OWNER).
 *    "Holding" is where the timer is, not where it was armed from:
 *    hrtimer_start() cannot move a timer whose callback is running, so
 *    every arming asks ops->owner() right after (armed_on), but the
 *    expiry's, made from that callback, which stays put. Only the
 *    hotplug code moves the timer otherwise, behind the broadcast's back,
 *    off a dying CPU: take_cpu_down() takes the CPU out of the online
 *    mask before the dying callbacks move its timers, with every other
 *    CPU stopped, and the pull (6) re-arms the timer before the CPU can
 *    come back. So armed_on holds the timer while it is online, and the
 *    owner is asked again only when armed_on is offline:
 *
 *      CPU1 (dying, holds it)        CPU2                  CPU0 (control)
 *      hrtimers_cpu_dying():
 *      timer moved to CPU2
 *                                    enter: owner is CPU2,
 *                                    refused (a CPU armed
 *                                    "on CPU1" would be let
 *                                    go deep with the only
 *                                    broadcast source)
 *                                                          pull: the timer
 *                                                          was on CPU1, see 6
 *
 * 6) The hrtimer owner goes offline: tick_bc_pull() re-arms the timer on
 *    the control CPU and clears that CPU's force bit, since nothing would
 *    otherwise program its stopped local device. It asks where the timer
 *    was when last armed, as well as where it is: the hotplug code has
 *    usually moved it already, and on the CPU it went to it runs only
 *    when that CPU's local device fires. In high resolution mode the move
 *    reprograms that device; in low resolution mode (highres=off) the
 *    timer waits for that CPU's tick, which a forced CPU does not have.
 *
 * 7) The last TICK_BROADCAST_OFF in oneshot mode while others sleep: the
 *    device stays armed: shutting it down would strand the sleepers until
 *    some other interrupt came.
 *
 * 8) A periodic broadcast interrupt across the first switch to oneshot
 *    mode (or raised between a device's installation and that switch):
 *
 *      CPU0 (broadcast irq)          CPU1
 *      periodic handler
 *                                    lock; switch: the periodic CPUs sleep
 *                                    until next_period, armed = next_period
 *      lock (spins) ...              unlock
 *      ... mode is oneshot: unlock,
 *      expire
 *
 *    Re-arming the device a period on, as in periodic mode, would break
 *    I6: a CPU entering with a wakeup between armed and the device's time
 *    would arm nothing and wake up to a period late. Just returning would
 *    break I3: in emulated periodic mode the switch took the device's
 *    arming as armed, and this interrupt is that arming, spent. So the
 *    handler runs the oneshot expiry instead, which is safe at any time
 *    (it wakes only expired and forced CPUs and sets armed to the
 *    earliest sleeper, for which the handler re-arms the device) and
 *    restores I3 and I6. It arms the device the way any expiry does, so
 *    it cannot race one.
 *
 * 9) The switch right after a periodic tick re-armed an emulating device,
 *    before the tick moved next_period on: the device fires a period
 *    after next_period, and the periodic CPUs had the tick at
 *    next_period already. Arming the device for next_period would give
 *    them that tick twice (and the CPU that owns jiffies a second
 *    do_timer(1)), so the glue hands them over at the device's arming
 *    instead: next_period is never earlier than it (device_armed).
 */

#include <linux/bitmap.h>
#include <linux/bug.h>
#include <linux/clockchips.h>
#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "tick-broadcast-core.h"

/* Where the hrtimer device is right after its arming: see "Races handled" 5. */
static void note_armed_on(struct tick_bc *bc)
{
	if (tick_bc_hrtimer(bc))
		bc->armed_on = bc->ops->owner(bc);
}

static void bc_arm(struct tick_bc *bc, ktime_t expires, unsigned int cpu)
{
	__tick_bc_arm(bc, expires, cpu);
	note_armed_on(bc);
}

static void force_clear(struct tick_bc *bc, unsigned int cpu)
{
	if (__test_and_clear_bit(cpu, bc->force))
		bc->nr_force--;
}

/**
 * tick_bc_device_eligible - may @dev become the broadcast device
 * @cur:	the current broadcast device, or NULL
 * @dev:	the candidate
 * @oneshot:	the broadcast runs in oneshot mode
 *
 * It must keep running in deep idle and serve every CPU (not C3STOP, not
 * PERCPU, not a DUMMY placeholder), support oneshot mode once that is in
 * use, and rate strictly higher than @cur.
 *
 * Return: true if @dev should replace @cur.
 */
bool tick_bc_device_eligible(const struct clock_event_device *cur,
			     const struct clock_event_device *dev, bool oneshot)
{
	if (dev->features & (CLOCK_EVT_FEAT_DUMMY | CLOCK_EVT_FEAT_PERCPU |
			     CLOCK_EVT_FEAT_C3STOP))
		return false;
	if (oneshot && !(dev->features & CLOCK_EVT_FEAT_ONESHOT))
		return false;
	return !cur || dev->rating > cur->rating;
}

/**
 * tick_bc_wakeup_eligible - may @dev become @cpu's oneshot wakeup device
 * @cur:	@cpu's current wakeup device, or NULL
 * @dev:	the candidate
 * @cpu:	the CPU registering it
 *
 * A per-CPU oneshot device of @cpu alone that keeps running in deep idle
 * and rates strictly higher than @cur wakes @cpu instead of the broadcast.
 *
 * Return: true if @dev should replace @cur.
 */
bool tick_bc_wakeup_eligible(const struct clock_event_device *cur,
			     const struct clock_event_device *dev, unsigned int cpu)
{
	const unsigned int want = CLOCK_EVT_FEAT_PERCPU | CLOCK_EVT_FEAT_ONESHOT;

	if (dev->features & (CLOCK_EVT_FEAT_DUMMY | CLOCK_EVT_FEAT_C3STOP))
		return false;
	if ((dev->features & want) != want || !cpumask_equal(dev->cpumask, cpumask_of(cpu)))
		return false;
	return !cur || dev->rating > cur->rating;
}

/**
 * tick_bc_init - set up an instance with no CPU relying on broadcast
 * @bc:		the instance
 * @ops:	device operations
 * @nr_cpus:	number of CPUs
 * @stride:	longs per bitmap, at least BITS_TO_LONGS(@nr_cpus) (the
 *		kernel uses cpumask_size() so that they read as cpumasks)
 * @wakeup:	@nr_cpus wakeup times
 * @masks:	TICK_BC_NR_MASKS * @stride longs for the bitmaps
 * @online:	bitmap of the CPUs that may be woken, kept by the caller
 *
 * The coalescing window starts at 0.
 */
void tick_bc_init(struct tick_bc *bc, const struct tick_bc_ops *ops,
		  unsigned int nr_cpus, unsigned int stride,
		  ktime_t *wakeup, unsigned long *masks, const unsigned long *online)
{
	unsigned int longs = max_t(unsigned int, stride, BITS_TO_LONGS(nr_cpus)), cpu;

	*bc = (struct tick_bc) {
		.ops = ops,
		.nr_cpus = nr_cpus,
		.wakeup = wakeup,
		.online = online,
		.on = masks,
		.periodic = masks + longs,
		.oneshot = masks + 2 * longs,
		.pending = masks + 3 * longs,
		.force = masks + 4 * longs,
		.early_ok = masks + 5 * longs,
		.armed = KTIME_MAX,
		.armed_on = -1,
		.dev.mode = TICKDEV_MODE_PERIODIC,
	};
	memset(masks, 0, TICK_BC_NR_MASKS * longs * sizeof(long));
	for (cpu = 0; cpu < nr_cpus; cpu++)
		wakeup[cpu] = KTIME_MAX;
}

/**
 * tick_bc_set_device - a broadcast device was installed or removed
 * @bc:		the instance
 * @dev:	the device now, NULL for none
 *
 * A new device starts shut down, so nothing is armed. Lockless readers
 * may look at the device pointer only; whether it is the hrtimer device
 * is read under the caller's lock.
 */
void tick_bc_set_device(struct tick_bc *bc, struct clock_event_device *dev)
{
	WRITE_ONCE(bc->dev.evtdev, dev);
	bc->hrtimer = dev && (dev->features & CLOCK_EVT_FEAT_HRTIMER);
	bc->armed = KTIME_MAX;
}

/**
 * tick_bc_retrigger - arm a freshly installed oneshot device at once
 * @bc:		the instance
 *
 * If anybody relies on the oneshot broadcast, the device is armed for
 * time 0, in the past, so that it fires as soon as it can and expiry
 * re-evaluates every sleeper. The interrupt goes to the first CPU relying
 * on it.
 *
 * Return: true if the device was armed.
 */
bool tick_bc_retrigger(struct tick_bc *bc)
{
	unsigned int cpu = find_first_bit(bc->oneshot, bc->nr_cpus);

	if (cpu >= bc->nr_cpus && !bc->nr_force)
		return false;
	if (cpu >= bc->nr_cpus)
		cpu = find_first_bit(bc->force, bc->nr_cpus);
	bc_arm(bc, 0, cpu);
	return true;
}

/**
 * tick_bc_disarmed - the caller shut the device down
 * @bc:		the instance
 */
void tick_bc_disarmed(struct tick_bc *bc)
{
	bc->armed = KTIME_MAX;
}

/**
 * tick_bc_control - TICK_BROADCAST_ON, OFF or FORCE on a CPU
 * @bc:		the instance
 * @cpu:	the CPU, whose tick device stops in deep idle
 * @mode:	what it asks for
 *
 * ON and FORCE put the CPU in the on and periodic masks; FORCE also makes
 * every later OFF, on any CPU, a no-op. OFF takes it out of both.
 *
 * Return: what changed in the periodic mask, for the caller to start or
 * stop devices.
 */
struct tick_bc_change tick_bc_control(struct tick_bc *bc, unsigned int cpu,
				      enum tick_broadcast_mode mode)
{
	bool was_empty = bitmap_empty(bc->periodic, bc->nr_cpus);
	struct tick_bc_change ch = { };

	switch (mode) {
	case TICK_BROADCAST_FORCE:
		bc->forced = true;
		fallthrough;
	case TICK_BROADCAST_ON:
		__set_bit(cpu, bc->on);
		ch.joined = !__test_and_set_bit(cpu, bc->periodic);
		break;
	case TICK_BROADCAST_OFF:
		if (bc->forced)
			break;
		__clear_bit(cpu, bc->on);
		ch.left = __test_and_clear_bit(cpu, bc->periodic);
		break;
	}

	ch.first = was_empty && (ch.joined || !bitmap_empty(bc->periodic, bc->nr_cpus));
	ch.last = !was_empty && bitmap_empty(bc->periodic, bc->nr_cpus);
	return ch;
}

/**
 * tick_bc_set_periodic - put a CPU in or out of the periodic mask
 * @bc:		the instance
 * @cpu:	the CPU
 * @periodic:	whether its periodic tick comes from the broadcast device
 *
 * For a CPU whose tick device is being set up: a device that does not
 * stop in deep idle, or a CPU that did not ask for broadcast, leaves the
 * mask; a dummy device (no local timer at all) joins it.
 */
void tick_bc_set_periodic(struct tick_bc *bc, unsigned int cpu, bool periodic)
{
	if (periodic)
		__set_bit(cpu, bc->periodic);
	else
		__clear_bit(cpu, bc->periodic);
}

/**
 * tick_bc_periodic_wake - the CPUs a periodic broadcast tick wakes
 * @bc:		the instance
 * @this_cpu:	the CPU handling the broadcast interrupt
 * @wake:	filled with the online CPUs of the periodic mask, but
 *		@this_cpu
 *
 * Return: true if @this_cpu needs its own tick handler run directly.
 * Never with the hrtimer device: this CPU's hrtimer interrupt is already
 * running its timers.
 */
bool tick_bc_periodic_wake(struct tick_bc *bc, unsigned int this_cpu,
			   unsigned long *wake)
{
	bool self;

	bitmap_and(wake, bc->periodic, bc->online, bc->nr_cpus);
	self = __test_and_clear_bit(this_cpu, wake);
	return self && !tick_bc_hrtimer(bc);
}

/**
 * tick_bc_cpu_reset - a CPU no longer relies on the oneshot broadcast
 * @bc:		the instance
 * @cpu:	the CPU
 *
 * Its tick device was set up anew or it switched itself to oneshot mode:
 * any stale oneshot or pending bit would keep its next enter from arming
 * the device.
 */
void tick_bc_cpu_reset(struct tick_bc *bc, unsigned int cpu)
{
	__clear_bit(cpu, bc->oneshot);
	__clear_bit(cpu, bc->pending);
}

/**
 * tick_bc_switch_oneshot - a CPU switches its tick to oneshot mode
 * @bc:		the instance
 * @this_cpu:	the CPU switching
 * @early_ok:	its tick handler is hrtimer_interrupt(): it may be woken
 *		early from now on (see "Coalescing")
 * @next_period: the next periodic tick
 * @device_armed: the device already runs in oneshot state (emulated
 *		periodic mode) and is armed for @next_period or earlier
 *
 * The first switch turns the broadcast to oneshot mode for good. The CPUs
 * that waited for periodic broadcast ticks, but this one, are handed over
 * (if there is a device to hand them to):
 * they sleep on the oneshot broadcast until @next_period, which gives each
 * the one tick it needs to switch itself. Later switches only reset
 * @this_cpu.
 *
 * Return: true if the device was armed here.
 */
bool tick_bc_switch_oneshot(struct tick_bc *bc, unsigned int this_cpu, bool early_ok,
			    ktime_t next_period, bool device_armed)
{
	bool handed = false;
	unsigned int cpu;

	tick_bc_cpu_reset(bc, this_cpu);
	__assign_bit(this_cpu, bc->early_ok, early_ok);
	if (tick_bc_oneshot_mode(bc))
		return false;

	WRITE_ONCE(bc->dev.mode, TICKDEV_MODE_ONESHOT);
	if (!bc->dev.evtdev)
		return false;
	bc->armed = KTIME_MAX;
	for_each_set_bit(cpu, bc->periodic, bc->nr_cpus) {
		if (cpu == this_cpu)
			continue;
		__set_bit(cpu, bc->oneshot);
		bc->wakeup[cpu] = next_period;
		handed = true;
	}

	if (!handed || next_period == KTIME_MAX)
		return false;
	if (device_armed) {
		bc->armed = next_period;
		note_armed_on(bc);
		return false;
	}
	bc_arm(bc, next_period, this_cpu);
	return true;
}

/**
 * tick_bc_owner_busy - the CPU holds the hrtimer broadcast and must stay up
 * @bc:		the instance
 * @cpu:	the CPU
 *
 * Return: true if @cpu may not go deep because the armed hrtimer pseudo
 * device runs on it.
 */
bool tick_bc_owner_busy(struct tick_bc *bc, unsigned int cpu)
{
	int owner;

	if (!tick_bc_hrtimer(bc) || bc->armed == KTIME_MAX)
		return false;
	owner = tick_bc_known_owner(bc);
	/* Moved off a dying CPU by the hotplug code: ask where it is now. */
	if (owner < 0)
		owner = bc->ops->owner(bc);
	return owner == (int)cpu;
}

/* tick_bc_enter(), every case. */
static enum tick_bc_enter_result enter(struct tick_bc *bc, unsigned int cpu,
				       ktime_t wakeup, struct tick_bc_enter_out *out)
{
	bool hrtimer = tick_bc_hrtimer(bc);

	*out = (struct tick_bc_enter_out) { };
	if (!tick_bc_oneshot_mode(bc))
		return hrtimer ? TICK_BC_ENTER_BUSY_HRTIMER : TICK_BC_ENTER_PERIODIC;
	if (tick_bc_owner_busy(bc, cpu))
		return TICK_BC_ENTER_BUSY_OWNER;
	if (test_bit(cpu, bc->force))
		return TICK_BC_ENTER_BUSY_FORCED;

	/* Woken already: the IPI is on its way, nothing to arm. */
	if (test_bit(cpu, bc->pending)) {
		WARN_ON_ONCE(!test_bit(cpu, bc->oneshot));
		return TICK_BC_ENTER_PENDING;
	}

	bc->wakeup[cpu] = wakeup;
	__set_bit(cpu, bc->oneshot);
	/*
	 * With the hrtimer device a CPU about to arm it may become its owner:
	 * keep its local device running until that is known.
	 */
	out->stop_local = !hrtimer || wakeup >= bc->armed;
	if (wakeup >= bc->armed)
		return TICK_BC_ENTER_QUEUED;

	bc_arm(bc, wakeup, cpu);
	out->armed = true;
	/* bc_arm() noted where the timer is now. */
	if (hrtimer && bc->armed_on == (int)cpu) {
		__clear_bit(cpu, bc->oneshot);
		out->stop_local = false;
		return TICK_BC_ENTER_BUSY_OWNER;
	}
	return TICK_BC_ENTER_QUEUED;
}

/**
 * __tick_bc_enter - tick_bc_enter() out of line, for every case
 * @bc:		the instance
 * @cpu:	the CPU
 * @wakeup:	its next event, KTIME_MAX for none
 *
 * Return: the result of the enter and what the caller must do besides,
 * by value: a pointer to the caller's would keep the caller's copy in
 * memory on the idle path (where the ABI returns it in registers, as on
 * x86-64 and arm64, it stays in them).
 */
struct tick_bc_entered __tick_bc_enter(struct tick_bc *bc, unsigned int cpu, ktime_t wakeup)
{
	struct tick_bc_entered e;

	e.result = enter(bc, cpu, wakeup, &e.out);
	return e;
}

/**
 * tick_bc_exit_late - an exit found its event expired
 * @bc:		the instance
 * @cpu:	the CPU, which tick_bc_exit() told to reprogram its local
 *		device, and whose local device then failed to take @wakeup
 * @wakeup:	its next event
 * @now:	the current time; an earlier one can only turn a forced exit
 *		into a reprogram, which is always safe
 *
 * Return: true if the event has expired and the device is due too: its
 * interrupt is on the way and will deliver the event (I5), and @cpu is
 * forced until it does.
 * Reprogramming the local device instead would invite a ping-pong; see
 * "Races handled" 2. False if the device is not due: the event moved
 * earlier while the CPU slept, or an expiry since tick_bc_exit() found
 * the CPU gone and armed the device for the others. The local device is
 * the quicker way then.
 */
bool tick_bc_exit_late(struct tick_bc *bc, unsigned int cpu, ktime_t wakeup, ktime_t now)
{
	if (wakeup > now || bc->armed > now)
		return false;
	/* Only its own exit forces a CPU, and a forced CPU does not sleep. */
	if (WARN_ON_ONCE(test_bit(cpu, bc->oneshot) || __test_and_set_bit(cpu, bc->force)))
		return true;
	bc->nr_force++;
	return true;
}

/**
 * tick_bc_expire - the broadcast device fired
 * @bc:		the instance
 * @this_cpu:	the CPU handling the interrupt
 * @now:	the current time
 * @wake:	filled with the CPUs to wake by IPI
 * @next_cpu:	set to the earliest remaining sleeper (meaningless if none)
 *
 * Wakes every sleeper whose time has come, and with a coalescing window
 * the sleepers of early_ok due within it, adds the forced CPUs and sets
 * armed to the wakeup time of the earliest remaining sleeper, KTIME_MAX
 * for none. A sleeper that is due but not online is a bug: warned about
 * once and dropped.
 *
 * The caller must be the device's interrupt, on @this_cpu, and must arm
 * the device for armed (if not KTIME_MAX) on @next_cpu before it drops
 * the lock, itself rather than through ops->arm. With the hrtimer device
 * that interrupt is the timer's callback, and a timer armed from its own
 * callback stays on the CPU running it (hrtimer_start() does not move a
 * running timer): the expiry notes @this_cpu as its holder (armed_on).
 * A device like it must also stay where its own interrupt arms it.
 *
 * The oneshot bitmap is walked a word at a time, not with
 * for_each_set_bit(): this runs with every CPU of the machine sleeping,
 * and a find_next_bit() call per sleeper would cost more than the test
 * of its time. Each word of @wake and of the pending bitmap is written
 * once.
 *
 * Return: true if @this_cpu needs its own tick handler run directly (never
 * with the hrtimer device, see tick_bc_periodic_wake()).
 */
bool tick_bc_expire(struct tick_bc *bc, unsigned int this_cpu, ktime_t now,
		    unsigned long *wake, unsigned int *next_cpu)
{
	ktime_t limit = ktime_add_ns(now, bc->window), next = KTIME_MAX;
	unsigned int i, words = BITS_TO_LONGS(bc->nr_cpus), first = 0;
	bool self;

	for (i = 0; i < words; i++) {
		ktime_t *wakeup = bc->wakeup + i * BITS_PER_LONG;
		unsigned long bits, woken = 0, stray;

		for (bits = bc->oneshot[i]; bits; bits &= bits - 1) {
			unsigned long bit = __ffs(bits);
			ktime_t t = wakeup[bit];

			/*
			 * With no window, limit is now: early_ok is not read.
			 * A woken CPU is pending until its exit, never woken
			 * again.
			 */
			if (t <= limit &&
			    (t <= now || test_bit(i * BITS_PER_LONG + bit, bc->early_ok))) {
				wakeup[bit] = KTIME_MAX;
				woken |= BIT(bit);
			} else if (t < next) {
				next = t;
				first = i * BITS_PER_LONG + bit;
			}
		}
		stray = woken & ~bc->online[i];
		if (WARN_ON_ONCE(stray)) {
			bc->oneshot[i] &= ~stray;
			woken &= ~stray;
		}
		bc->pending[i] |= woken;
		wake[i] = woken;
	}

	if (bc->nr_force) {
		bitmap_or(wake, wake, bc->force, bc->nr_cpus);
		bitmap_zero(bc->force, bc->nr_cpus);
		bc->nr_force = 0;
	}

	self = __test_and_clear_bit(this_cpu, wake);
	__clear_bit(this_cpu, bc->pending);

	/* Stores without a branch: armed_on and @next_cpu matter when armed. */
	bc->armed = next;
	bc->armed_on = this_cpu;
	*next_cpu = first;
	return self && !tick_bc_hrtimer(bc);
}

/**
 * tick_bc_set_window - set the coalescing window
 * @bc:		the instance
 * @window_ns:	how long after an expiry a sleeper may be due and still be
 *		woken by it; 0 turns coalescing off
 *
 * See "Coalescing" at the top of this file.
 *
 * Return: 0, or -ERANGE above TICK_BC_WINDOW_MAX_NS, which changes
 * nothing.
 */
int tick_bc_set_window(struct tick_bc *bc, u64 window_ns)
{
	if (window_ns > TICK_BC_WINDOW_MAX_NS)
		return -ERANGE;
	bc->window = window_ns;
	return 0;
}

/**
 * tick_bc_offline - a CPU is going offline
 * @bc:		the instance
 * @cpu:	the dying CPU
 *
 * It leaves every mask. The device keeps its arming: in
 * oneshot mode others may sleep on it, and an interrupt meant for the
 * dying CPU only finds nobody to wake.
 */
void tick_bc_offline(struct tick_bc *bc, unsigned int cpu)
{
	__clear_bit(cpu, bc->on);
	__clear_bit(cpu, bc->periodic);
	__clear_bit(cpu, bc->early_ok);
	tick_bc_cpu_reset(bc, cpu);
	force_clear(bc, cpu);
}

/**
 * tick_bc_pull - take the hrtimer broadcast from a dead CPU
 * @bc:		the instance
 * @dead_cpu:	the CPU that went offline
 * @this_cpu:	the control CPU, which takes over
 *
 * Only the hrtimer device runs on a CPU; if it was there when last armed,
 * or is there now, it is re-armed here (see 6 at the top of this file).
 * A force bit on the control CPU is dropped: its local device is stopped
 * and nothing would reprogram it, so the caller does.
 *
 * Return: true if the caller must reprogram its local device for its
 * next event.
 */
bool tick_bc_pull(struct tick_bc *bc, unsigned int dead_cpu, unsigned int this_cpu)
{
	bool was_forced;

	if (!tick_bc_hrtimer(bc) || bc->armed == KTIME_MAX ||
	    (bc->armed_on != (int)dead_cpu && bc->ops->owner(bc) != (int)dead_cpu))
		return false;

	was_forced = test_bit(this_cpu, bc->force);
	force_clear(bc, this_cpu);
	bc_arm(bc, bc->armed, this_cpu);
	return was_forced;
}
