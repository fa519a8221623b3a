# SPDX-License-Identifier: GPL-2.0
"""Wakeup coalescing seen in a guest trace: who was woken how early, and
how many broadcast interrupts an offline optimum would have needed.

Input: guestdata.trace() events of our kernel with the tick_bc events
tick_bc_enter (a CPU's wakeup time, "expires") and tick_bc_expire (the
time of an expiry, "now", and the CPUs it woke, "woken", a hex mask).
Every CPU an expiry woke is paired with the wakeup time of its last
queued enter before it.

The optimum: every sleeper the broadcast woke had to be woken within
[t - W, t], t its wakeup time. The fewest interrupts that do that, all
times known in advance, is the interval stabbing problem, solved by the
greedy rule: take the earliest t not served yet, serve with it every
t' <= t + W, repeat. The kernel cannot know the sleepers that enter
after an interrupt, and under emulation its interrupts come late (a late
interrupt serves more sleepers, so the ratio can fall below 1).

It imports only guestdata (the percentile rule); it turns events into figures.
"""

import statistics
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, TypedDict

from guestdata import Event, percentile

KTIME_MAX = 2**63 - 1


def _mask(text: str) -> List[int]:
	"""Bits of a trace bitmask ("3", "0,00000003") as a list of CPUs."""
	v = int(text.replace(',', '') or '0', 16)
	return [c for c in range(v.bit_length()) if v >> c & 1]


class Expiry(TypedDict):
	"""One tick_bc_expire: its time, the CPU that handled it, and the CPUs
	it woke with their wakeup times (None: no enter of theirs seen)."""
	now: int
	cpu: int
	woken: List[Tuple[int, Optional[int]]]


def expiries(events: Iterable[Event]) -> List[Expiry]:
	"""[{'now', 'cpu' (handler), 'woken': [(cpu, wakeup time or None)]}]."""
	last: Dict[int, int] = {}
	out: List[Expiry] = []
	for cpu, _, ev, kv in events:
		if ev == 'tick_bc_enter' and kv.get('result') == 'queued':
			last[int(kv['cpu'])] = int(kv['expires'])
		elif ev == 'tick_bc_expire':
			woken = [(c, last.get(c)) for c in _mask(kv.get('woken', ''))]
			out.append({'now': int(kv['now']), 'cpu': cpu, 'woken': woken})
	return out


def bc_handler_runs(events: Iterable[Event]) -> int:
	"""Firings of the hrtimer broadcast device (its bc_handler expiries)."""
	return sum(1 for _, _, ev, kv in events
		   if ev == 'hrtimer_expire_entry' and kv.get('function') == 'bc_handler')


def greedy_stabs(times: Iterable[int], window: float) -> int:
	"""Fewest points p such that every t has one in [t - window, t]."""
	stabs = 0
	point: Optional[int] = None
	for t in sorted(times):
		if point is not None and t <= point + window:
			continue
		point, stabs = t, stabs + 1
	return stabs


def summary(exps: Sequence[Expiry],
	    window_ns: float) -> Optional[Dict[str, Optional[float]]]:
	"""Figures of one traced run: counts, IPIs, early wakes (us), optimum."""
	if not exps:
		return None
	secs = (exps[-1]['now'] - exps[0]['now']) / 1e9
	waking = [e for e in exps if e['woken']]
	ipis = sum(len(e['woken']) - any(c == e['cpu'] for c, _ in e['woken']) for e in exps)
	served = [(e['now'], t) for e in waking for _, t in e['woken']
		  if t is not None and t != KTIME_MAX]
	early = [(t - now) / 1000 for now, t in served if t > now]
	opt = greedy_stabs([t for _, t in served], window_ns)
	res: Dict[str, Optional[float]] = {
		'secs': secs, 'expiries': len(exps), 'waking': len(waking),
		'ipis': ipis, 'served': len(served), 'early': len(early),
		'early_p50': percentile(early, 50), 'early_p90': percentile(early, 90),
		'early_max': max(early) if early else None,
		'early_mean': statistics.mean(early) if early else None,
		'optimum': opt, 'over_optimum': len(waking) / opt if opt else None,
		'too_early': sum(1 for v in early if v * 1000 > window_ns)}
	if secs > 0:
		for k, n in (('expiries', len(exps)), ('waking', len(waking)), ('ipis', ipis),
			     ('early', len(early))):
			res[f'{k}_per_s'] = n / secs
	return res
