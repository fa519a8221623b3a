# SPDX-License-Identifier: GPL-2.0
"""Stress verdicts over recorded boots: working kernels pass; a stuck
sleeper, a lost wakeup count, a broken hand-over, a late worst wakeup
and a KCSAN race in the broadcast code each fail."""

import re
import unittest

import stress
from results import Row, Status
from tests import fixtures


def _judge(name, data=None, console=None, variant='', tree='ours'):
	con, dat = fixtures.load(name)
	sc = stress.stress_scenario('short')
	checks, s = stress.verdict(sc, 'done', console if console is not None else con,
				   data if data is not None else dat, timing=not variant,
				   variant=variant, tree=tree)
	return {c.name: (c.ok, c.detail) for c in checks}, s


def _failed(checks):
	return sorted(c for c, (ok, _) in checks.items() if not ok)


class StressVerdict(unittest.TestCase):
	def test_recorded_boots_pass(self):
		for name, tree in (('ours-stress-short', 'ours'), ('base-stress-short', 'base')):
			checks, s = _judge(name, tree=tree)
			self.assertEqual(_failed(checks), [], name)
			self.assertEqual(s.stress['sleeps'], s.stress['wakeups'])
			self.assertEqual(s.cycles['hotplug-rand'], 30)
			self.assertEqual(s.cycles['handover'], 10)
			self.assertEqual(s.cycles['s2idle'], 2)

	def test_stuck_sleeper_fails(self):
		_, data = fixtures.load('ours-stress-short')
		data = re.sub(r'(@@soak stress cpu=all sleeps=)(\d+) wakeups=\d+ stuck=0',
			      lambda m: f'{m[1]}{m[2]} wakeups={int(m[2]) - 1} stuck=1', data)
		data += '@@soak stress stuck cpu=2 target=1 now=40000000001\n'
		checks, _ = _judge('ours-stress-short', data=data)
		self.assertEqual(_failed(checks), ['stress-wakeups'])
		self.assertIn('1 stuck', checks['stress-wakeups'][1])

	def test_missing_cycles_and_handover_errors_fail(self):
		_, data = fixtures.load('ours-stress-short')
		data = data.replace('@@stress handover:10 hotplug=0 hotplug_failed=0 owner_offlined=0 '
				    'handover=10', '@@stress handover:10 hotplug=0 hotplug_failed=0 '
				    'owner_offlined=0 handover=3')
		data += '@@handover-error tb_bc_handover_a replaced, refcnt 1\n'
		checks, _ = _judge('ours-stress-short', data=data)
		self.assertEqual(_failed(checks), ['errors', 'handover'])

	def test_worst_wakeup_bound(self):
		_, data = fixtures.load('ours-stress-short')
		data = re.sub(r'(@@soak stress cpu=all .* )max=[\d.]+', r'\g<1>max=5000000.0', data)
		checks, s = _judge('ours-stress-short', data=data)
		self.assertEqual(_failed(checks), ['worst'])
		assert s.worst_bound is not None
		self.assertLess(s.worst_bound, 5000000)

	def test_hang_fails_finished(self):
		con, data = fixtures.load('ours-stress-short')
		sc = stress.stress_scenario('short')
		cut = data[:data.index('@@soak stress')]
		checks, _ = stress.verdict(sc, 'hang (no progress)', con, cut)
		failed = sorted(c.name for c in checks if not c.ok)
		self.assertEqual(failed, ['deep', 'finished', 'stress-wakeups'])

	def test_kcsan_races_only_in_broadcast_code_fail(self):
		con, _ = fixtures.load('ours-stress-short')
		foreign = ('BUG: KCSAN: data-race in do_sys_poll / pipe_write\n'
			   'BUG: KCSAN: data-race in tick_nohz_idle_enter / tick_sched_timer\n')
		checks, s = _judge('ours-stress-short', console=con + foreign, variant='kcsan')
		self.assertEqual(_failed(checks), [])
		self.assertEqual(s.races, 2)
		ours = 'BUG: KCSAN: data-race in bc_req_post / tick_handle_oneshot_broadcast\n'
		checks, _ = _judge('ours-stress-short', console=con + foreign + ours, variant='kcsan')
		self.assertEqual(_failed(checks), ['races'])
		# elsewhere a race report is a splat like any other
		checks, _ = _judge('ours-stress-short', console=con + foreign)
		self.assertIn('splats', _failed(checks))

	def test_full_plans(self):
		sc = stress.stress_scenario('hotplug')
		self.assertEqual(sc.plan[:4], ['deep:off', 'soak:start:control',
					       'hotplug-rand:100', 'soak:stop'])
		self.assertIn('hotplug-rand:1000', sc.plan)
		self.assertIn('mix:1200', stress.stress_scenario('soak').plan)
		self.assertIn('s2idle:5', stress.stress_scenario('s2idle', scale=0.1).plan)

	def test_table_has_a_row_per_boot(self):
		checks, s = _judge('ours-stress-short')
		text = stress.table([Row('stress/short/ours', Status.PASS, '', None, s)])
		self.assertEqual(len(text.splitlines()), 3)
		self.assertIn(f'{s.stress["sleeps"]:.0f} / {s.stress["wakeups"]:.0f} (0)', text)

	def test_base_rearming_a_replaced_device_is_known(self):
		con, data = fixtures.load('base-stress-soak-rearm')
		sc = stress.stress_scenario('soak')
		checks, _ = stress.verdict(sc, 'hang (no progress)', con, data, tree='base')
		failed = sorted(c.name for c in checks if not c.ok)
		self.assertIn('splats', failed)
		self.assertIn('finished', failed)
		self.assertIn('tick_cleanup_dead_cpu', con)
		self.assertIsNotNone(stress.known_failure('base', con))
		# ours gets no such excuse, nor does a base boot without the sign
		self.assertIsNone(stress.known_failure('ours', con))
		self.assertIsNone(stress.known_failure('base', fixtures.load('base-stress-short')[0]))

	def test_base_periodic_handler_after_the_switch_is_known(self):
		con, data = fixtures.load('base-stress-periodic-late')
		# recorded with --scale 0.25: mix:300
		sc = stress.stress_scenario('soak', scale=0.25)
		checks, _ = stress.verdict(sc, 'done', con, data, timing=False, variant='debug',
					   tree='base')
		self.assertEqual(sorted(c.name for c in checks if not c.ok), ['splats'])
		why = stress.known_failure('base', con)
		assert why is not None
		self.assertIn('periodic broadcast handler', why)
		self.assertNotIn('replaced broadcast device', why)
		self.assertIsNone(stress.known_failure('ours', con))
		# the warning alone, from elsewhere, is no excuse
		other = con.replace('tick_handle_periodic_broadcast+', 'some_other_caller+')
		self.assertIsNone(stress.known_failure('base', other))
