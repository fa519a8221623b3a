/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decision core of tick broadcast: who sleeps, until when, who is
 * woken, what the broadcast device is armed for. See the design comment
 * at the top of tick-broadcast-core.c.
 */
#ifndef _KERNEL_TIME_TICK_BROADCAST_CORE_H
#define _KERNEL_TIME_TICK_BROADCAST_CORE_H

#include <linux/bitmap.h>
#include <linux/clockchips.h>
#include <linux/compiler.h>
#include <linux/ktime.h>
#include <linux/tick.h>
#include <linux/types.h>

#include "tick-sched.h"

struct tick_bc;

/**
 * struct tick_bc_ops - what the core asks of the broadcast device
 * @arm:	Program the device, with force, to fire at @expires (which may
 *		be in the past) with its interrupt steered towards @cpu.
 * @owner:	hrtimer device only (CLOCK_EVT_FEAT_HRTIMER): the CPU whose
 *		hrtimer base holds its timer now, or -1. May be NULL
 *		otherwise.
 *
 * Both are called with the caller's lock held and interrupts disabled.
 */
struct tick_bc_ops {
	void	(*arm)(struct tick_bc *bc, ktime_t expires, unsigned int cpu);
	int	(*owner)(struct tick_bc *bc);
};

/*
 * The results of tick_bc_enter() and the actions of tick_bc_exit(), in
 * order, each with its name, for code that prints them. A user defines
 * tick_bc_name(e, name) and, for the last entry, tick_bc_name_end(e, name)
 * (__print_symbolic() needs a list without a trailing comma), then
 * expands the list.
 *
 * Enter results:
 *
 *   queued		it sleeps on the oneshot broadcast (with a wakeup
 *			time or without one)
 *   pending		it was woken already and its IPI is on its way;
 *			nothing to arm
 *   periodic		the periodic broadcast tick serves it
 *   busy_nodev		refused: no broadcast device (decided by the
 *			caller, never returned by the core)
 *   busy_owner		refused: it holds the hrtimer broadcast
 *   busy_forced	refused: its event expired at an earlier exit and
 *			has not been delivered yet
 *   busy_hrtimer	refused: periodic broadcast through the hrtimer
 *			device, which runs on a CPU that may want to sleep
 *			too
 *
 * The refusals come last (tick_bc_enter_refused()). A refused CPU keeps
 * its local device running and needs no exit.
 *
 * Exit actions, what becomes of the CPU's local device:
 *
 *   none		the CPU was not relying on broadcast: nothing
 *   woken		the broadcast woke it and the IPI is on its way:
 *			switch the device back to oneshot, do not program it
 *   no_event		it had no event: switch back, nothing to program
 *   forced		its event expired before the broadcast interrupt
 *			came, which will deliver it: switch back, do not
 *			program it (decided by tick_bc_exit_late(), never
 *			returned by tick_bc_exit())
 *   reprogram		woken early by something else, or its event expired
 *			with the device not due: switch back and program it
 *			for the CPU's next event
 */
#define TICK_BC_ENTER_RESULTS						\
	tick_bc_name(TICK_BC_ENTER_QUEUED,		"queued")	\
	tick_bc_name(TICK_BC_ENTER_PENDING,		"pending")	\
	tick_bc_name(TICK_BC_ENTER_PERIODIC,		"periodic")	\
	tick_bc_name(TICK_BC_ENTER_BUSY_NODEV,		"busy_nodev")	\
	tick_bc_name(TICK_BC_ENTER_BUSY_OWNER,		"busy_owner")	\
	tick_bc_name(TICK_BC_ENTER_BUSY_FORCED,		"busy_forced")	\
	tick_bc_name_end(TICK_BC_ENTER_BUSY_HRTIMER,	"busy_hrtimer")

#define TICK_BC_EXIT_ACTIONS						\
	tick_bc_name(TICK_BC_EXIT_NONE,			"none")		\
	tick_bc_name(TICK_BC_EXIT_WOKEN,		"woken")	\
	tick_bc_name(TICK_BC_EXIT_NO_EVENT,		"no_event")	\
	tick_bc_name(TICK_BC_EXIT_FORCED,		"forced")	\
	tick_bc_name_end(TICK_BC_EXIT_REPROGRAM,	"reprogram")

#define tick_bc_name(e, ...)	e,
#define tick_bc_name_end	tick_bc_name

enum tick_bc_enter_result {
	TICK_BC_ENTER_RESULTS
};

/* The CPU must keep its local device running, and needs no exit. */
static inline bool tick_bc_enter_refused(enum tick_bc_enter_result r)
{
	return r >= TICK_BC_ENTER_BUSY_NODEV;
}

enum tick_bc_exit_action {
	TICK_BC_EXIT_ACTIONS
};

#undef tick_bc_name
#undef tick_bc_name_end

/**
 * struct tick_bc_change - what tick_bc_control() changed
 * @joined:	the CPU entered the periodic broadcast mask
 * @left:	the CPU left the periodic broadcast mask
 * @first:	the periodic broadcast mask went from empty to non-empty
 * @last:	the periodic broadcast mask went from non-empty to empty
 */
struct tick_bc_change {
	bool	joined;
	bool	left;
	bool	first;
	bool	last;
};

/* The widest coalescing window tick_bc_set_window() accepts. */
#define TICK_BC_WINDOW_MAX_NS	(10 * NSEC_PER_MSEC)

/**
 * struct tick_bc_enter_out - what tick_bc_enter() asks of its caller
 * @stop_local:	stop the CPU's local device (never for a refusal)
 * @armed:	the broadcast device was armed (ops->arm was called)
 */
struct tick_bc_enter_out {
	bool	stop_local;
	bool	armed;
};

/**
 * struct tick_bc_entered - what __tick_bc_enter() returns
 * @result:	what became of the enter
 * @out:	what the caller must do besides
 */
struct tick_bc_entered {
	enum tick_bc_enter_result	result;
	struct tick_bc_enter_out	out;
};

/**
 * struct tick_bc - broadcast state of one machine (or of one KUnit test)
 * @ops:	device operations
 * @nr_cpus:	number of CPUs, the size of every bitmap and of @wakeup
 * @dev:	the broadcast device (NULL for none) and the broadcast mode,
 *		periodic, or oneshot for good once a CPU switched its tick;
 *		tick_get_broadcast_device() in the kernel
 * @wakeup:	per-CPU wakeup time, read for the CPUs of @oneshot only:
 *		set by the CPU's enter, KTIME_MAX for none and from the
 *		moment an expiry wakes the CPU
 * @online:	CPUs that may be woken (cpu_online_mask in the kernel)
 * @on:		CPUs that asked for broadcast (TICK_BROADCAST_ON/FORCE)
 * @periodic:	CPUs whose periodic tick comes from the broadcast device
 * @oneshot:	CPUs relying on the oneshot broadcast right now
 * @pending:	CPUs found expired and being woken by IPI
 * @force:	CPUs whose event expired at exit before the broadcast
 *		interrupt came; woken by the next expiry whatever their time
 * @nr_force:	number of bits set in @force
 * @early_ok:	CPUs whose tick handler runs only what is due (it is
 *		hrtimer_interrupt()), so that they may be woken early
 * @window:	coalescing window (ns): an expiry also wakes the sleepers
 *		of @early_ok due at most this long after it; 0 for none
 * @armed:	what the device is armed for; KTIME_MAX when it is not
 * @armed_on:	hrtimer device: the CPU holding it after its last arming,
 *		as ops->owner() gave it or, after an expiry, the CPU that
 *		ran it (-1 before any)
 * @forced:	TICK_BROADCAST_FORCE was requested: OFF is ignored from now on
 * @hrtimer:	@dev.evtdev has CLOCK_EVT_FEAT_HRTIMER (the hrtimer pseudo
 *		device); set only by tick_bc_set_device()
 *
 * The caller serialises every function on one instance (one lock).
 */
struct tick_bc {
	const struct tick_bc_ops	*ops;
	unsigned int			nr_cpus;
	struct tick_device		dev;
	ktime_t				*wakeup;
	const unsigned long		*online;
	unsigned long			*on;
	unsigned long			*periodic;
	unsigned long			*oneshot;
	unsigned long			*pending;
	unsigned long			*force;
	unsigned int			nr_force;
	unsigned long			*early_ok;
	u64				window;
	ktime_t				armed;
	int				armed_on;
	bool				forced;
	bool				hrtimer;
};

/* Bitmaps of one instance: on, periodic, oneshot, pending, force, early_ok. */
#define TICK_BC_NR_MASKS	6

bool tick_bc_device_eligible(const struct clock_event_device *cur,
			     const struct clock_event_device *dev, bool oneshot);
bool tick_bc_wakeup_eligible(const struct clock_event_device *cur,
			     const struct clock_event_device *dev, unsigned int cpu);

void tick_bc_init(struct tick_bc *bc, const struct tick_bc_ops *ops,
		  unsigned int nr_cpus, unsigned int stride,
		  ktime_t *wakeup, unsigned long *masks, const unsigned long *online);
void tick_bc_set_device(struct tick_bc *bc, struct clock_event_device *dev);
bool tick_bc_retrigger(struct tick_bc *bc);
void tick_bc_disarmed(struct tick_bc *bc);

struct tick_bc_change tick_bc_control(struct tick_bc *bc, unsigned int cpu,
				      enum tick_broadcast_mode mode);
void tick_bc_set_periodic(struct tick_bc *bc, unsigned int cpu, bool periodic);
bool tick_bc_periodic_wake(struct tick_bc *bc, unsigned int this_cpu,
			   unsigned long *wake);

bool tick_bc_switch_oneshot(struct tick_bc *bc, unsigned int this_cpu, bool early_ok,
			    ktime_t next_period, bool device_armed);
void tick_bc_cpu_reset(struct tick_bc *bc, unsigned int cpu);
bool tick_bc_owner_busy(struct tick_bc *bc, unsigned int cpu);
struct tick_bc_entered __tick_bc_enter(struct tick_bc *bc, unsigned int cpu, ktime_t wakeup);
bool tick_bc_exit_late(struct tick_bc *bc, unsigned int cpu, ktime_t wakeup, ktime_t now);
bool tick_bc_expire(struct tick_bc *bc, unsigned int this_cpu, ktime_t now,
		    unsigned long *wake, unsigned int *next_cpu);
int tick_bc_set_window(struct tick_bc *bc, u64 window_ns);

void tick_bc_offline(struct tick_bc *bc, unsigned int cpu);
bool tick_bc_pull(struct tick_bc *bc, unsigned int dead_cpu, unsigned int this_cpu);

/* The broadcast device is the hrtimer pseudo device (or one like it). */
static inline bool tick_bc_hrtimer(const struct tick_bc *bc)
{
	return bc->hrtimer;
}

static inline bool tick_bc_oneshot_mode(const struct tick_bc *bc)
{
	return bc->dev.mode == TICKDEV_MODE_ONESHOT;
}

/* In the oneshot mask, waiting for the device to fire for it. */
static inline bool tick_bc_sleeping(struct tick_bc *bc, unsigned int cpu)
{
	return test_bit(cpu, bc->oneshot) && bc->wakeup[cpu] != KTIME_MAX;
}

static inline bool tick_bc_periodic_empty(struct tick_bc *bc)
{
	return bitmap_empty(bc->periodic, bc->nr_cpus);
}

/*
 * Arm the device for @expires, its interrupt for @cpu. Not for the
 * hrtimer device, whose holder must be noted right after it is armed
 * (bc_arm() in tick-broadcast-core.c).
 */
static inline void __tick_bc_arm(struct tick_bc *bc, ktime_t expires, unsigned int cpu)
{
	bc->armed = expires;
	bc->ops->arm(bc, expires, cpu);
}

/*
 * The CPU holding the armed hrtimer device, known without asking
 * ops->owner(): armed_on while it is online (see "Races handled" 5 in
 * tick-broadcast-core.c); -1 if not known.
 */
static inline int tick_bc_known_owner(const struct tick_bc *bc)
{
	return bc->armed_on >= 0 && test_bit(bc->armed_on, bc->online) ? bc->armed_on : -1;
}

/* @cpu, which runs this and so is online, holds the armed hrtimer device. */
static inline bool tick_bc_owner_is(const struct tick_bc *bc, unsigned int cpu)
{
	return tick_bc_oneshot_mode(bc) && tick_bc_hrtimer(bc) &&
	       bc->armed != KTIME_MAX && bc->armed_on == (int)cpu;
}

/* The hrtimer device is not armed, or another CPU is known to hold it. */
static inline bool tick_bc_owner_elsewhere(const struct tick_bc *bc, unsigned int cpu)
{
	int owner = tick_bc_known_owner(bc);

	return bc->armed == KTIME_MAX || (owner >= 0 && owner != (int)cpu);
}

/**
 * tick_bc_enter - a CPU wants to sleep with its local device stopped
 * @bc:		the instance
 * @cpu:	the CPU
 * @wakeup:	its next event, KTIME_MAX for none
 * @out:	filled with what the caller must do besides
 *
 * In periodic mode the CPU keeps relying on the periodic broadcast tick
 * (refused with the hrtimer device, which runs on a CPU that may want to
 * sleep too). In oneshot mode the CPU's wakeup time is noted, and the
 * device armed if the CPU is now the earliest sleeper.
 *
 * The common case is inline, since it runs around every deep idle state:
 * in oneshot mode, a CPU neither forced nor woken notes its time, marks
 * itself as sleeping and, if it is now the earliest sleeper, arms the
 * device. With the hrtimer device the inline path never arms: arming may
 * move the timer to the arming CPU. It is taken only when the device is
 * armed early enough and known to run on another CPU, and the CPU known
 * to hold it is refused. Every other case goes through __tick_bc_enter().
 *
 * Return: what became of the enter. The refusals (see
 * tick_bc_enter_refused()) mean the CPU must not stop its local device: it
 * holds the hrtimer broadcast, or its event expired at an earlier exit
 * and the broadcast interrupt has not delivered it yet (forced). A
 * refused enter leaves the CPU as it was (one that armed the hrtimer
 * device and found it on itself leaves it armed), and needs no exit.
 */
static inline enum tick_bc_enter_result
tick_bc_enter(struct tick_bc *bc, unsigned int cpu, ktime_t wakeup,
	      struct tick_bc_enter_out *out)
{
	struct tick_bc_entered e;

	if (!tick_bc_oneshot_mode(bc) ||
	    test_bit(cpu, bc->force) || test_bit(cpu, bc->pending) ||
	    (tick_bc_hrtimer(bc) &&
	     (wakeup < bc->armed || !tick_bc_owner_elsewhere(bc, cpu)))) {
		if (tick_bc_owner_is(bc, cpu)) {
			*out = (struct tick_bc_enter_out) { };
			return TICK_BC_ENTER_BUSY_OWNER;
		}
		e = __tick_bc_enter(bc, cpu, wakeup);
		*out = e.out;
		return e.result;
	}

	bc->wakeup[cpu] = wakeup;
	__set_bit(cpu, bc->oneshot);
	*out = (struct tick_bc_enter_out) { .stop_local = true };
	if (wakeup < bc->armed) {
		__tick_bc_arm(bc, wakeup, cpu);
		out->armed = true;
	}
	return TICK_BC_ENTER_QUEUED;
}

/**
 * tick_bc_exit - a CPU leaves its deep idle state
 * @bc:		the instance
 * @cpu:	the CPU
 * @wakeup:	its next event, KTIME_MAX for none
 *
 * Inline: it runs after every deep idle state. It decides without the
 * time: the caller reprograms the local device, and only if that finds
 * the event expired does it need the decision tick_bc_exit_late() takes
 * with the time.
 *
 * Return: what to do with the CPU's local device; see
 * enum tick_bc_exit_action (never TICK_BC_EXIT_FORCED).
 */
static inline enum tick_bc_exit_action
tick_bc_exit(struct tick_bc *bc, unsigned int cpu, ktime_t wakeup)
{
	if (!__test_and_clear_bit(cpu, bc->oneshot))
		return TICK_BC_EXIT_NONE;

	if (__test_and_clear_bit(cpu, bc->pending))
		return TICK_BC_EXIT_WOKEN;
	return wakeup == KTIME_MAX ? TICK_BC_EXIT_NO_EVENT : TICK_BC_EXIT_REPROGRAM;
}

/* Somebody relies on the oneshot broadcast: the device must not stop. */
static inline bool tick_bc_busy(struct tick_bc *bc)
{
	return bc->nr_force || !bitmap_empty(bc->oneshot, bc->nr_cpus);
}

#endif /* _KERNEL_TIME_TICK_BROADCAST_CORE_H */
