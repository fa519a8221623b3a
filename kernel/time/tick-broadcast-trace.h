/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of tick broadcast (kernel/time/tick-broadcast.c), system
 * tick_bc: what each CPU asked for and was told on entering and leaving
 * deep idle, what the broadcast device was armed for and whom it woke.
 * Times are CLOCK_MONOTONIC nanoseconds, KTIME_MAX (9223372036854775807)
 * for "none". Documentation/timers/tick-broadcast.rst shows how to turn
 * them into statistics with hist triggers.
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM tick_bc

#if !defined(_KERNEL_TIME_TICK_BROADCAST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KERNEL_TIME_TICK_BROADCAST_TRACE_H

#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/tick.h>
#include <linux/tracepoint.h>

#include "tick-broadcast-core.h"

#undef tick_bc_name
#undef tick_bc_name_end
#define tick_bc_name(e, ...)		TRACE_DEFINE_ENUM(e);
#define tick_bc_name_end		tick_bc_name
TICK_BC_ENTER_RESULTS
TICK_BC_EXIT_ACTIONS
#undef tick_bc_name
#undef tick_bc_name_end

#define tick_bc_name(e, name)		{ e, name },
#define tick_bc_name_end(e, name)	{ e, name }
#define tick_bc_show_enter_result(r)	__print_symbolic(r, TICK_BC_ENTER_RESULTS)
#define tick_bc_show_exit_action(a)	__print_symbolic(a, TICK_BC_EXIT_ACTIONS)

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
 * tick_bc_program - the broadcast decided to (re)arm its device; the
 *		write may follow after tick_broadcast_lock is dropped
 * @expires:	when it is to fire; 0 re-evaluates every sleeper at once
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

/*
 * tick_bc_expire - the oneshot broadcast device fired
 * @now:	the time of the expiry
 * @woken:	the CPUs woken, the handling CPU included if it was due
 * @next:	what the device is armed for now, KTIME_MAX for nothing
 */
TRACE_EVENT(tick_bc_expire,

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

#endif /* _KERNEL_TIME_TICK_BROADCAST_TRACE_H */

/* This part must be outside protection */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ../../kernel/time
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tick-broadcast-trace
#include <trace/define_trace.h>
