// SPDX-License-Identifier: GPL-2.0
/*
 * Tick broadcast: the kernel side.
 *
 * Copyright(C) 2005-2006, Thomas Gleixner <tglx@linutronix.de>
 * Copyright(C) 2005-2007, Red Hat, Inc., Ingo Molnar
 * Copyright(C) 2006-2007, Timesys Corp., Thomas Gleixner
 *
 * The decisions (who sleeps until when, who is woken, what the device is
 * armed for) are made by the core in tick-broadcast-core.c, whose design
 * comment describes the state, the invariants and the races. This file
 * owns the one instance of that state, the lock that serialises it, and
 * everything that touches the kernel: the broadcast device, the CPUs'
 * local tick devices, IPIs, hotplug, suspend and /proc/timer_list.
 *
 * Locking: tick_broadcast_lock, a raw spinlock, nests inside
 * clockevents_lock and outside the hrtimer base lock (the hrtimer pseudo
 * device) and the irq descriptor lock (DYNIRQ affinity). The next period
 * is read through jiffies_seq, without jiffies_lock.
 * Wake IPIs are sent after it is dropped. A CPU's own local device is
 * only touched on that CPU, with interrupts disabled, after the lock is
 * dropped too.
 *
 * The broadcast device is written under bc_req.lock, which nests inside
 * tick_broadcast_lock. The core's arming decision is only recorded under
 * tick_broadcast_lock (bc_req_post()), and written to the device later:
 * programming an HPET is several slow MMIO accesses, and every CPU
 * entering or leaving deep idle would otherwise spin on the global lock
 * meanwhile. The rules:
 *
 *  - the idle and expiry paths (enter, exit, the oneshot broadcast
 *    interrupt), if they recorded a request, write it after dropping
 *    tick_broadcast_lock (bc_dev_flush()): at once if bc_req.lock is free,
 *    else the CPU holding it writes it before it lets go;
 *  - any other access to the broadcast device (programming it, changing
 *    its state, handler, next_event or frequency, replacing it) is made
 *    under tick_broadcast_lock after bc_dev_sync(), so that no deferred
 *    write lands after it or races it; where the sync is implied (nothing
 *    is ever deferred in periodic mode) bc_dev_assert_synced() says so;
 *  - every other path that called into the core syncs again before
 *    dropping tick_broadcast_lock;
 *  - the hrtimer pseudo device is written at once, by the CPU that arms
 *    it and under bc_req.lock together with its request (bc_op_arm()):
 *    its owner must be known as soon as it is armed, and a flush on
 *    another CPU must never start the timer there.
 *
 * An enter that records nothing (the device is armed early enough
 * already, the common case) neither flushes nor issues a barrier.
 *
 * Lockdep checks these rules: every function that needs
 * tick_broadcast_lock or bc_req.lock asserts it, the flush and the wake
 * IPIs assert that tick_broadcast_lock is not held, and the idle and
 * interrupt paths that interrupts are disabled. With lockdep, each new
 * decision also checks that the last one was written or that a CPU that
 * will write it is still in bc_dev_flush() (bc_req_owe()).
 */

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "tick-broadcast-core.h"
#include "tick-internal.h"

#define CREATE_TRACE_POINTS
#include "tick-broadcast-trace.h"

/*
 * The broadcast state, the device and its mode included (tick_bc.dev):
 * written under tick_broadcast_lock. Read locklessly: the device pointer
 * by the idle paths (is there one at all) and tick_is_broadcast_device(),
 * the mode by tick_broadcast_oneshot_active(); the masks by
 * /proc/timer_list and tick_check_broadcast_expired() (this CPU's force
 * bit, see the core's design comment).
 */
static __cacheline_aligned_in_smp DEFINE_RAW_SPINLOCK(tick_broadcast_lock);
static struct tick_bc tick_bc;
/*
 * The CPUs a broadcast interrupt wakes. The handler fills the mask under
 * tick_broadcast_lock and sends the IPIs after dropping the lock, with
 * tick_bc_waking set until they are out. A device's interrupt does not
 * run on two CPUs at once, but around a device replacement the old
 * device's late interrupt and the new device's may: the later one waits
 * for the IPIs of the earlier (bc_lock_wake()).
 */
static cpumask_var_t tick_bc_wake;
static bool tick_bc_waking;

/**
 * struct bc_req - the arming of the broadcast device, decided and written
 * @seq:	counts the decisions recorded; written under
 *		tick_broadcast_lock
 * @expires:	the latest decision: when the device is to fire, KTIME_MAX
 *		for not at all (nothing to write but next_event); written
 *		under tick_broadcast_lock, read through @seq
 * @cpu:	the CPU its interrupt is to go to; as @expires
 * @lock:	serialises the writes to the device; nests inside
 *		tick_broadcast_lock, and is only tried outside it
 * @done:	the value of @seq written last; written under @lock, read
 *		locklessly by every flusher
 *
 * See the top of this file for who writes a decision to the device when.
 */
struct bc_req {
	seqcount_raw_spinlock_t	seq;
	ktime_t			expires;
	unsigned int		cpu;
	raw_spinlock_t		lock ____cacheline_aligned_in_smp;
	unsigned int		done;
};

static struct bc_req bc_req = {
	.seq	= SEQCNT_RAW_SPINLOCK_ZERO(bc_req.seq, &tick_broadcast_lock),
	.lock	= __RAW_SPIN_LOCK_UNLOCKED(bc_req.lock),
};

#ifdef CONFIG_TICK_ONESHOT
/* Written under tick_broadcast_lock, read locklessly by its own CPU. */
static DEFINE_PER_CPU(struct clock_event_device *, tick_wakeup_dev);
static void tick_handle_oneshot_broadcast(struct clock_event_device *dev);
static void tick_broadcast_setup_oneshot(struct clock_event_device *bcdev, unsigned int cpu);
static void __tick_broadcast_switch_to_oneshot(bool cpu_switches);
#else
static inline void tick_handle_oneshot_broadcast(struct clock_event_device *dev) { }
static inline void tick_broadcast_setup_oneshot(struct clock_event_device *bcdev,
						unsigned int cpu) { }
static inline void __tick_broadcast_switch_to_oneshot(bool cpu_switches) { }
#endif

static struct clock_event_device *bc_dev(void)
{
	return tick_bc.dev.evtdev;
}

static bool bc_periodic_mode(void)
{
	return !tick_bc_oneshot_mode(&tick_bc);
}

/* ------------------------------------------------------------ the device */

static void bc_set_affinity(struct clock_event_device *bcdev, unsigned int cpu)
{
	const struct cpumask *mask = cpumask_of(cpu);

	if (!(bcdev->features & CLOCK_EVT_FEAT_DYNIRQ) || cpumask_equal(bcdev->cpumask, mask))
		return;
	bcdev->cpumask = mask;
	irq_set_affinity(bcdev->irq, mask);
}

static void bc_dev_write(ktime_t expires, unsigned int cpu)
{
	struct clock_event_device *bcdev = bc_dev();

	lockdep_assert_held(&bc_req.lock);
	if (expires == KTIME_MAX) {
		bcdev->next_event = KTIME_MAX;
		return;
	}
	if (!clockevent_state_oneshot(bcdev))
		clockevents_switch_state(bcdev, CLOCK_EVT_STATE_ONESHOT);
	clockevents_program_event(bcdev, expires, true);
	bc_set_affinity(bcdev, cpu);
}

#ifdef CONFIG_LOCKDEP
/*
 * Checked with lockdep only: the CPUs that recorded a decision or are in
 * bc_dev_flush(), until they return from it or sync. While a recorded
 * decision is not written, one of them is left to write it.
 */
static atomic_t bc_req_owing = ATOMIC_INIT(0);
static DEFINE_PER_CPU(bool, bc_req_owes);

static void bc_req_owe(void)
{
	if (!__this_cpu_read(bc_req_owes)) {
		__this_cpu_write(bc_req_owes, true);
		atomic_inc(&bc_req_owing);
	}
}

static void bc_req_paid(void)
{
	if (__this_cpu_read(bc_req_owes)) {
		__this_cpu_write(bc_req_owes, false);
		/* Orders our write of bc_req.done before it. */
		smp_mb__before_atomic();
		atomic_dec(&bc_req_owing);
	}
}

/* The last decision is written, or a CPU that will write it is left. */
static void bc_req_assert_owned(void)
{
	int owing = atomic_read(&bc_req_owing);

	/* The last payer wrote bc_req.done before paying. */
	smp_rmb();
	lockdep_assert_once(owing || READ_ONCE(bc_req.done) == raw_read_seqcount(&bc_req.seq));
}
#else
static inline void bc_req_owe(void) { }
static inline void bc_req_paid(void) { }
static inline void bc_req_assert_owned(void) { }
#endif

/* The device is up to date after this. */
static void bc_dev_sync(void)
{
	unsigned int seq;

	lockdep_assert_held(&tick_broadcast_lock);
	seq = raw_read_seqcount(&bc_req.seq);
	raw_spin_lock(&bc_req.lock);
	if (bc_req.done != seq) {
		bc_dev_write(bc_req.expires, bc_req.cpu);
		WRITE_ONCE(bc_req.done, seq);
	}
	raw_spin_unlock(&bc_req.lock);
	bc_req_paid();
}

/* Nothing deferred waits: the device may be touched under the lock. */
static void bc_dev_assert_synced(void)
{
	lockdep_assert_held(&tick_broadcast_lock);
	lockdep_assert(READ_ONCE(bc_req.done) == raw_read_seqcount(&bc_req.seq));
}

/* Record a decision; see the top of this file for who writes it when. */
static void bc_req_post(ktime_t expires, unsigned int cpu)
{
	lockdep_assert_held(&tick_broadcast_lock);
	bc_req_assert_owned();
	bc_req_owe();
	write_seqcount_begin(&bc_req.seq);
	bc_req.expires = expires;
	bc_req.cpu = cpu;
	write_seqcount_end(&bc_req.seq);
}

#ifdef CONFIG_TICK_ONESHOT
/*
 * Called after dropping tick_broadcast_lock, interrupts disabled. Writes
 * the latest decision, unless another CPU is writing the device: that one
 * checks for newer decisions after unlocking, and the barriers make sure
 * it sees ours (ours: decision, mb, trylock; its: unlock, mb, read).
 */
static void bc_dev_flush(void)
{
	unsigned int seq;
	ktime_t expires;
	unsigned int cpu;

	lockdep_assert_irqs_disabled();
	lockdep_assert_not_held(&tick_broadcast_lock);
	bc_req_owe();
	for (;;) {
		/* Orders our decision or unlock before the check; see above. */
		smp_mb();
		if (READ_ONCE(bc_req.done) == raw_read_seqcount(&bc_req.seq))
			break;
		if (!raw_spin_trylock(&bc_req.lock))
			break;
		do {
			seq = read_seqcount_begin(&bc_req.seq);
			expires = bc_req.expires;
			cpu = bc_req.cpu;
		} while (read_seqcount_retry(&bc_req.seq, seq));
		if (bc_req.done != seq) {
			bc_dev_write(expires, cpu);
			WRITE_ONCE(bc_req.done, seq);
		}
		raw_spin_unlock(&bc_req.lock);
	}
	bc_req_paid();
}
#endif /* CONFIG_TICK_ONESHOT */

static int bc_op_owner(struct tick_bc *core)
{
	lockdep_assert_held(&tick_broadcast_lock);
	return tick_broadcast_hrtimer_owner(core->dev.evtdev);
}

/* Inline too in the oneshot handler, which arms the device at every interrupt. */
static __always_inline void bc_op_arm(struct tick_bc *core, ktime_t expires,
				      unsigned int cpu)
{
	lockdep_assert_held(&tick_broadcast_lock);
	trace_tick_bc_program(expires, cpu);
	if (!tick_bc_hrtimer(core)) {
		bc_req_post(expires, cpu);
		return;
	}
	/*
	 * The hrtimer is started on the CPU that writes the request, and
	 * the core notes its owner right after arming: this CPU writes it,
	 * with the request never outstanding, lest a flush on another CPU,
	 * one that has just been let into deep idle, take the timer.
	 */
	raw_spin_lock(&bc_req.lock);
	bc_req_post(expires, cpu);
	bc_dev_write(expires, cpu);
	WRITE_ONCE(bc_req.done, raw_read_seqcount(&bc_req.seq));
	raw_spin_unlock(&bc_req.lock);
}

static const struct tick_bc_ops tick_bc_ops = {
	.arm	= bc_op_arm,
	.owner	= bc_op_owner,
};

static void bc_shutdown(struct clock_event_device *bcdev)
{
	lockdep_assert_held(&tick_broadcast_lock);
	bc_dev_sync();
	clockevents_shutdown(bcdev);
	tick_bc_disarmed(&tick_bc);
}

static void bc_start_periodic(struct clock_event_device *bcdev)
{
	lockdep_assert_held(&tick_broadcast_lock);
	if (bcdev) {
		bc_dev_sync();
		tick_setup_periodic(bcdev, 1);
	}
}

/*
 * Take tick_broadcast_lock in a broadcast handler, with tick_bc_wake free.
 * Return: true if that meant waiting.
 */
static bool bc_lock_wake(void)
	__acquires(&tick_broadcast_lock)
{
	bool waited = false;

	if (!raw_spin_trylock(&tick_broadcast_lock)) {
		raw_spin_lock(&tick_broadcast_lock);
		waited = true;
	}
	/* Pairs with the release in bc_send_ipis(): those IPIs are out. */
	while (smp_load_acquire(&tick_bc_waking)) {
		raw_spin_unlock(&tick_broadcast_lock);
		while (READ_ONCE(tick_bc_waking))
			cpu_relax();
		raw_spin_lock(&tick_broadcast_lock);
		waited = true;
	}
	return waited;
}

/*
 * Send the wake IPIs through the tick device of the first CPU of @mask,
 * tick_bc_wake, then free it.
 */
static void bc_send_ipis(struct cpumask *mask)
{
	unsigned int cpu = cpumask_first(mask);

	lockdep_assert_not_held(&tick_broadcast_lock);
	if (cpu < nr_cpu_ids)
		per_cpu(tick_cpu_device, cpu).evtdev->broadcast(mask);
	/* Pairs with the acquire in bc_lock_wake(): done with @mask. */
	smp_store_release(&tick_bc_waking, false);
}

/* This CPU was among the woken: run its own tick handler here. */
static void bc_run_local_handler(void)
{
	struct clock_event_device *local = __this_cpu_read(tick_cpu_device.evtdev);

	lockdep_assert_not_held(&tick_broadcast_lock);
	local->event_handler(local);
}

static void bc_ipi_missing(const struct cpumask *mask)
{
	pr_crit_once("Failed to broadcast timer tick. Some CPUs may be unresponsive.\n");
}

static void local_dev_set_broadcast_fn(struct clock_event_device *dev)
{
	if (!dev->broadcast)
		dev->broadcast = tick_broadcast;
	if (!dev->broadcast) {
		pr_warn_once("%s depends on broadcast, but no broadcast function available\n",
			     dev->name);
		dev->broadcast = bc_ipi_missing;
	}
}

/* ------------------------------------------------------------ accessors */

/**
 * tick_get_broadcast_device - the broadcast tick device
 *
 * Return: the tick device holding the broadcast clock event device.
 */
struct tick_device *tick_get_broadcast_device(void)
{
	return &tick_bc.dev;
}

/**
 * tick_get_broadcast_mask - CPUs ticked by the periodic broadcast
 *
 * Return: the mask, read without the lock by /proc/timer_list.
 */
struct cpumask *tick_get_broadcast_mask(void)
{
	return to_cpumask(tick_bc.periodic);
}

/**
 * tick_is_broadcast_device - is @dev the broadcast device
 * @dev:	a clock event device, or NULL
 *
 * Return: non-zero if @dev is the installed broadcast device.
 */
int tick_is_broadcast_device(struct clock_event_device *dev)
{
	return dev && bc_dev() == dev;
}

/**
 * tick_broadcast_update_freq - update the broadcast device's frequency
 * @dev:	the device
 * @freq:	the new frequency
 *
 * Called with interrupts disabled.
 *
 * Return: -ENODEV if @dev is not the broadcast device, else the result
 * of the update.
 */
int tick_broadcast_update_freq(struct clock_event_device *dev, u32 freq)
{
	int ret;

	if (!tick_is_broadcast_device(dev))
		return -ENODEV;

	lockdep_assert_irqs_disabled();
	raw_spin_lock(&tick_broadcast_lock);
	bc_dev_sync();
	ret = __clockevents_update_freq(dev, freq);
	raw_spin_unlock(&tick_broadcast_lock);
	return ret;
}

/* ------------------------------------------------------------ installation */

#ifdef CONFIG_TICK_ONESHOT
static void tick_oneshot_wakeup_handler(struct clock_event_device *wd)
{
	/* An early wakeup whose tick was reprogrammed since is harmless. */
	tick_receive_broadcast();
}

/* Exchange @cpu's oneshot wakeup device for @dev (NULL: release it). */
static void wakeup_dev_set(struct clock_event_device *dev, int cpu)
{
	struct clock_event_device *cur = per_cpu(tick_wakeup_dev, cpu);

	lockdep_assert_held(&tick_broadcast_lock);
	if (dev)
		dev->event_handler = tick_oneshot_wakeup_handler;
	clockevents_exchange_device(cur, dev);
	per_cpu(tick_wakeup_dev, cpu) = dev;
}

static bool wakeup_dev_offer(struct clock_event_device *dev, int cpu)
{
	lockdep_assert_held(&tick_broadcast_lock);
	if (!tick_bc_wakeup_eligible(per_cpu(tick_wakeup_dev, cpu), dev, cpu))
		return false;
	if (!try_module_get(dev->owner))
		return false;
	wakeup_dev_set(dev, cpu);
	return true;
}

#else
static bool wakeup_dev_offer(struct clock_event_device *dev, int cpu)
{
	return false;
}
#endif

/**
 * tick_get_wakeup_device - a CPU's oneshot wakeup device
 * @cpu:	the CPU
 *
 * Return: the per-CPU device that wakes @cpu from deep idle instead of
 * the broadcast device, or NULL.
 */
const struct clock_event_device *tick_get_wakeup_device(int cpu)
{
#ifdef CONFIG_TICK_ONESHOT
	return per_cpu(tick_wakeup_dev, cpu);
#else
	return NULL;
#endif
}

/*
 * Called with the lock held. Return: true if @dev became the broadcast
 * device, replacing *@old (NULL if there was none).
 */
static bool bc_install(struct clock_event_device *dev, int cpu,
		       struct clock_event_device **old)
{
	struct clock_event_device *cur = bc_dev();

	lockdep_assert_held(&tick_broadcast_lock);
	if (wakeup_dev_offer(dev, cpu))
		return false;
	if (!tick_bc_device_eligible(cur, dev, !bc_periodic_mode()) ||
	    !try_module_get(dev->owner))
		return false;

	if (cur)
		bc_dev_sync();
	__clockevents_exchange_device(cur, dev);
	if (cur)
		cur->event_handler = clockevents_handle_noop;
	tick_bc_set_device(&tick_bc, dev);
	if (!tick_bc_periodic_empty(&tick_bc))
		bc_start_periodic(dev);
	*old = cur;
	return true;
}

/**
 * tick_install_broadcast_device - offer a new device to the broadcast layer
 * @dev:	a clock event device that did not become @cpu's tick device
 * @cpu:	the CPU registering it
 *
 * It becomes @cpu's oneshot wakeup device, or the broadcast device if it
 * is eligible and better than the current one, or nothing. Called under
 * clockevents_lock with interrupts disabled.
 */
void tick_install_broadcast_device(struct clock_event_device *dev, int cpu)
{
	bool installed, notify = dev->features & CLOCK_EVT_FEAT_ONESHOT;
	struct clock_event_device *cur = NULL;
	unsigned long flags;

	raw_spin_lock_irqsave(&tick_broadcast_lock, flags);
	installed = bc_install(dev, cpu, &cur);
	/*
	 * In oneshot mode the new device gets its oneshot handler before the
	 * lock is let go of: an interrupt of the old one or an enter waiting
	 * for the lock must not find a device installed that is not ready
	 * for it.
	 */
	if (installed && notify && tick_broadcast_oneshot_active()) {
		__tick_broadcast_switch_to_oneshot(false);
		notify = false;
	}
	raw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);
	if (!installed)
		return;

	/* Not under the lock: module_put() may do work of its own. */
	if (cur)
		module_put(cur->owner);
	/*
	 * CPUs with C3STOP devices stayed periodic for want of a oneshot
	 * broadcast device: tell them to try NOHZ and highres again.
	 */
	if (notify)
		tick_clock_notify();
}

/* ------------------------------------------------------------ per-CPU setup */

static int __tick_device_uses_broadcast(struct clock_event_device *dev, int cpu)
{
	struct clock_event_device *bcdev = bc_dev();
	int ret = 0;

	lockdep_assert_held(&tick_broadcast_lock);
	if (!tick_device_is_functional(dev)) {
		dev->event_handler = tick_handle_periodic;
		local_dev_set_broadcast_fn(dev);
		tick_bc_set_periodic(&tick_bc, cpu, true);
		if (bc_periodic_mode())
			bc_start_periodic(bcdev);
		else
			tick_broadcast_setup_oneshot(bcdev, cpu);
		return 1;
	}

	if (dev->features & CLOCK_EVT_FEAT_C3STOP)
		local_dev_set_broadcast_fn(dev);
	if (!(dev->features & CLOCK_EVT_FEAT_C3STOP) || !test_bit(cpu, tick_bc.on))
		tick_bc_set_periodic(&tick_bc, cpu, false);

	if (!bc_periodic_mode()) {
		/* Running, so not asleep: the caller programs @dev. */
		tick_bc_cpu_reset(&tick_bc, cpu);
		return 0;
	}

	if (bcdev && tick_bc_periodic_empty(&tick_bc))
		bc_shutdown(bcdev);
	if (bcdev && !tick_bc_hrtimer(&tick_bc))
		ret = test_bit(cpu, tick_bc.periodic);
	return ret;
}

/**
 * tick_device_uses_broadcast - a CPU's tick device is being set up
 * @dev:	the new tick device
 * @cpu:	its CPU, the current one
 *
 * Called under clockevents_lock with interrupts disabled.
 *
 * Return: 1 if the broadcast device serves @cpu and @dev must be left
 * alone (a dummy device, or periodic broadcast), else 0.
 */
int tick_device_uses_broadcast(struct clock_event_device *dev, int cpu)
{
	unsigned long flags;
	int ret;

	raw_spin_lock_irqsave(&tick_broadcast_lock, flags);
	ret = __tick_device_uses_broadcast(dev, cpu);
	if (bc_dev())
		bc_dev_sync();
	raw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);
	return ret;
}

/**
 * tick_receive_broadcast - run this CPU's tick handler for a broadcast IPI
 *
 * Called by the architecture's broadcast IPI handler, in hard interrupt
 * context.
 *
 * Return: 0, -ENODEV without a tick device, -EINVAL without a handler.
 */
int tick_receive_broadcast(void)
{
	struct clock_event_device *dev = __this_cpu_read(tick_cpu_device.evtdev);

	if (!dev)
		return -ENODEV;
	if (!dev->event_handler)
		return -EINVAL;
	dev->event_handler(dev);
	return 0;
}

/* ------------------------------------------------------------ periodic mode */

static void tick_handle_periodic_broadcast(struct clock_event_device *dev)
{
	struct cpumask *wake = tick_bc_wake;
	bool local;

	lockdep_assert_irqs_disabled();
	bc_lock_wake();
	/*
	 * Raised before the switch to oneshot mode, handled after it: the
	 * oneshot handler runs the expiry and re-arms the device, see
	 * "Races handled" in tick-broadcast-core.c.
	 */
	if (!bc_periodic_mode()) {
		raw_spin_unlock(&tick_broadcast_lock);
		tick_handle_oneshot_broadcast(dev);
		return;
	}
	/* A late interrupt of a device shut down meanwhile. */
	if (clockevent_state_shutdown(bc_dev())) {
		raw_spin_unlock(&tick_broadcast_lock);
		return;
	}
	local = tick_bc_periodic_wake(&tick_bc, smp_processor_id(), cpumask_bits(wake));
	WRITE_ONCE(tick_bc_waking, true);
	/*
	 * Periodic mode emulated on a oneshot device: arm the next tick.
	 * Nothing is deferred in periodic mode (the core arms the device
	 * only in oneshot mode, which is for good), so the device is ours
	 * under the lock.
	 */
	bc_dev_assert_synced();
	if (clockevent_state_oneshot(dev))
		clockevents_program_event(dev, ktime_add_ns(dev->next_event, TICK_NSEC), true);
	raw_spin_unlock(&tick_broadcast_lock);

	bc_send_ipis(wake);
	if (local)
		bc_run_local_handler();
}

/**
 * tick_set_periodic_handler - set a device's periodic tick handler
 * @dev:	the device
 * @broadcast:	it is the broadcast device
 */
void tick_set_periodic_handler(struct clock_event_device *dev, int broadcast)
{
	dev->event_handler = broadcast ? tick_handle_periodic_broadcast :
					 tick_handle_periodic;
}

static void __tick_broadcast_control(struct clock_event_device *dev, unsigned int cpu,
				     enum tick_broadcast_mode mode)
{
	struct clock_event_device *bcdev;
	struct tick_bc_change ch;

	lockdep_assert_held(&tick_broadcast_lock);
	if (!dev || !(dev->features & CLOCK_EVT_FEAT_C3STOP) ||
	    !tick_device_is_functional(dev))
		return;

	bcdev = bc_dev();
	ch = tick_bc_control(&tick_bc, cpu, mode);

	if (bc_periodic_mode()) {
		if (ch.joined && bcdev && !tick_bc_hrtimer(&tick_bc))
			clockevents_shutdown(dev);
		if (ch.left)
			tick_setup_periodic(dev, 0);
	}
	if (!bcdev)
		return;

	/*
	 * In oneshot mode the device runs for the sleepers, whatever the
	 * periodic mask says: it stops only when nobody relies on it (the
	 * last OFF would otherwise strand them), and an ON needs nothing,
	 * in particular it must not reset this CPU, which may be calling
	 * from inside a deep idle state (an IPI in a halt-style state).
	 */
	if (ch.last && (bc_periodic_mode() || !tick_bc_busy(&tick_bc)))
		bc_shutdown(bcdev);
	else if (ch.first && bc_periodic_mode())
		bc_start_periodic(bcdev);
}

/**
 * tick_broadcast_control - turn broadcast on or off for this CPU
 * @mode:	TICK_BROADCAST_ON, TICK_BROADCAST_OFF or TICK_BROADCAST_FORCE
 *
 * Called on the CPU concerned, with preemption disabled (from an IPI, a
 * pinned hotplug callback or with interrupts off). A no-op for CPUs whose
 * tick device does not stop in deep idle. FORCE makes every later OFF a
 * no-op, on every CPU.
 */
void tick_broadcast_control(enum tick_broadcast_mode mode)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&tick_broadcast_lock, flags);
	__tick_broadcast_control(__this_cpu_read(tick_cpu_device.evtdev), smp_processor_id(), mode);
	raw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);
}
EXPORT_SYMBOL_GPL(tick_broadcast_control);

/* ------------------------------------------------------------ hotplug */

#ifdef CONFIG_HOTPLUG_CPU
/**
 * tick_broadcast_offline - a CPU is going offline
 * @cpu:	the dying CPU, the current one
 *
 * Called in stop_machine under clockevents_lock with interrupts off.
 */
void tick_broadcast_offline(unsigned int cpu)
{
	struct clock_event_device *bcdev;

	lockdep_assert_irqs_disabled();
	raw_spin_lock(&tick_broadcast_lock);
	bcdev = bc_dev();
#ifdef CONFIG_TICK_ONESHOT
	if (per_cpu(tick_wakeup_dev, cpu))
		wakeup_dev_set(NULL, cpu);
#endif
	tick_bc_offline(&tick_bc, cpu);
	/* In oneshot mode the others may sleep on the device: keep it. */
	if (bcdev && bc_periodic_mode() && tick_bc_periodic_empty(&tick_bc))
		bc_shutdown(bcdev);
	raw_spin_unlock(&tick_broadcast_lock);
}
#endif

/* ------------------------------------------------------------ suspend */

/**
 * tick_suspend_broadcast - shut the broadcast device down for suspend
 *
 * Called with interrupts disabled on the last CPU running.
 */
void tick_suspend_broadcast(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&tick_broadcast_lock, flags);
	if (bc_dev())
		bc_shutdown(bc_dev());
	raw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);
}

/**
 * tick_resume_check_broadcast - does the broadcast device tick this CPU
 *
 * Return: true if this CPU's periodic tick comes from the broadcast
 * device, so its local device must stay shut down on resume.
 */
bool tick_resume_check_broadcast(void)
{
	return bc_periodic_mode() && test_bit(smp_processor_id(), tick_bc.periodic);
}

static void __tick_resume_broadcast(struct clock_event_device *bcdev)
{
	lockdep_assert_held(&tick_broadcast_lock);
	bc_dev_sync();
	clockevents_tick_resume(bcdev);
	if (bc_periodic_mode()) {
		if (!tick_bc_periodic_empty(&tick_bc))
			bc_start_periodic(bcdev);
		return;
	}
	if (!tick_bc_periodic_empty(&tick_bc))
		clockevents_switch_state(bcdev, CLOCK_EVT_STATE_ONESHOT);
	/* Anybody still relying on it gets it re-evaluated at once. */
	tick_bc_retrigger(&tick_bc);
	bc_dev_sync();
}

/**
 * tick_resume_broadcast - resume the broadcast device
 *
 * Restarts it in periodic mode if anybody needs it. In oneshot mode it is
 * made ready, and armed at once only if some CPU still relies on it.
 */
void tick_resume_broadcast(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&tick_broadcast_lock, flags);
	if (bc_dev())
		__tick_resume_broadcast(bc_dev());
	raw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);
}

/* ------------------------------------------------------------ oneshot mode */

#ifdef CONFIG_TICK_ONESHOT

/**
 * tick_get_broadcast_oneshot_mask - CPUs relying on oneshot broadcast
 *
 * Return: the mask, read without the lock by /proc/timer_list.
 */
struct cpumask *tick_get_broadcast_oneshot_mask(void)
{
	return to_cpumask(tick_bc.oneshot);
}

/**
 * tick_check_broadcast_expired - must this CPU poll instead of going deep
 *
 * Called from the idle loop, also while RCU is not watching: no
 * instrumentation, no lock.
 *
 * Return: non-zero if this CPU's event expired at exit and the broadcast
 * interrupt will deliver it (see the force mask in tick-broadcast-core.c).
 */
noinstr int tick_check_broadcast_expired(void)
{
	return arch_test_bit(raw_smp_processor_id(), tick_bc.force);
}

/**
 * tick_check_oneshot_broadcast_this_cpu - an interrupt hit an idle CPU
 *
 * Called from irq_enter(). If this CPU sleeps on the broadcast, its local
 * device was stopped: switch it back to oneshot state so that whatever
 * the interrupt handler programs takes effect. The CPU stays in the
 * broadcast until its exit. A CPU whose tick is still periodic may be in
 * the middle of the switch to oneshot and is left alone.
 */
void tick_check_oneshot_broadcast_this_cpu(void)
{
	struct tick_device *td = this_cpu_ptr(&tick_cpu_device);

	lockdep_assert_irqs_disabled();
	if (!test_bit(smp_processor_id(), tick_bc.oneshot))
		return;
	if (td->mode == TICKDEV_MODE_ONESHOT)
		clockevents_switch_state(td->evtdev, CLOCK_EVT_STATE_ONESHOT);
}

/*
 * The trace of one oneshot expiry; @wake leaves out this CPU, @local says
 * whether it was woken too. Called with the lock held.
 */
static void bc_trace_expire(struct cpumask *wake, bool local, ktime_t now)
{
	unsigned int cpu = smp_processor_id();

	lockdep_assert_held(&tick_broadcast_lock);
	if (!trace_tick_bc_expire_enabled())
		return;
	if (local)
		cpumask_set_cpu(cpu, wake);
	trace_tick_bc_expire(now, wake, tick_bc.armed);
	if (local)
		cpumask_clear_cpu(cpu, wake);
}

static void tick_handle_oneshot_broadcast(struct clock_event_device *dev)
{
	unsigned int cpu = smp_processor_id(), next_cpu;
	struct cpumask *wake = tick_bc_wake;
	ktime_t now;
	bool local;

	lockdep_assert_irqs_disabled();
	/*
	 * Read before taking the lock, which every CPU entering deep idle
	 * takes too, and again if that meant waiting, lest a sleeper that
	 * became due meanwhile wait for the next interrupt.
	 */
	now = ktime_get();
	if (bc_lock_wake())
		now = ktime_get();
	/*
	 * @dev was replaced while this interrupt waited for the lock: the
	 * replacement re-evaluates every CPU that relies on the broadcast,
	 * on the new device. Leave both alone.
	 */
	if (unlikely(dev != bc_dev())) {
		raw_spin_unlock(&tick_broadcast_lock);
		return;
	}
	local = tick_bc_expire(&tick_bc, cpu, now, cpumask_bits(wake), &next_cpu);
	/* It fired: armed again for the earliest sleeper left, if any. */
	if (tick_bc.armed == KTIME_MAX)
		bc_req_post(KTIME_MAX, cpu);
	else
		bc_op_arm(&tick_bc, tick_bc.armed, next_cpu);
	bc_trace_expire(wake, local, now);
	WRITE_ONCE(tick_bc_waking, true);
	raw_spin_unlock(&tick_broadcast_lock);

	bc_send_ipis(wake);
	bc_dev_flush();
	/*
	 * This CPU's own event: run its handler here, not by IPI, and not
	 * under the lock, which switching to oneshot mode takes.
	 */
	if (local)
		bc_run_local_handler();
}

/*
 * Called with the lock held, for this CPU's dummy tick device in oneshot
 * mode: this CPU is running, so it does not sleep on the broadcast.
 */
static void tick_broadcast_setup_oneshot(struct clock_event_device *bcdev, unsigned int cpu)
{
	lockdep_assert_held(&tick_broadcast_lock);
	if (!bcdev)
		return;
	tick_bc_cpu_reset(&tick_bc, cpu);
	if (bcdev->event_handler == tick_handle_oneshot_broadcast)
		return;
	bc_dev_sync();
	bcdev->event_handler = tick_handle_oneshot_broadcast;
	bcdev->next_event = KTIME_MAX;
	tick_bc_retrigger(&tick_bc);
}

/* The next periodic tick; written under jiffies_seq by the tick code. */
static ktime_t tick_get_next_period(void)
{
	unsigned int seq;
	ktime_t next;

	do {
		seq = read_seqcount_begin(&jiffies_seq);
		next = tick_next_period;
	} while (read_seqcount_retry(&jiffies_seq, seq));
	return next;
}

/*
 * This CPU's tick, just switched to oneshot mode, is hrtimer_interrupt(),
 * which runs only the timers that are due: an early wake costs it nothing
 * but the interrupt. See "Coalescing" in tick-broadcast-core.c.
 */
static bool bc_tick_runs_only_due(void)
{
#ifdef CONFIG_HIGH_RES_TIMERS
	return __this_cpu_read(tick_cpu_device.evtdev)->event_handler == hrtimer_interrupt;
#else
	return false;
#endif
}

/* The CPUs handed over at the switch: their devices show the tick they wait for. */
static void bc_show_handover(ktime_t next, unsigned int this_cpu)
{
	struct clock_event_device *dev;
	unsigned int cpu;

	lockdep_assert_held(&tick_broadcast_lock);
	for_each_cpu(cpu, to_cpumask(tick_bc.periodic)) {
		dev = per_cpu(tick_cpu_device, cpu).evtdev;
		if (cpu != this_cpu && dev)
			dev->next_event = next;
	}
}

/*
 * @cpu_switches: this CPU switches its own tick to oneshot mode, and its
 * oneshot state starts over. False for a device installed once the
 * broadcast is in oneshot mode: that takes the device's part only and
 * leaves the installing CPU's state alone, since the CPU may still wait
 * for the tick it was handed over for.
 */
static void __tick_broadcast_switch_to_oneshot(bool cpu_switches)
{
	bool from_periodic, fresh = false, armed = false;
	ktime_t next = 0, expires = KTIME_MAX;
	struct clock_event_device *bcdev;
	unsigned int this_cpu;

	lockdep_assert_held(&tick_broadcast_lock);
	bcdev = bc_dev();
	this_cpu = smp_processor_id();
	from_periodic = bc_periodic_mode();

	if (bcdev && bcdev->event_handler != tick_handle_oneshot_broadcast) {
		bc_dev_sync();
		fresh = true;
		/* Emulated periodic mode: armed already, for a periodic tick. */
		armed = clockevent_state_oneshot(bcdev);
		expires = bcdev->next_event;
		bcdev->event_handler = tick_handle_oneshot_broadcast;
		bcdev->next_event = KTIME_MAX;
	}
	if (bcdev && from_periodic) {
		next = tick_get_next_period();
		/*
		 * Right after a periodic tick the device is armed for the
		 * tick after @next already, while @next has not moved on
		 * yet: the CPUs had tick @next, their next is the device's.
		 */
		if (armed && expires > next)
			next = expires;
		bc_show_handover(next, this_cpu);
	}
	if (cpu_switches)
		tick_bc_switch_oneshot(&tick_bc, this_cpu, bc_tick_runs_only_due(), next, armed);
	/*
	 * The device stays armed for that tick: say so in its next event,
	 * which __clockevents_update_freq() programs it with again.
	 */
	if (armed)
		bcdev->next_event = expires;
	/* A device installed in oneshot mode: re-evaluate the sleepers. */
	if (fresh && !from_periodic)
		tick_bc_retrigger(&tick_bc);
	if (bcdev)
		bc_dev_sync();
}

/**
 * tick_broadcast_switch_to_oneshot - this CPU switches its tick to oneshot
 *
 * The first switch turns the broadcast to oneshot mode for good and hands
 * the CPUs waiting for periodic broadcast ticks over to it.
 */
void tick_broadcast_switch_to_oneshot(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&tick_broadcast_lock, flags);
	__tick_broadcast_switch_to_oneshot(true);
	raw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);
}

/* Deep idle through this CPU's own wakeup device; -ENODEV if it has none. */
static int wakeup_dev_control(enum tick_broadcast_state state, struct tick_device *td)
{
	struct clock_event_device *wd = __this_cpu_read(tick_wakeup_dev);
	struct clock_event_device *dev = td->evtdev;

	lockdep_assert_irqs_disabled();
	if (!wd || td->mode != TICKDEV_MODE_ONESHOT)
		return -ENODEV;

	if (state == TICK_BROADCAST_ENTER) {
		clockevents_switch_state(dev, CLOCK_EVT_STATE_ONESHOT_STOPPED);
		clockevents_switch_state(wd, CLOCK_EVT_STATE_ONESHOT);
		clockevents_program_event(wd, dev->next_event, true);
		return 0;
	}
	/* Left armed; if it fired meanwhile, the tick switched: use broadcast. */
	return clockevent_get_state(wd) == CLOCK_EVT_STATE_ONESHOT ? 0 : -ENODEV;
}

/*
 * The decisions are taken under the lock, the local device is switched
 * after it: it belongs to this CPU, which runs with interrupts disabled,
 * and nobody else touches it. Each access to it is an MMIO write on x86,
 * slow under virtualisation; the shorter the lock is held, the less the
 * other CPUs spin for it (see Documentation/timers/tick-broadcast.rst).
 */
static int bc_enter(struct clock_event_device *dev, unsigned int cpu)
{
	struct tick_bc_enter_out out;
	enum tick_bc_enter_result r;

	lockdep_assert_irqs_disabled();
	raw_spin_lock(&tick_broadcast_lock);
	r = tick_bc_enter(&tick_bc, cpu, dev->next_event, &out);
	/*
	 * Under the lock, so that a CPU's enter comes before the expiry that
	 * wakes it; a disabled event is a patched-out jump.
	 */
	trace_tick_bc_enter(cpu, dev->next_event, r);
	raw_spin_unlock(&tick_broadcast_lock);

	/* Nothing armed, nothing to write: see the top of this file. */
	if (out.armed)
		bc_dev_flush();
	if (out.stop_local) {
		/* Only a queued enter stops its local device. */
		clockevents_switch_state(dev, CLOCK_EVT_STATE_SHUTDOWN);
		return 0;
	}
	return tick_bc_enter_refused(r) ? -EBUSY : 0;
}

/*
 * The local device found the event expired: decide with the time whether
 * the broadcast interrupt delivers it (see tick_bc_exit_late()) or the
 * local device must fire right away.
 */
static void bc_exit_late(struct clock_event_device *dev, unsigned int cpu)
{
	ktime_t now = ktime_get();
	bool forced;

	raw_spin_lock(&tick_broadcast_lock);
	forced = tick_bc_exit_late(&tick_bc, cpu, dev->next_event, now);
	trace_tick_bc_exit(cpu, dev->next_event,
			   forced ? TICK_BC_EXIT_FORCED : TICK_BC_EXIT_REPROGRAM);
	raw_spin_unlock(&tick_broadcast_lock);

	if (!forced)
		clockevents_program_event(dev, dev->next_event, true);
}

/*
 * Reprogram the local device without force: that reads the clock, and
 * fails for an event that has expired. A device that takes ktime is
 * programmed without that check, so the exit reads the clock for it.
 */
static int bc_exit_program(struct clock_event_device *dev)
{
	if (unlikely(dev->features & CLOCK_EVT_FEAT_KTIME) && dev->next_event <= ktime_get())
		return -ETIME;
	return clockevents_program_event(dev, dev->next_event, false);
}

/*
 * The exit reads no clock of its own: reprogramming the local device
 * reads it, and fails for an event that has expired, the one case that
 * needs the time to decide (bc_exit_late()). A clock read is a device
 * access where the clocksource is the HPET or the ACPI PM timer.
 */
static void bc_exit(struct clock_event_device *dev, unsigned int cpu)
{
	enum tick_bc_exit_action a;

	lockdep_assert_irqs_disabled();
	raw_spin_lock(&tick_broadcast_lock);
	a = tick_bc_exit(&tick_bc, cpu, dev->next_event);
	/* A reprogram is traced once it is known not to be forced, unlocked. */
	if (a != TICK_BC_EXIT_REPROGRAM)
		trace_tick_bc_exit(cpu, dev->next_event, a);
	raw_spin_unlock(&tick_broadcast_lock);

	if (a == TICK_BC_EXIT_NONE)
		return;
	clockevents_switch_state(dev, CLOCK_EVT_STATE_ONESHOT);
	if (a != TICK_BC_EXIT_REPROGRAM)
		return;
	if (bc_exit_program(dev))
		bc_exit_late(dev, cpu);
	else
		trace_tick_bc_exit(cpu, dev->next_event, a);
}

/* ENTER or EXIT for @cpu, whose tick device is @dev. Interrupts disabled. */
static int bc_oneshot_control(enum tick_broadcast_state state,
			      struct clock_event_device *dev, unsigned int cpu)
{
	if (!READ_ONCE(tick_bc.dev.evtdev)) {
		if (state != TICK_BROADCAST_ENTER)
			return 0;
		trace_tick_bc_enter(cpu, dev->next_event, TICK_BC_ENTER_BUSY_NODEV);
		return -EBUSY;
	}

	if (state == TICK_BROADCAST_ENTER)
		return bc_enter(dev, cpu);

	bc_exit(dev, cpu);
	return 0;
}

/**
 * __tick_broadcast_oneshot_control - enter or leave a timer-stopping state
 * @state:	TICK_BROADCAST_ENTER or TICK_BROADCAST_EXIT
 *
 * Called on the CPU itself with interrupts disabled, after the idle path
 * has stopped or kept the tick, for a CPU whose tick device stops in deep
 * idle.
 *
 * Return: for ENTER, 0 if the CPU may stop its local device, -EBUSY if it
 * must not (no broadcast, it runs the hrtimer broadcast, or its event is
 * being delivered). A refused ENTER needs no EXIT. EXIT returns 0. EXIT
 * without ENTER does nothing. A CPU whose tick device keeps running
 * in deep idle never gets here (tick_broadcast_oneshot_control()).
 */
int __tick_broadcast_oneshot_control(enum tick_broadcast_state state)
{
	struct tick_device *td = this_cpu_ptr(&tick_cpu_device);
	unsigned int cpu = smp_processor_id();

	if (!wakeup_dev_control(state, td))
		return 0;
	return bc_oneshot_control(state, td->evtdev, cpu);
}

#ifdef CONFIG_HOTPLUG_CPU
/**
 * hotplug_cpu__broadcast_tick_pull - take the broadcast duty from a dead CPU
 * @deadcpu:	the CPU that went offline
 *
 * Called on the control CPU with interrupts enabled. Only the hrtimer
 * pseudo device has a duty bound to a CPU.
 */
void hotplug_cpu__broadcast_tick_pull(int deadcpu)
{
	struct clock_event_device *dev;
	unsigned long flags;

	raw_spin_lock_irqsave(&tick_broadcast_lock, flags);
	if (bc_dev() && tick_bc_pull(&tick_bc, deadcpu, smp_processor_id())) {
		dev = __this_cpu_read(tick_cpu_device.evtdev);
		tick_program_event(dev->next_event, 1);
	}
	if (bc_dev())
		bc_dev_sync();
	raw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);
}
#endif

/**
 * tick_broadcast_oneshot_active - is the broadcast in oneshot mode
 *
 * Return: non-zero once any CPU switched its tick to oneshot mode.
 */
int tick_broadcast_oneshot_active(void)
{
	return READ_ONCE(tick_bc.dev.mode) == TICKDEV_MODE_ONESHOT;
}

/**
 * tick_broadcast_oneshot_available - can a C3STOP CPU go oneshot
 *
 * Return: true if a broadcast device with oneshot support is installed.
 */
bool tick_broadcast_oneshot_available(void)
{
	struct clock_event_device *bcdev = READ_ONCE(tick_bc.dev.evtdev);

	return bcdev && (bcdev->features & CLOCK_EVT_FEAT_ONESHOT);
}

#else /* !CONFIG_TICK_ONESHOT */

/*
 * Without oneshot ticks, the periodic broadcast ticks sleeping CPUs:
 * -EBUSY without a broadcast device or with the hrtimer one, else 0.
 */
int __tick_broadcast_oneshot_control(enum tick_broadcast_state state)
{
	struct clock_event_device *bcdev = READ_ONCE(tick_bc.dev.evtdev);

	return !bcdev || (bcdev->features & CLOCK_EVT_FEAT_HRTIMER) ? -EBUSY : 0;
}
#endif /* !CONFIG_TICK_ONESHOT */

/* ------------------------------------------------------------ coalescing */

/* tick_broadcast_coalesce_us= on the command line, checked when parsed. */
static unsigned int bc_coalesce_boot_us __initdata;

static int __init bc_coalesce_setup(char *str)
{
	unsigned int us;

	if (kstrtouint(str, 10, &us) || us > TICK_BC_WINDOW_MAX_NS / NSEC_PER_USEC) {
		pr_warn("tick_broadcast_coalesce_us=%s: not 0..%ld, coalescing stays off\n",
			str, TICK_BC_WINDOW_MAX_NS / NSEC_PER_USEC);
		return 1;
	}
	bc_coalesce_boot_us = us;
	return 1;
}
__setup("tick_broadcast_coalesce_us=", bc_coalesce_setup);

/**
 * tick_broadcast_init - set up the broadcast state at boot
 */
void __init tick_broadcast_init(void)
{
	size_t stride = cpumask_size();
	unsigned long *masks;
	ktime_t *wakeup;

	wakeup = kcalloc(nr_cpu_ids, sizeof(*wakeup), GFP_NOWAIT);
	masks = kzalloc(TICK_BC_NR_MASKS * stride, GFP_NOWAIT);
	if (!wakeup || !masks || !zalloc_cpumask_var(&tick_bc_wake, GFP_NOWAIT))
		panic("tick broadcast: no memory for the state of %u CPUs\n", nr_cpu_ids);
	tick_bc_init(&tick_bc, &tick_bc_ops, nr_cpu_ids, stride / sizeof(long),
		     wakeup, masks, cpumask_bits(cpu_online_mask));
	tick_bc_set_window(&tick_bc, bc_coalesce_boot_us * NSEC_PER_USEC);
}

#ifdef CONFIG_TICK_BROADCAST_DEVICES_KUNIT_TEST
#include "tests/tick_broadcast_devices_kunit.c"
#endif
