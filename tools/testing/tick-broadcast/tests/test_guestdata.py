# SPDX-License-Identifier: GPL-2.0
"""guestdata over recorded guest output."""

import unittest

import guestdata
from tests import fixtures


class Parse(unittest.TestCase):
	def setUp(self):
		self.console, self.data = fixtures.load('ours-hpet-irqoff')
		self.res = guestdata.parse(self.data)

	def test_plan_ran_to_its_end(self):
		self.assertTrue(self.res.begin)
		self.assertTrue(self.res.end)
		self.assertEqual(self.res.errors, [])

	def test_snapshots(self):
		snaps = self.res.snaps
		self.assertEqual(sorted(snaps), ['end', 'mid', 'start'])
		for s in snaps.values():
			self.assertEqual(s.bcdev, 'hpet')
			self.assertEqual(s.driver, 'timerstop')
			self.assertEqual(s.online, '0-3')
			self.assertEqual({c for c, _ in s.idle}, {0, 1, 2, 3})
			self.assertIn('/proc/interrupts', s.files)
			self.assertNotIn('/proc/timer_list', s.files)	# trimmed
		self.assertLess(snaps['start'].uptime, snaps['mid'].uptime)
		self.assertLess(snaps['mid'].uptime, snaps['end'].uptime)

	def test_lateness_lines(self):
		want = fixtures.lat_lines(self.data)
		self.assertEqual(sorted(self.res.lat), ['bc', 'control'])
		self.assertEqual(self.res.lat, want)
		self.assertEqual(self.res.lat['bc']['all']['n'], 1200)
		self.assertEqual(self.res.lat['control']['all']['n'], 600)

	def test_interrupts(self):
		irq = guestdata.interrupts(self.res.snaps['mid'])
		self.assertIn('0', irq)
		self.assertIn('LOC', irq)
		# the ERR/MIS rows have one column only
		self.assertIn('ERR', irq)
		m = guestdata.metrics(self.res).counts
		assert m is not None
		self.assertGreater(m.irq0, 50)
		self.assertGreater(m.loc, m.irq0)

	def test_deep_entries_and_residency(self):
		s = self.res.snaps
		deep = guestdata.deep_entries(s['mid'], s['end'])
		self.assertEqual(sorted(deep), [0, 1, 2, 3])
		self.assertTrue(all(n > 50 for n in deep.values()))
		# control run: deep state disabled, next to no entries
		ctl = guestdata.deep_entries(s['start'], s['mid'])
		self.assertLess(sum(ctl.values()), sum(deep.values()))
		pct = guestdata.deep_residency_pct(s['mid'], s['end'])
		assert pct is not None
		self.assertTrue(0 < pct <= 100)

	def test_raw_samples(self):
		bc = guestdata.raw(self.data, 'bc')
		# fixtures keep 40 samples of each CPU's 300
		self.assertEqual(len(bc), 4 * 40)
		self.assertTrue(all(v >= 0 for v in bc))
		self.assertEqual(guestdata.raw(self.data, 'nosuchrun'), [])

	def test_percentile_and_fraction(self):
		self.assertEqual(guestdata.percentile([1, 2, 3, 4], 50), 3)
		self.assertEqual(guestdata.percentile(list(range(100)), 99), 99)
		self.assertIsNone(guestdata.percentile([], 99))
		self.assertEqual(guestdata.late_fraction([1, 5, 10, 20], 9), 0.5)

	def test_heartbeats(self):
		hb = guestdata.heartbeats(self.console)
		self.assertGreater(len(hb), 3)
		self.assertEqual(hb, sorted(hb))
		self.assertNotIn('@@hb', guestdata.strip_heartbeats(self.console))
		self.assertEqual(guestdata.kernel_release(self.console), '6.12.118')

	def test_truncated_output(self):
		cut = self.data[:len(self.data) // 2]
		res = guestdata.parse(cut)
		self.assertFalse(res.end)
		self.assertNotIn('end', res.snaps)
		self.assertIsNone(guestdata.metrics(res).counts)

	def test_wake_ipis(self):
		res = guestdata.parse('@@ipis lost=0\n@@ipis mask=0x6 n=3\n@@ipis mask=0x1 n=2\n'
				      '@@ipis mask=0x4 n=1\n')
		assert res.ipis is not None
		self.assertEqual(res.ipis, {6: 3, 1: 2, 4: 1})
		self.assertEqual(guestdata.wakeups(res.ipis), (6, {0: 2, 1: 3, 2: 4}))
		self.assertIsNone(guestdata.parse('@@end\n').ipis)
		self.assertEqual(guestdata.parse('@@ipis lost=0\n').ipis, {})

	def test_garbage_is_ignored(self):
		res = guestdata.parse('@@snap x\nnoise\n@@lat bc n=3\n@@snap y begin\n@@idle cpu=0 '
				      'state=1 name=C3 usage=5 time=9\n')
		self.assertEqual(res.lat, {})
		self.assertEqual(res.snaps['y'].idle, {(0, 1): 5})
