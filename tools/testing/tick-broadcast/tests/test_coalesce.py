# SPDX-License-Identifier: GPL-2.0
"""coalesce: early wakes and the offline optimum from tick_bc trace events."""

import unittest

import coalesce
import guestdata

TRACE = """@@trace bc begin
          <idle>-0       [001] d..1.   10.000000100: tick_bc_enter: cpu=1 expires=10001000000 result=queued
          <idle>-0       [002] d..1.   10.000000200: tick_bc_enter: cpu=2 expires=10001300000 result=queued
          <idle>-0       [003] d..1.   10.000000300: tick_bc_enter: cpu=3 expires=10001600000 result=queued
          <idle>-0       [000] d.h1.   10.001000100: tick_bc_expire: now=10001000100 woken=6 next=10001600000
          <idle>-0       [000] d.h1.   10.001600100: tick_bc_expire: now=10001600100 woken=9 next=9223372036854775807
          <idle>-0       [002] d..1.   10.001700000: tick_bc_enter: cpu=2 expires=9223372036854775807 result=queued
          <idle>-0       [000] d.h1.   10.002000000: tick_bc_expire: now=10002000000 woken=0 next=9223372036854775807
@@trace bc end
"""


class Coalesce(unittest.TestCase):
	def exps(self):
		return coalesce.expiries(guestdata.trace(TRACE, 'bc'))

	def test_expiries_pair_cpus_with_their_wakeup(self):
		e = self.exps()
		self.assertEqual(len(e), 3)
		self.assertEqual(e[0]['woken'], [(1, 10001000000), (2, 10001300000)])
		self.assertEqual(e[1]['cpu'], 0)
		self.assertEqual(e[1]['woken'], [(0, None), (3, 10001600000)])
		self.assertEqual(e[2]['woken'], [])

	def test_greedy_stabs(self):
		self.assertEqual(coalesce.greedy_stabs([], 10), 0)
		self.assertEqual(coalesce.greedy_stabs([5, 1, 11, 12, 30], 10), 3)
		self.assertEqual(coalesce.greedy_stabs([1, 2, 3], 0), 3)
		self.assertEqual(coalesce.greedy_stabs([4, 4, 4], 0), 1)

	def test_summary(self):
		s = coalesce.summary(self.exps(), 500000)
		assert s is not None
		self.assertEqual(s['expiries'], 3)
		self.assertEqual(s['waking'], 2)
		# CPU 0 handled both: it needs no IPI.
		self.assertEqual(s['ipis'], 3)
		self.assertEqual(s['early'], 1)
		early_max = s['early_max']
		assert early_max is not None
		self.assertAlmostEqual(early_max, 299.9)
		self.assertEqual(s['too_early'], 0)
		# 1.0 ms, 1.3 ms, 1.6 ms with W = 0.5 ms: two points.
		self.assertEqual(s['optimum'], 2)
		self.assertEqual(s['over_optimum'], 1.0)
		s = coalesce.summary(self.exps(), 100000)
		assert s is not None
		self.assertEqual(s['too_early'], 1)
		self.assertIsNone(coalesce.summary([], 0))

	def test_cpu_mask_with_commas(self):
		self.assertEqual(coalesce._mask('1,00000001'), [0, 32])
		self.assertEqual(coalesce._mask(''), [])


if __name__ == '__main__':
	unittest.main()
