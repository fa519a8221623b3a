# SPDX-License-Identifier: GPL-2.0
"""seriessteps: which steps of the series can boot the scenario, and the
make target that asks for the boots."""

import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import List

import patchset
import scenarios
import seriessteps
import workspace
from results import Row, Status


class BootMissing(unittest.TestCase):
	def test_a_tree_with_everything_boots(self):
		self.assertEqual(seriessteps.boot_missing(lambda path: True), '')

	def test_a_tree_without_the_driver_says_what_it_lacks(self):
		why = seriessteps.boot_missing(lambda path: path != 'kernel/time/test_timerstop.c')
		self.assertIn('no kernel/time/test_timerstop.c yet', why)
		self.assertIn('test cpuidle driver', why)

	def test_every_file_missing_is_named(self):
		why = seriessteps.boot_missing(lambda path: False)
		for path in seriessteps.BOOT_NEEDS:
			self.assertIn(path, why)

	def test_the_scenarios_are_x86_ones_of_the_test_driver(self):
		for name in seriessteps.BOOT_SCENARIOS:
			sc = scenarios.SCENARIOS[name]
			self.assertEqual(sc.arch, workspace.ARCH, name)
			self.assertEqual(sc.variant, '', name)
			self.assertEqual(sc.driver, 'timerstop', name)
		self.assertTrue(scenarios.SCENARIOS[seriessteps.BOOT_SCENARIOS[0]].deterministic)


class SeriesBoots(unittest.TestCase):
	"""Over the series as it is: every step from the one that creates
	what the scenario needs (the test driver's) on can boot."""

	def bootable(self):
		"""{patch number: whether its step has every file BOOT_NEEDS names}
		(none of them is in the pristine base: the series creates them)."""
		have, out = set(), {}
		for p in patchset.patches_for('ours'):
			have |= set(patchset.diff_paths(p.diff_text()))
			out[p.number] = not seriessteps.boot_missing(have.__contains__)
		return out

	def test_boots_from_one_step_on(self):
		ok = self.bootable()
		first = min((n for n, b in ok.items() if b), default=None)
		self.assertIsNotNone(first, 'no step of the series creates '
				     f'{", ".join(seriessteps.BOOT_NEEDS)}')
		assert first is not None
		self.assertEqual([n for n, b in ok.items() if not b], list(range(1, first)))

	def test_what_it_needs_the_base_tree_has_too(self):
		# The base tree boots the same scenarios: BOOT_NEEDS names nothing
		# of ours alone.
		ok = self.bootable()
		first = next(p for p in patchset.patches_for('ours') if ok[p.number])
		self.assertIn('base', first.trees)


class MakeTarget(unittest.TestCase):
	def make_n(self, *args):
		r = subprocess.run(['make', '-n', '-C', str(workspace.REPO), 'series-steps', *args],
				   capture_output=True, text=True)
		self.assertEqual(r.returncode, 0, r.stderr)
		return r.stdout

	def test_boot_one_passes_the_steps_and_boot(self):
		out = self.make_n('BOOT=1', 'FIRST=10', 'LAST=11')
		self.assertIn('series steps --first 10 --last 11 --boot', out)

	def test_no_boot_by_default(self):
		self.assertNotIn('--boot', self.make_n())
		self.assertNotIn('--boot', self.make_n('BOOT=0'))


if __name__ == '__main__':
	unittest.main()


class StepFragment(unittest.TestCase):
	"""Early steps get the KUnit fragment without the symbols that later
	patches add."""

	FRAGMENT = ('# the test driver\nCONFIG_TEST_TIMERSTOP=y\nCONFIG_SMP=y\n'
		    '# CONFIG_TICK_BROADCAST_DEVICES_KUNIT_TEST is not set\n')

	def test_unknown_symbols_are_left_out(self):
		got = seriessteps.known_lines(self.FRAGMENT, {'SMP'})
		self.assertEqual(got, '# the test driver\nCONFIG_SMP=y\n')

	def test_known_symbols_are_kept(self):
		got = seriessteps.known_lines(self.FRAGMENT, {'SMP', 'TEST_TIMERSTOP',
							     'TICK_BROADCAST_DEVICES_KUNIT_TEST'})
		self.assertEqual(got, self.FRAGMENT)

	def test_symbols_come_from_the_trees_kconfig_files(self):
		with tempfile.TemporaryDirectory() as d:
			(Path(d) / 'drivers').mkdir()
			(Path(d) / 'Kconfig').write_text('config SMP\n\tbool "smp"\nmenuconfig NET\n')
			(Path(d) / 'drivers' / 'Kconfig.x').write_text('  config FOO_BAR\n# config NOT\n')
			(Path(d) / 'notes.txt').write_text('config NOPE\n')
			subprocess.run(['git', '-C', d, 'init', '-q'], check=True)
			subprocess.run(['git', '-C', d, 'add', '.'], check=True)
			self.assertEqual(seriessteps.defined_symbols(Path(d)), {'SMP', 'NET', 'FOO_BAR'})

	def test_a_patch_applied_for_the_proof_defines_its_symbols(self):
		# the proof applies the test patches to a checkout of the base:
		# the suites' new Kconfig must count
		with tempfile.TemporaryDirectory() as d:
			(Path(d) / 'Kconfig').write_text('config SMP\n')
			subprocess.run(['git', '-C', d, 'init', '-q'], check=True)
			subprocess.run(['git', '-C', d, 'add', '.'], check=True)
			diff = ('diff --git a/kernel/Kconfig b/kernel/Kconfig\nnew file mode 100644\n'
				'--- /dev/null\n+++ b/kernel/Kconfig\n@@ -0,0 +1 @@\n+config NEW_SUITE\n')
			seriessteps.apply_to(Path(d), patchset.Patch(1, 'suite', base=True), diff)
			self.assertEqual(seriessteps.defined_symbols(Path(d)), {'SMP', 'NEW_SUITE'})


class CheckRows(unittest.TestCase):
	"""make check runs the suites of every step that changes a source."""

	def test_documentation_and_maintainers_change_no_source(self):
		self.assertFalse(seriessteps.changes_source(
			['Documentation/timers/tick-broadcast.rst', 'MAINTAINERS']))

	def test_kernel_files_kconfig_and_makefiles_are_sources(self):
		for path in ('kernel/time/tick-broadcast.c', 'drivers/cpuidle/Kconfig',
			     'include/linux/tick.h', 'Documentation/Kconfig'):
			self.assertTrue(seriessteps.changes_source([path]), path)

	def test_a_failed_case_fails_the_step_and_is_named(self):
		rows: List[Row] = [Row('step/16-x/suite.a', Status.PASS, ''),
				   Row('step/16-x/suite.b', Status.FAIL, 'why b'),
				   Row('step/16-x/suite.c', Status.SKIP, '')]
		row = seriessteps.summary_row('16-x', rows, 40)
		name, st, detail = row.name, row.status, row.detail
		self.assertEqual((name, st), ('step/16-x/kunit', Status.FAIL))
		self.assertIn('1 passed, 1 failed, 1 skipped', detail)
		self.assertIn('suite.b', detail)
		self.assertIn('why b', detail)

	def test_passes_and_skips_pass(self):
		rows: List[Row] = [Row('step/16-x/suite.a', Status.PASS, ''),
				   Row('step/16-x/suite.c', Status.SKIP, '')]
		self.assertEqual(seriessteps.summary_row('16-x', rows, 40).status, Status.PASS)

	def test_a_run_without_results_fails(self):
		rows: List[Row] = [Row('step/16-x/run', Status.FAIL, 'kunit.py gave no results')]
		self.assertEqual(seriessteps.summary_row('16-x', rows, 40).status, Status.FAIL)
		self.assertEqual(seriessteps.summary_row('16-x', [], 40).status, Status.FAIL)


class AllFixed(unittest.TestCase):
	def test_passes_when_every_case_passes_and_every_fix_was_made(self):
		row = seriessteps.all_fixed_row('series/proof', set(), [])
		self.assertIs(row.status, Status.PASS)

	def test_fails_on_a_failing_case_or_a_fix_not_made(self):
		self.assertIs(seriessteps.all_fixed_row('p', {'kunit/x'}, []).status, Status.FAIL)
		unported: List[Row] = [Row('p/some-fix', Status.FAIL, 'not proven')]
		row = seriessteps.all_fixed_row('p', set(), unported)
		self.assertIs(row.status, Status.FAIL)
		self.assertIn('some-fix', row.detail)


class Pipeline(unittest.TestCase):
	"""check_rows: steps built two at a time, each in its own worktree,
	then tested one after the other; a failed build fails its step only."""

	def run_rows(self, names, broken=()):
		from unittest import mock
		calls: List[tuple] = []

		def build(wt, name, jobs):
			calls.append(('build', wt.name, name, jobs))
			return (1 if name in broken else 0), 10.0

		def run(wt, name):
			calls.append(('exec', wt.name, name))
			return [Row(f'step/{name}/suite.case', Status.PASS, '')], 2.0

		todo = [(f'c{i}', n) for i, n in enumerate(names)]
		skipped: List[Row] = [Row('step/00-docs/kunit', Status.SKIP, 'changes no source file')]
		with mock.patch.object(seriessteps, 'tested_steps', return_value=(todo, skipped)), \
		     mock.patch.object(seriessteps, 'steps_worktree',
				       side_effect=lambda w, p, n: Path('/nonexistent') / n), \
		     mock.patch.object(seriessteps, 'git'), \
		     mock.patch.object(seriessteps, 'seed_build'), \
		     mock.patch.object(seriessteps, 'log'), \
		     mock.patch.object(seriessteps.ws, 'unpack_pristine'), \
		     mock.patch.object(seriessteps.ws, 'workdir'), \
		     mock.patch.object(seriessteps.ws, 'make_errors', return_value=['error: x']), \
		     mock.patch.object(seriessteps, 'build_step', side_effect=build), \
		     mock.patch.object(seriessteps, 'exec_step', side_effect=run):
			rows = seriessteps.check_rows()
		return rows, calls

	def test_two_steps_build_side_by_side_in_two_worktrees(self):
		rows, calls = self.run_rows(['11-a', '12-b', '13-c'])
		builds = [c for c in calls if c[0] == 'build']
		self.assertEqual({c[1] for c in builds[:2]}, set(seriessteps.WORKTREES))
		half = max(1, workspace.JOBS // 2)
		self.assertEqual([c[3] for c in builds], [half, half, workspace.JOBS])
		# both builds of a pair come before either of its KUnit runs
		order = [c[0] for c in calls]
		self.assertEqual(order, ['build', 'build', 'exec', 'exec', 'build', 'exec'])
		self.assertEqual([r.name for r in rows],
				 ['step/00-docs/kunit', 'step/11-a/kunit', 'step/12-b/kunit',
				  'step/13-c/kunit'])
		self.assertTrue(all(r.status is Status.PASS for r in rows[1:]))

	def test_a_failed_build_fails_its_step_and_the_other_still_runs(self):
		rows, calls = self.run_rows(['11-a', '12-b'], broken={'11-a'})
		self.assertEqual([c[2] for c in calls if c[0] == 'exec'], ['12-b'])
		by = {r.name: r for r in rows}
		self.assertIs(by['step/11-a/kunit'].status, Status.FAIL)
		self.assertIn('error: x', by['step/11-a/kunit'].detail)
		self.assertIs(by['step/12-b/kunit'].status, Status.PASS)
