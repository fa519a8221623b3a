// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU statistics of tick broadcast (tick-broadcast-stats.h).
 */

#include <linux/jump_label.h>
#include <linux/percpu.h>

#include "tick-broadcast-stats.h"

DEFINE_PER_CPU(struct tick_bc_stats, tick_bc_stats);
DEFINE_STATIC_KEY_FALSE(tick_bc_stats_on);

/**
 * tick_bc_stats_start - start counting
 *
 * The counters stay at zero, and the idle path pays nothing for them,
 * until this is called; from then on they count for good. Called from
 * process context: it patches code.
 */
void tick_bc_stats_start(void)
{
	static_branch_enable(&tick_bc_stats_on);
}
