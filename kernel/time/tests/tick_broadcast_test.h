/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KUnit suites that call the public tick broadcast API share:
 * they build on every kernel and skip where it has no oneshot broadcast.
 */
#ifndef _KERNEL_TIME_TESTS_TICK_BROADCAST_TEST_H
#define _KERNEL_TIME_TESTS_TICK_BROADCAST_TEST_H

#include <linux/clockchips.h>

#include "../tick-internal.h"

#define HAVE_ONESHOT_BROADCAST	(IS_ENABLED(CONFIG_GENERIC_CLOCKEVENTS_BROADCAST) && \
				 IS_ENABLED(CONFIG_TICK_ONESHOT))

/* The broadcast device, NULL if there is none. */
static inline struct clock_event_device *bc_device(void)
{
#ifdef CONFIG_GENERIC_CLOCKEVENTS_BROADCAST
	return tick_get_broadcast_device()->evtdev;
#else
	return NULL;
#endif
}

#endif /* _KERNEL_TIME_TESTS_TICK_BROADCAST_TEST_H */
