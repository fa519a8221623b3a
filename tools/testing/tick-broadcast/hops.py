# SPDX-License-Identifier: GPL-2.0
"""Where a late timer wakeup lost its time: hops from a guest trace.

The guest's trace:on|off step records, with the monotonic trace clock,
events every implementation has: hrtimer_start/hrtimer_expire_entry (the
tbprobe sleeps are hrtimer_wakeup timers), irq_handler_entry for IRQ0 (the
HPET/PIT broadcast interrupt), local_timer_entry (the local timer vector,
which is also the broadcast wake IPI on x86) and cpu_idle. For every
tbprobe sleep the hops after its expiry time E are:

  irq0    E -> first IRQ0 handler entry at or after E (any CPU): the
          broadcast device's interrupt, late by QEMU's HPET timer, the
          host scheduling the vCPU it targets, or the device armed late
  vector  -> first local timer vector entry on the sleeper's CPU: the
          wake IPI (or the local timer itself when it was not stopped)
  expiry  -> the hrtimer_expire_entry of the sleep: the CPU's own handler

Without broadcast (the controls) the irq0 hop does not exist and the
vector hop is the local timer's own lateness.

Input: the events of guestdata.trace(); this module only analyses them.
"""

import statistics
from typing import Dict, List, Optional, Sequence

from guestdata import Event

HOPS = ('irq0', 'vector', 'expiry')


def _first_after(times: Sequence[int], t: int) -> Optional[int]:
	"""First value of sorted list times that is >= t, or None."""
	lo, hi = 0, len(times)
	while lo < hi:
		mid = (lo + hi) // 2
		if times[mid] < t:
			lo = mid + 1
		else:
			hi = mid
	return times[lo] if lo < len(times) else None


def sleeps(events: Sequence[Event]) -> List[Dict[str, int]]:
	"""Every hrtimer_wakeup sleep of guestdata.trace() events as a dict:
	cpu, late (ns) and hop times (ns)."""
	expires: Dict[int, int] = {}
	irq0 = sorted(ns for _, ns, ev, _ in events if ev == 'irq_handler_entry')
	vector: Dict[int, List[int]] = {}
	for cpu, ns, ev, _ in events:
		if ev == 'local_timer_entry':
			vector.setdefault(cpu, []).append(ns)
	out = []
	for cpu, ns, ev, kv in events:
		if kv.get('function') != 'hrtimer_wakeup':
			continue
		# tbprobe threads are pinned, one per CPU: key by CPU (the
		# hrtimer pointers print hashed, all alike early after boot).
		if ev == 'hrtimer_start':
			expires[cpu] = int(kv['softexpires'])
		elif ev == 'hrtimer_expire_entry' and cpu in expires:
			e = expires.pop(cpu)
			ns = int(kv['now'])
			s = {'cpu': cpu, 'late': ns - e, 'at': e}
			v = _first_after(vector.get(cpu, []), e)
			i = _first_after(irq0, e)
			# Only hops that happened before the expiry belong to it.
			if i is not None and i <= ns:
				s['irq0'] = i - e
			if v is not None and v <= ns:
				s['vector'] = v - (e + s.get('irq0', 0))
				s['expiry'] = ns - v
			out.append(s)
	return out


def summary(samples: Sequence[Dict[str, int]],
	    tail: float = 0.05) -> Optional[Dict[str, Optional[float]]]:
	"""Median of each hop over all sleeps and over the latest `tail` share."""
	if not samples:
		return None
	srt = sorted(samples, key=lambda s: s['late'])
	top = srt[int(len(srt) * (1 - tail)):]
	res: Dict[str, Optional[float]] = {
		'n': len(srt), 'ntail': len(top),
		'p99_late': srt[min(len(srt) - 1, int(len(srt) * 0.99))]['late']}
	for name, group in (('all', srt), ('tail', top)):
		res[f'{name}_late'] = statistics.median(s['late'] for s in group)
		for h in HOPS:
			v = [s[h] for s in group if h in s]
			res[f'{name}_{h}'] = statistics.median(v) if v else None
			res[f'{name}_{h}_n'] = len(v)
	return res
