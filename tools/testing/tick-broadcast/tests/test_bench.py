# SPDX-License-Identifier: GPL-2.0
"""bench's figures and tables, and hops, over recorded boots."""

import unittest
from typing import Any, Dict

import arches
import bench
import guestdata
import hops
from tests import fixtures


class BootMetrics(unittest.TestCase):
	def test_scenario_boot(self):
		console, data = fixtures.load('ours-hpet-irqoff')
		m = bench.boot_metrics('done', console, data)
		want = fixtures.lat_lines(data)
		self.assertEqual(m['bc_p99'], want['bc']['all']['p99'])
		self.assertEqual(m['control_p50'], want['control']['all']['p50'])
		self.assertAlmostEqual(m['bc_over_control'], m['bc_p99'] / m['control_p99'])
		self.assertGreater(m['irq0_per_s'], 0)
		self.assertGreater(m['loc_per_s'], m['irq0_per_s'])
		self.assertTrue(0 < m['residency_pct'] <= 100)

	def test_profiler_and_kunit_bench(self):
		console, data = fixtures.load('ours-bench-halt')
		m = bench.boot_metrics('done', console, data)
		for fn in set(bench.PROF_FUNCS) - {arches.ARCHES['arm64'].ipi_func}:
			self.assertGreater(m[f'prof_{fn}_ns'], 0, fn)
			self.assertGreater(m[f'prof_{fn}_per_s'], 0, fn)
		self.assertGreater(m['kbench_pair_ns'], 0)
		ns = [n for n, _, _ in m['core_bench']]
		self.assertEqual(ns, sorted(ns))
		self.assertEqual(ns[0], 8)

	def test_tables(self):
		runs = []
		for fx in ('ours-hpet-halt', 'ours-hpet-irqoff'):
			console, data = fixtures.load(fx)
			m = bench.boot_metrics('done', console, data)
			m['raw'] = {n: guestdata.raw(data, n) for n in ('control', 'bc')}
			runs.append(m)
		raw = {'workloads': {w: {'base': runs, 'ours': runs} for w in bench.WORKLOADS},
		       'arat': {w: {'base': runs, 'ours': runs} for w in bench.WORKLOADS},
		       'trace': {'base': [], 'ours': []},
		       'scaling': {n: {'base': runs, 'ours': runs} for n in bench.SCALING_SMP}}
		text = bench.workload_table('hpet-halt', raw)
		self.assertIn('lateness p99 (us)', text)
		self.assertIn('1.00x', text)
		self.assertIn('-smp 2', bench.scaling_table(raw))


class Parts(unittest.TestCase):
	LINE = ('    # bench_parts: tick_broadcast_parts cpu=2 batches=30 pair=1402 local_dev=834 '
		'ktime_get=60 lock=31 trylock=36 smp_mb=9 seqcount_write=33 percpu_inc=8 '
		'static_key_off=5 timerqueue=88 loop=6\n')

	def test_parse(self):
		p = guestdata.kbench(self.LINE)['kbench_parts']
		self.assertEqual(list(p)[:2], ['pair', 'local_dev'])
		self.assertEqual(p['timerqueue'], 88)
		self.assertEqual(set(p), {k for k, _ in bench.PARTS})

	def test_absent(self):
		self.assertNotIn('kbench_parts', guestdata.kbench('no bench here\n'))

	def test_table(self):
		ours = {'kbench_parts': guestdata.kbench(self.LINE)['kbench_parts']}
		base = {'kbench_parts': dict(ours['kbench_parts'], pair=1058, local_dev=818)}
		raw = {'workloads': {'hpet-halt': {'base': [base], 'ours': [ours]}}}
		text = bench.parts_table(raw)
		self.assertIn('1.33x', text)
		self.assertIn('568 [568-568]', text)
		self.assertIn('240 [240-240]', text)

	def test_table_without_results(self):
		raw: Dict[str, Any] = {'workloads': {'hpet-halt': {'base': [{}], 'ours': [{}]}}}
		self.assertIn('no results', bench.parts_table(raw))


class Deterministic(unittest.TestCase):
	def test_table(self):
		def boot(p50, extra=None):
			m = {'control_p50': 54.3, 'control_p90': 54.8, 'control_p99': 55.0,
			     'bc_p50': p50, 'bc_p90': p50 + 3, 'bc_p99': p50 + 8}
			m.update(extra or {})
			return m
		parts = {'kbench_parts': {'pair': 562, 'local_dev': 265}}
		det = {'workloads': {'hpet-halt': {'base': [boot(56.5, {'kbench_parts':
									   {'pair': 447, 'local_dev': 265}})] * 3,
						   'ours': [boot(56.3, parts), boot(56.4, parts), boot(56.3, parts)]}},
		       'arat': {'hpet-halt': {'base': [boot(54.5)] * 3, 'ours': [boot(54.5)] * 3}}}
		text = bench.deterministic_table('hpet-halt', det)
		self.assertIn('-icount shift=0,sleep=off', text)
		self.assertIn('56.3 [56.3-56.4]', text)	# the spread over boots
		self.assertRegex(text, r'broadcast - ARAT, medians \(us\)\s+2\.0 \[2\.0-2\.0\]\s+1\.8 ')
		self.assertRegex(text, r'of which the broadcast code \(ns\)\s+182 \[182-182\]\s+297 ')

	def test_only_deterministic_workloads(self):
		self.assertNotIn('acpi-c2', bench.DET_WORKLOADS)
		self.assertTrue(set(bench.DET_WORKLOADS) <= set(bench.WORKLOADS))


class Hops(unittest.TestCase):
	def test_trace_hops(self):
		_, data = fixtures.load('ours-bench-halt')
		for run in ('control', 'bc'):
			events = guestdata.trace(data, run)
			self.assertTrue(events, run)
			sleeps = hops.sleeps(events)
			self.assertGreater(len(sleeps), 10, run)
			self.assertTrue(all(s['late'] >= 0 for s in sleeps))
			s = hops.summary(sleeps)
			assert s is not None
			self.assertEqual(s['n'], len(sleeps))
		# the broadcast run goes through IRQ0, the control run never
		bc = hops.summary(hops.sleeps(guestdata.trace(data, 'bc')))
		ctl = hops.summary(hops.sleeps(guestdata.trace(data, 'control')))
		assert bc is not None and ctl is not None and bc['all_irq0_n'] is not None
		self.assertGreater(bc['all_irq0_n'], 0)
		self.assertEqual(ctl['all_irq0_n'], 0)

	def test_trace_sections_are_separate(self):
		_, data = fixtures.load('ours-bench-halt')
		both = guestdata.trace(data)
		self.assertEqual(len(both), len(guestdata.trace(data, 'bc')) +
				 len(guestdata.trace(data, 'control')))
