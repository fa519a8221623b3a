# SPDX-License-Identifier: GPL-2.0
"""report: what make prints, over a recorded boot of its scenario."""

import re
import unittest

import guestdata
import report
import scenarios
from tests import fixtures


class Report(unittest.TestCase):
	def setUp(self):
		self.console, self.data = fixtures.load('ours-make-report')
		sc = report.scenario()
		checks, _ = scenarios.verdict(sc, 'done', self.console, self.data)
		self.text = report.text('ours', sc, 'done', self.console, self.data, checks)

	def test_the_probe_counting_the_ipis_stays_out_of_the_measured_runs(self):
		sc = report.scenario()
		self.assertTrue(sc.deterministic)
		self.assertIn(scenarios.ICOUNT[0], sc.qemu)
		bc = sc.plan.index(f'lat:bc:{scenarios.SAMPLES}')
		self.assertLess(bc, sc.plan.index('ipis:on'))
		self.assertIn('deterministic clock', self.text)

	def test_lateness_against_the_control_in_us_and_as_ratios(self):
		lat = guestdata.metrics(guestdata.parse(self.data)).lateness
		m = re.search(r'^  p50 +([\d.]+) us +([\d.]+) us +([+-][\d.]+) us: ([\d.]+)x, '
			      r'([\d.]+)x above the slack$', self.text, re.M)
		self.assertIsNotNone(m, self.text)
		assert m
		c, b = lat['control']['p50'], lat['bc']['p50']
		s = report.SLACK_US
		self.assertEqual([float(x) for x in m.groups()],
				 [round(c, 1), round(b, 1), round(b - c, 1), round(b / c, 2),
				  round((b - s) / (c - s), 2)])
		self.assertIn(f'({lat["control"]["n"]:.0f} sleeps)', self.text)

	def test_lost_probe_events_leave_the_ipis_uncounted(self):
		data = self.data.replace('@@ipis lost=0', '@@ipis lost=3')
		sc = report.scenario()
		text = report.text('ours', sc, 'done', self.console, data, [])
		self.assertIn('not counted, the probe lost 3', text)

	def test_interrupts_as_a_person_counts_them(self):
		res = guestdata.parse(self.data)
		assert res.ipis
		sends, per_cpu = guestdata.wakeups(res.ipis)
		self.assertIn(f'{sum(per_cpu.values())} wakeups (', self.text)
		self.assertIn(f'in {sends} sends', self.text)
		self.assertRegex(self.text, r'broadcast device \(hpet\) interrupts in the broadcast '
				 r'run: \d+')
		self.assertNotIn('LOC', self.text)

	def test_verdicts_pass(self):
		self.assertNotIn('FAIL', self.text)


if __name__ == '__main__':
	unittest.main()
