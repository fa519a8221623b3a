# SPDX-License-Identifier: GPL-2.0
"""counts: the plugin's output read back, per operation and per wakeup."""

import tempfile
import unittest
from pathlib import Path
from typing import Dict, Tuple
from unittest import mock

import counts

# what plugin/tbcount.c writes: a phase before the measured one, the
# measured one (enter and exit of one function from two call sites, the
# expiry), and a phase after
OUTPUT = """phase 0 overflow=0 open=0
total calls=0 insns=99
lock - calls=0 insns=0
end 0
phase 1 overflow=0 open=0
total calls=0 insns=100000 fn:clock_read=30 rd:HPET_counter=4 wr:HPET=6
lock - calls=1 insns=50
op oneshot_control 0xffffffff81001005 calls=10 insns=2000 fn:clock_read=10
lock oneshot_control 0xffffffff81001005 calls=10 insns=600
op oneshot_control 0xffffffff81001105 calls=8 insns=1600 fn:clock_read=8
lock oneshot_control 0xffffffff81001105 calls=8 insns=400 wr:HPET=2
op expiry 0xffffffff81002005 calls=4 insns=1200 sub:local_tick=400 sub:dev_program=80 wr:HPET=4 wr:LAPIC_ICR=6 rd:HPET=4
lock expiry 0xffffffff81002005 calls=4 insns=800 sub:dev_program=80
wait expiry 0xffffffff81002005 calls=1 insns=300
op local_tick 0xffffffff81002105 calls=2 insns=400
lock local_tick 0xffffffff81002105 calls=0 insns=0
end 1
phase 2 overflow=0 open=0
total calls=0 insns=5
end 2
"""


class Parse(unittest.TestCase):
	def run_of(self) -> counts.Run:
		ph = counts.parse(OUTPUT)[1]
		kinds = {0xffffffff81001005: 'enter', 0xffffffff81001105: 'exit'}
		with mock.patch.object(counts, 'control_kind',
				       lambda vmlinux, syms, ret, arch: kinds[ret]):
			ops = counts.operations(ph, counts.Path('/nonexistent'), {}, 'x86_64')
		return counts.Run('done', ops, ph.scopes['total'], ph.scopes['lock -'], ph.overflow)

	def test_phases(self):
		phases = counts.parse(OUTPUT)
		self.assertEqual(len(phases), 3)
		self.assertEqual(phases[1].scopes['total']['fn:clock read'], 30)
		self.assertEqual(phases[1].scopes['op expiry 0xffffffff81002005']['wr:LAPIC ICR'], 6)

	def test_per_call_and_per_wakeup(self):
		rows = counts.rows_of(self.run_of())
		self.assertEqual(rows[('enter', 'calls')], 10)
		self.assertEqual(rows[('enter', 'instructions')], 200)
		self.assertEqual(rows[('enter', 'serial instructions (under the lock)')], 60)
		self.assertEqual(rows[('exit', 'device accesses under the lock')], 0.25)
		self.assertEqual(rows[('expiry', 'IPIs (ICR writes)')], 1.5)
		# per wakeup: everything the three operations did, per exit
		self.assertEqual(rows[('per wakeup', 'instructions')], (2000 + 1600 + 1200) / 8)
		# ... and the lock sections outside any operation
		self.assertEqual(rows[('per wakeup', 'serial instructions (under the lock)')],
				 (600 + 400 + 800 + 50) / 8)
		self.assertEqual(rows[('per wakeup', 'expiries')], 0.5)
		# waiting for the lock is shown apart, in no operation's work
		self.assertEqual(rows[('expiry', 'instructions waiting for the lock')], 75)
		self.assertEqual(rows[('expiry', 'instructions')], 300)

	def test_parts_apart(self):
		r = self.run_of()
		# a part is no operation of its own: only its callers show it
		self.assertEqual(sorted(r.ops), ['enter', 'exit', 'expiry'])
		rows = counts.rows_of(r)
		self.assertEqual(rows[('expiry', 'instructions in the local tick handler')], 100)
		self.assertEqual(rows[('expiry', 'instructions programming or switching a device')], 20)
		self.assertEqual(rows[('expiry', 'own instructions (the rest)')], (1200 - 480) / 4)
		self.assertEqual(rows[('expiry', 'serial own instructions (the rest)')], (800 - 80) / 4)
		# an operation that calls no part: all its own
		self.assertEqual(rows[('enter', 'own instructions (the rest)')], 200)
		self.assertEqual(counts.config({'_stext': [(1, 0)], '_etext': [(2, 0)],
						'tick_broadcast_lock': [(3, 0)],
						'queued_spin_lock_slowpath': [(4, 0)],
						'tick_broadcast_oneshot_control': [(5, 0)],
						'tick_handle_oneshot_broadcast': [(6, 0)],
						'hrtimer_interrupt': [(7, 0)],
						'lapic_timer_broadcast': [(8, 0)],
						'clockevents_program_event': [(9, 0)],
						'clockevents_switch_state': [(11, 0)],
						'current_device_show': [(10, 0)]},
					       'x86_64').count('\npart '), 4)

	def test_an_operation_inside_another_is_a_missed_return(self):
		self.assertEqual(counts.nested(self.run_of().ops), '')
		ops: Dict[str, Tuple[counts.Counts, counts.Counts]] = {
			'enter': ({'calls': 1, 'sub:expiry': 900}, {}), 'exit': ({'calls': 1}, {})}
		self.assertIn('expiry in enter', counts.nested(ops))
		# inside a part, or the lock taken in one
		ph = counts.parse('phase 0 overflow=0 open=0\n'
				  'op local_tick 0x1 calls=1 insns=9 sub:expiry=5\n'
				  'lock dev_program 0x2 calls=1 insns=3\n')[0]
		found = counts.nested({}, ph)
		self.assertIn('expiry in local_tick', found)
		self.assertIn('the lock taken in dev_program', found)
		self.assertEqual(counts.nested({}, counts.parse(OUTPUT)[1]), '')

	def test_cut_line(self):
		phases = counts.parse('phase 0 overflow=0 open=0\ntotal calls=0 insns=5\nop exp')
		self.assertEqual(phases[0].scopes, {'total': {'calls': 0, 'insns': 5}})

	def test_table_and_model(self):
		r = self.run_of()
		text = counts.counts_table('t', {'base': [r, r], 'ours': [r]})
		self.assertIn('base identical over 2 boots', text)
		self.assertIn('ours DIFFER over 1 boots', text)
		model = counts.model({'base': [r]})
		self.assertEqual(len(model), 1)
		# serial: 1850 instructions and 2 HPET writes, 23 sections of 2 lines
		serial_ns = (1850 * 0.33 + 2 * 100) / 8 + 23 / 8 * counts.LINES_PER_SECTION * 50
		self.assertIn(f'| {serial_ns:.0f} |', model[0])
		# the enter: 2000 instructions in all, 600 under the lock, per 10 calls
		self.assertIn(f'| {2000 * 0.33 / 10:.0f} / {600 * 0.33 / 10:.0f} |', model[0])


class MinDelta(unittest.TestCase):
	def test_the_last_raise_counts(self):
		console = ('clocksource: Switched to clocksource tsc\n'
			   'CE: hpet increased min_delta_ns to 5000 nsec\n'
			   'CE: hpet increased min_delta_ns to 7500 nsec\n')
		self.assertEqual(counts.min_delta_us(console), 7.5)

	def test_never_raised_is_zero(self):
		self.assertEqual(counts.min_delta_us('Linux version 6.12\n'), 0.0)


class Plugin(unittest.TestCase):
	def test_builds_warning_free(self):
		with tempfile.TemporaryDirectory() as d:
			with mock.patch.object(counts.workspace, 'CACHE', Path(d)):
				so = counts.plugin()
			self.assertTrue(so.exists())


if __name__ == '__main__':
	unittest.main()
