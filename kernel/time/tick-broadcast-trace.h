/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of tick broadcast (kernel/time/tick-broadcast.c), system
 * tick_bc: every change of the broadcast state, with the times involved.
 * Times are CLOCK_MONOTONIC nanoseconds, KTIME_MAX (9223372036854775807)
 * for "none". Documentation/timers/tick-broadcast.rst lists them and shows
 * how to enable them.
 */

/*
 * Values of the events' fields that are decoded by name: the results of
 * tick_bc_enter() and the actions of tick_bc_exit() (tick-broadcast-core.h),
 * why the CPU holding the hrtimer broadcast changed, and which role a
 * device took.
 */
#ifndef _KERNEL_TIME_TICK_BROADCAST_TRACE_ENUMS
#define _KERNEL_TIME_TICK_BROADCAST_TRACE_ENUMS

#include "tick-broadcast-core.h"

#define TICK_BC_OWNER_REASONS						\
	tick_bc_name(TICK_BC_OWNER_ARM,			"arm")		\
	tick_bc_name_end(TICK_BC_OWNER_PULL,		"pull")

#define TICK_BC_DEVICE_ROLES						\
	tick_bc_name(TICK_BC_ROLE_BROADCAST,		"broadcast")	\
	tick_bc_name_end(TICK_BC_ROLE_WAKEUP,		"wakeup")

#define tick_bc_name(e, ...)	e,
#define tick_bc_name_end	tick_bc_name

/* An enter armed the timer on another CPU; its CPU went offline. */
enum tick_bc_owner_reason {
	TICK_BC_OWNER_REASONS
};

/* The broadcast device, or a CPU's own oneshot wakeup device. */
enum tick_bc_device_role {
	TICK_BC_DEVICE_ROLES
};

#undef tick_bc_name
#undef tick_bc_name_end

#endif /* _KERNEL_TIME_TICK_BROADCAST_TRACE_ENUMS */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM tick_bc

#if !defined(_KERNEL_TIME_TICK_BROADCAST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KERNEL_TIME_TICK_BROADCAST_TRACE_H

#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/tick.h>
#include <linux/tracepoint.h>

#undef tick_bc_name
#undef tick_bc_name_end
#define tick_bc_name(e, ...)		TRACE_DEFINE_ENUM(e);
#define tick_bc_name_end		tick_bc_name
TICK_BC_ENTER_RESULTS
TICK_BC_EXIT_ACTIONS
TICK_BC_OWNER_REASONS
TICK_BC_DEVICE_ROLES
#undef tick_bc_name
#undef tick_bc_name_end

#define tick_bc_name(e, name)		{ e, name },
#define tick_bc_name_end(e, name)	{ e, name }
#define tick_bc_show_enter_result(r)	__print_symbolic(r, TICK_BC_ENTER_RESULTS)
#define tick_bc_show_exit_action(a)	__print_symbolic(a, TICK_BC_EXIT_ACTIONS)
#define tick_bc_show_owner_reason(r)	__print_symbolic(r, TICK_BC_OWNER_REASONS)
#define tick_bc_show_device_role(r)	__print_symbolic(r, TICK_BC_DEVICE_ROLES)

TRACE_DEFINE_ENUM(TICK_BROADCAST_OFF);
TRACE_DEFINE_ENUM(TICK_BROADCAST_ON);
TRACE_DEFINE_ENUM(TICK_BROADCAST_FORCE);

/* A CPU enters or leaves a state in which its local timer stops. */
DECLARE_EVENT_CLASS(tick_bc_idle,

	TP_PROTO(unsigned int cpu, ktime_t expires, int result),

	TP_ARGS(cpu, expires, result),

	TP_STRUCT__entry(
		__field(unsigned int,	cpu)
		__field(s64,		expires)
		__field(int,		result)
	),

	TP_fast_assign(
		__entry->cpu		= cpu;
		__entry->expires	= expires;
		__entry->result		= result;
	),

	TP_printk("cpu=%u expires=%lld result=%s", __entry->cpu, __entry->expires,
		  tick_bc_show_enter_result(__entry->result))
);

/*
 * tick_bc_enter - a CPU asked to sleep with its local timer stopped
 * @cpu:	the CPU
 * @expires:	its next event
 * @result:	enum tick_bc_enter_result; the busy ones are refusals
 */
DEFINE_EVENT(tick_bc_idle, tick_bc_enter,

	TP_PROTO(unsigned int cpu, ktime_t expires, int result),

	TP_ARGS(cpu, expires, result)
);

/*
 * tick_bc_exit - a CPU left its deep idle state
 * @cpu:	the CPU
 * @expires:	its next event
 * @result:	enum tick_bc_exit_action: how it was woken, what its local
 *		timer is told
 */
DEFINE_EVENT_PRINT(tick_bc_idle, tick_bc_exit,

	TP_PROTO(unsigned int cpu, ktime_t expires, int result),

	TP_ARGS(cpu, expires, result),

	TP_printk("cpu=%u expires=%lld result=%s", __entry->cpu, __entry->expires,
		  tick_bc_show_exit_action(__entry->result))
);

/*
 * tick_bc_program - the broadcast device was (re)programmed
 * @expires:	when it fires; 0 re-evaluates every sleeper at once
 * @cpu:	the CPU its interrupt is steered to, where it can be steered
 */
TRACE_EVENT(tick_bc_program,

	TP_PROTO(ktime_t expires, unsigned int cpu),

	TP_ARGS(expires, cpu),

	TP_STRUCT__entry(
		__field(s64,		expires)
		__field(unsigned int,	cpu)
	),

	TP_fast_assign(
		__entry->expires	= expires;
		__entry->cpu		= cpu;
	),

	TP_printk("expires=%lld cpu=%u", __entry->expires, __entry->cpu)
);

/* The broadcast device fired: who is woken, when it fires next. */
DECLARE_EVENT_CLASS(tick_bc_wake,

	TP_PROTO(ktime_t now, const struct cpumask *woken, ktime_t next),

	TP_ARGS(now, woken, next),

	TP_STRUCT__entry(
		__field(s64,		now)
		__field(s64,		next)
		__bitmask(woken,	nr_cpumask_bits)
	),

	TP_fast_assign(
		__entry->now		= now;
		__entry->next		= next;
		__assign_bitmask(woken, cpumask_bits(woken), nr_cpumask_bits);
	),

	TP_printk("now=%lld woken=%s next=%lld", __entry->now,
		  __get_bitmask(woken), __entry->next)
);

/*
 * tick_bc_expire - the oneshot broadcast device fired
 * @now:	the time of the expiry
 * @woken:	the CPUs woken, the handling CPU included
 * @next:	what the device is armed for now, KTIME_MAX for nothing
 */
DEFINE_EVENT(tick_bc_wake, tick_bc_expire,

	TP_PROTO(ktime_t now, const struct cpumask *woken, ktime_t next),

	TP_ARGS(now, woken, next)
);

/*
 * tick_bc_coalesce - the oneshot broadcast woke CPUs before their time
 * @now:	the time of the expiry, as in the tick_bc_expire event
 * @nr:		how many CPUs it woke early, the handling CPU included
 * @early_ns:	the sum of how early they were woken (ns)
 * @early_max_ns: how early the earliest of them was woken (ns), at most the
 *		coalescing window
 */
TRACE_EVENT(tick_bc_coalesce,

	TP_PROTO(ktime_t now, unsigned int nr, u64 early_ns, u64 early_max_ns),

	TP_ARGS(now, nr, early_ns, early_max_ns),

	TP_STRUCT__entry(
		__field(s64,		now)
		__field(unsigned int,	nr)
		__field(u64,		early_ns)
		__field(u64,		early_max_ns)
	),

	TP_fast_assign(
		__entry->now		= now;
		__entry->nr		= nr;
		__entry->early_ns	= early_ns;
		__entry->early_max_ns	= early_max_ns;
	),

	TP_printk("now=%lld nr=%u early_ns=%llu early_max_ns=%llu", __entry->now,
		  __entry->nr, __entry->early_ns, __entry->early_max_ns)
);

/*
 * tick_bc_periodic - the periodic broadcast device ticked
 * @now:	the time of the tick
 * @woken:	the CPUs ticked, the handling CPU included
 * @next:	the next tick where the device is oneshot, else KTIME_MAX
 */
DEFINE_EVENT(tick_bc_wake, tick_bc_periodic,

	TP_PROTO(ktime_t now, const struct cpumask *woken, ktime_t next),

	TP_ARGS(now, woken, next)
);

/*
 * tick_bc_owner - the hrtimer broadcast moved to another CPU
 * @from:	the CPU that held it, -1 for none
 * @to:		the CPU that holds it now, -1 for none
 * @reason:	enum tick_bc_owner_reason: armed from another CPU, or
 *		pulled from a dead one
 */
TRACE_EVENT(tick_bc_owner,

	TP_PROTO(int from, int to, int reason),

	TP_ARGS(from, to, reason),

	TP_STRUCT__entry(
		__field(int,	from)
		__field(int,	to)
		__field(int,	reason)
	),

	TP_fast_assign(
		__entry->from		= from;
		__entry->to		= to;
		__entry->reason		= reason;
	),

	TP_printk("from=%d to=%d reason=%s", __entry->from, __entry->to,
		  tick_bc_show_owner_reason(__entry->reason))
);

/*
 * tick_bc_device - a device became the broadcast or a wakeup device
 * @name:	its name
 * @old:	the device it replaced, "" for none
 * @rating:	its rating
 * @role:	enum tick_bc_device_role: the broadcast device, or the
 *		oneshot wakeup device of @cpu
 * @cpu:	the CPU that registered it
 */
TRACE_EVENT(tick_bc_device,

	TP_PROTO(const char *name, const char *old, int rating, int role,
		 unsigned int cpu),

	TP_ARGS(name, old, rating, role, cpu),

	TP_STRUCT__entry(
		__string(name,		name)
		__string(old,		old)
		__field(int,		rating)
		__field(int,		role)
		__field(unsigned int,	cpu)
	),

	TP_fast_assign(
		__assign_str(name);
		__assign_str(old);
		__entry->rating		= rating;
		__entry->role		= role;
		__entry->cpu		= cpu;
	),

	TP_printk("name=%s old=%s rating=%d role=%s cpu=%u", __get_str(name),
		  __get_str(old), __entry->rating,
		  tick_bc_show_device_role(__entry->role),
		  __entry->cpu)
);

/*
 * tick_bc_control - a CPU turned broadcast on or off
 * @cpu:	the CPU
 * @mode:	enum tick_broadcast_mode
 * @periodic:	it is in the periodic broadcast mask now
 */
TRACE_EVENT(tick_bc_control,

	TP_PROTO(unsigned int cpu, int mode, bool periodic),

	TP_ARGS(cpu, mode, periodic),

	TP_STRUCT__entry(
		__field(unsigned int,	cpu)
		__field(int,		mode)
		__field(bool,		periodic)
	),

	TP_fast_assign(
		__entry->cpu		= cpu;
		__entry->mode		= mode;
		__entry->periodic	= periodic;
	),

	TP_printk("cpu=%u mode=%s periodic=%d", __entry->cpu,
		  __print_symbolic(__entry->mode,
				   { TICK_BROADCAST_OFF, "off" },
				   { TICK_BROADCAST_ON, "on" },
				   { TICK_BROADCAST_FORCE, "force" }),
		  __entry->periodic)
);

/*
 * tick_bc_oneshot - the broadcast switched from periodic to oneshot mode
 * @cpu:	the CPU whose switch to oneshot mode did it
 * @next:	the next periodic tick, which the handed-over CPUs sleep until
 * @handed:	the periodic broadcast mask at the switch (the CPUs handed
 *		over, and possibly @cpu itself)
 */
TRACE_EVENT(tick_bc_oneshot,

	TP_PROTO(unsigned int cpu, ktime_t next, const struct cpumask *handed),

	TP_ARGS(cpu, next, handed),

	TP_STRUCT__entry(
		__field(unsigned int,	cpu)
		__field(s64,		next)
		__bitmask(handed,	nr_cpumask_bits)
	),

	TP_fast_assign(
		__entry->cpu		= cpu;
		__entry->next		= next;
		__assign_bitmask(handed, cpumask_bits(handed), nr_cpumask_bits);
	),

	TP_printk("cpu=%u next=%lld handed=%s", __entry->cpu, __entry->next,
		  __get_bitmask(handed))
);

/*
 * tick_bc_shutdown - the broadcast device was shut down
 * @suspend:	for suspend, not because nobody needs it
 */
TRACE_EVENT(tick_bc_shutdown,

	TP_PROTO(bool suspend),

	TP_ARGS(suspend),

	TP_STRUCT__entry(
		__field(bool,	suspend)
	),

	TP_fast_assign(
		__entry->suspend	= suspend;
	),

	TP_printk("suspend=%d", __entry->suspend)
);

#endif /* _KERNEL_TIME_TICK_BROADCAST_TRACE_H */

/* This part must be outside protection */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ../../kernel/time
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tick-broadcast-trace
#include <trace/define_trace.h>
