# SPDX-License-Identifier: GPL-2.0
"""workspace: kunit.py configs per tree, KUnit result parsing."""

import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import Any, List
from unittest import mock

import patchset
import kunitcmd
import workspace
from results import Row, Status
from tests import fixtures


class Configs(unittest.TestCase):
	def test_base_uses_its_own_kunitconfig(self):
		base = workspace.kunitconfigs('base')
		self.assertEqual(base[0], str(workspace.CONFIGS / 'base.kunitconfig'))
		self.assertNotIn('kernel/time/tests/.kunitconfig', base)
		self.assertIn(str(workspace.CONFIGS / 'x86_64.config'), base)

	def test_ours_uses_the_series_kunitconfig(self):
		ours = workspace.kunitconfigs('ours', 'debug')
		self.assertEqual(ours[0], 'kernel/time/tests/.kunitconfig')
		self.assertIn(str(workspace.CONFIGS / 'x86_64.config'), ours)
		self.assertEqual(ours[-1], str(workspace.CONFIGS / 'debug.config'))

	def test_variant_overrides_the_fragments_before_it(self):
		# kunit.py refuses two --kunitconfig fragments that disagree on a
		# symbol: acpi.config turns off the test driver x86_64.config turns on
		_, args = workspace.kunit_args('base', 'acpi')
		kunitconfigs = [args[i + 1] for i, a in enumerate(args) if a == '--kunitconfig']
		added = [args[i + 1] for i, a in enumerate(args) if a == '--kconfig_add']
		self.assertEqual(kunitconfigs, [str(workspace.CONFIGS / 'base.kunitconfig'),
						str(workspace.CONFIGS / 'x86_64.config')])
		self.assertIn('# CONFIG_TEST_TIMERSTOP is not set', added)
		self.assertIn('CONFIG_TEST_TIMERSTOP=y',
			      (workspace.CONFIGS / 'x86_64.config').read_text())
		_, args = workspace.kunit_args('ours', 'acpi')
		self.assertIn('CONFIG_ACPI_PROCESSOR=y', args)
		self.assertIn('--build_dir', args)
		self.assertEqual(args[args.index('--build_dir') + 1], '.build-x86_64-acpi')
		# no variant: fragments only
		_, args = workspace.kunit_args('ours')
		self.assertNotIn('--kconfig_add', args)

	def test_one_arm64_kernel_boots_both_drivers(self):
		# cpuidle-psci registers only with device-tree idle states, the
		# test driver only when enabled: no arm64 variant, no extra build
		import scenarios
		arm64 = (workspace.CONFIGS / 'arm64.config').read_text()
		self.assertIn('CONFIG_ARM_PSCI_CPUIDLE=y', arm64)
		self.assertIn('CONFIG_TEST_TIMERSTOP=y', arm64)
		self.assertEqual(scenarios.variants('arm64'), [''])
		self.assertIn('psci-hotplug', scenarios.names('arm64', ''))

	def test_configs_name_existing_symbols_only(self):
		# The bench suite's symbol is ..._BENCH_KUNIT_TEST now.
		for f in workspace.CONFIGS.iterdir():
			for line in f.read_text().splitlines():
				self.assertNotRegex(line, r'^CONFIG_TICK_BROADCAST_BENCH_KUNIT=', f.name)
		base = (workspace.CONFIGS / 'base.kunitconfig').read_text()
		for sym in ('CONFIG_KUNIT=y', 'CONFIG_TICK_BROADCAST_LIVE_KUNIT_TEST=y',
			    'CONFIG_TICK_BROADCAST_BENCH_KUNIT_TEST=y'):
			self.assertIn(sym, base)
		# the base has no decision core: none of its suites may be asked for
		self.assertNotIn('CORE_KUNIT_TEST', base)
		self.assertNotIn('TRACE_KUNIT_TEST', base)


class KunitRows(unittest.TestCase):
	def test_base_failures_a_fix_names_are_expected(self):
		known = {'devices_a': 'fix-a', 'devices_p': 'fix-p'}
		rows = workspace.known_failures([
			Row('kunit/base/tick_broadcast_devices.devices_a', Status.FAIL, 'why'),
			Row('kunit/base/tick_broadcast_devices.devices_b', Status.FAIL, 'why'),
			Row('kunit/base/devices_p.oneshot device', Status.FAIL, 'why'),
			Row('kunit/base/devices_p.periodic device', Status.PASS, ''),
		], known)
		self.assertEqual([r.status for r in rows],
				 [Status.XFAIL, Status.FAIL, Status.XFAIL, Status.XPASS])
		self.assertIn('fix-a', rows[0].detail)
		self.assertTrue(rows[0].detail.endswith('; this run: why'), rows[0].detail)
		# a known failure that passed says so
		self.assertIn('expected to fail', rows[3].detail)
		self.assertIn('fix-p', rows[3].detail)
		# every case the series list names is a case of the devices suite
		src = (workspace.REPO / 'kernel/time/tests/tick_broadcast_devices_kunit.c').read_text()
		for case in patchset.known_base_failures():
			self.assertIn(f'{case}(', src)

	def test_recorded_results(self):
		js = (fixtures.FIXTURES / 'kunit-ours.json').read_text()
		log = (fixtures.FIXTURES / 'kunit-ours.log').read_text()
		rows = workspace.kunit_rows(js, log, 'kunit/ours')
		self.assertTrue(rows)
		self.assertTrue(all(r.name.startswith('kunit/ours/tick_broadcast') for r in rows))
		self.assertEqual({r.status for r in rows} - {Status.PASS, Status.SKIP,
							      Status.FAIL}, set())
		suites = {r.name.split('/')[2].split('.')[0] for r in rows}
		self.assertLessEqual({'tick_broadcast_live', 'tick_broadcast_core',
				      'tick_broadcast_trace', 'tick_broadcast_bench'}, suites)
		# the bench cases skip unless make bench sets their loops
		self.assertEqual({r.status for r in rows if 'bench' in r.name}, {Status.SKIP})
		self.assertEqual({r.status for r in rows if 'bench' not in r.name}, {Status.PASS})

	def test_failed_case_gets_its_message(self):
		doc = {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
			{'name': 'tick_broadcast_live', 'test_cases': [
				{'name': 'enter_exit', 'status': 'FAIL'},
				{'name': 'masks', 'status': 'PASS'},
				{'name': 'nodev', 'status': 'SKIP'}], 'sub_groups': []}]}
		log = ('    # enter_exit: EXPECTATION FAILED at kernel/time/tests/x.c:12\n'
		       '    Expected a == b, but\n        a == 1\n')
		rows = workspace.kunit_rows(json.dumps(doc), log, 'kunit/base')
		self.assertEqual([(r.name, r.status) for r in rows], [
			('kunit/base/tick_broadcast_live.enter_exit', Status.FAIL),
			('kunit/base/tick_broadcast_live.masks', Status.PASS),
			('kunit/base/tick_broadcast_live.nodev', Status.SKIP)])
		self.assertIn('EXPECTATION FAILED', rows[0].detail)

	def test_failed_parameter_gets_its_case_message(self):
		doc = {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
			{'name': 'devices_switch', 'test_cases': [
				{'name': 'oneshot device', 'status': 'PASS'},
				{'name': 'periodic device', 'status': 'FAIL'}], 'sub_groups': []}]}
		log = ('[13:00:00] === devices_switch ===\n'
		       '[13:00:00] [PASSED] oneshot device\n'
		       '[13:00:00]     # devices_switch: EXPECTATION FAILED at x.c:12\n'
		       '[13:00:00]     Expected a == b, but\n'
		       '[13:00:00]         a == 1\n'
		       '[13:00:00] [FAILED] periodic device\n')
		rows = workspace.kunit_rows(json.dumps(doc), log, 'kunit/ours')
		self.assertEqual([(r.name, r.status) for r in rows], [
			('kunit/ours/devices_switch.oneshot device', Status.PASS),
			('kunit/ours/devices_switch.periodic device', Status.FAIL)])
		self.assertIn('EXPECTATION FAILED at x.c:12', rows[1].detail)
		self.assertNotIn('FAILED', rows[0].detail)

	def test_no_results_is_a_failure(self):
		rows = workspace.kunit_rows('', 'kernel panic', 'kunit/ours', '/x')
		self.assertEqual((rows[0].name, rows[0].status), ('kunit/ours/run', Status.FAIL))


class Bases(unittest.TestCase):
	"""6.12 and 6.1, each unpacked once into its own directory."""

	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		self.root = Path(self.tmp.name)
		versions = {'6.12': '6.12.118-1~deb12u1', '6.1': '6.1.192-3'}
		bases = {}
		for name, ver in versions.items():
			top = self.root / 'src' / f'linux-source-{name}'
			top.mkdir(parents=True)
			(top / 'Makefile').write_text(f'VERSION = 6\nPATCHLEVEL = {name[2:]}\n'
						      f'SUBLEVEL = {ver.split(".")[2].split("-")[0]}\n')
			tarball = self.root / f'linux-source-{name}.tar.xz'
			subprocess.run(['tar', '-cJf', str(tarball), '-C', str(top.parent), top.name],
				       check=True)
			bases[name] = workspace.Base(name, f'linux-source-{name}', tarball)
		patches: List[Any] = [
			mock.patch.object(workspace, 'CACHE', self.root / 'cache'),
			mock.patch.object(workspace, 'BASES', bases),
			mock.patch.object(workspace, 'base_version',
					  lambda base='6.12': versions[base].replace('~', '_')),
			mock.patch.object(workspace, 'log', lambda *a: None)]
		for p in patches:
			p.start()
			self.addCleanup(p.stop)

	def test_the_default_base_is_6_12(self):
		self.assertEqual(workspace.DEFAULT_BASE, '6.12')
		self.assertEqual(workspace.pristine_dir(), workspace.pristine_dir('6.12'))

	def test_each_base_is_unpacked_once_into_its_own_directory(self):
		old = workspace.unpack_pristine('6.1')
		new = workspace.unpack_pristine()
		self.assertEqual(old, self.root / 'cache/linux-6.1.192-3/pristine')
		self.assertEqual(new, self.root / 'cache/linux-6.12.118-1_deb12u1/pristine')
		self.assertEqual(workspace.kernel_version(old), '6.1.192')
		self.assertEqual(workspace.kernel_version(new), '6.12.118')
		# cached: no tarball needed the second time
		workspace.BASES['6.1'].tarball.unlink()
		self.assertEqual(workspace.unpack_pristine('6.1'), old)

	def test_an_unknown_base_is_refused_by_name(self):
		err = io.StringIO()
		with contextlib.redirect_stderr(err), self.assertRaises(SystemExit):
			workspace.unpack_pristine('5.10')
		self.assertIn('"5.10"', err.getvalue())
		self.assertIn('6.12, 6.1', err.getvalue())


class DebianBases(unittest.TestCase):
	def test_both_packages_are_dependencies(self):
		self.assertEqual(list(workspace.BASES), ['6.12', '6.1'])
		for name in ('6.12', '6.1'):
			tarball = f'/usr/src/linux-source-{name}.tar.xz'
			self.assertEqual(str(workspace.BASES[name].tarball), tarball)
			self.assertEqual(workspace.DEPENDS[tarball], f'linux-source-{name}')


class SeededBuilds(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.root = Path(self.tmp.name)
		patches: List[Any]	# mock's patchers, of several types
		patches = [mock.patch.object(workspace, 'tree_dir', lambda t: self.root / t),
			   mock.patch.object(workspace, 'unpack_pristine', lambda: self.root),
			   mock.patch.object(workspace, 'desired_files',
					     lambda t, p: {'kernel/time/tick-broadcast.c': b''}),
			   mock.patch.object(workspace, 'log', lambda *a: None)]
		for p in patches:
			p.start()
			self.addCleanup(p.stop)
		self.addCleanup(self.tmp.cleanup)

	def test_base_starts_from_ours_with_the_series_files_touched(self):
		ours = self.root / 'ours' / '.build-x86_64'
		(ours / 'arch/x86/boot').mkdir(parents=True)
		(ours / 'arch/x86/boot/bzImage').write_text('ours')
		src = self.root / 'base' / 'kernel/time/tick-broadcast.c'
		src.parent.mkdir(parents=True)
		src.write_text('base')
		os.utime(src, (1, 1))
		workspace.seed_build_dir('base')
		self.assertTrue((self.root / 'base/.build-x86_64/arch/x86/boot/bzImage').exists())
		# newer than every object copied, so kbuild recompiles it
		self.assertGreater(src.stat().st_mtime, 1000)

	def test_nothing_to_start_from(self):
		workspace.seed_build_dir('base')
		self.assertFalse((self.root / 'base/.build-x86_64').exists())

	def test_image_of_the_wrong_tree_fails(self):
		for tree, text in (('ours', 'ffff T tick_bc_exit\n'),
				   ('base', 'ffff T tick_bc_init\n')):
			smap = self.root / tree / '.build-x86_64' / 'System.map'
			smap.parent.mkdir(parents=True)
			smap.write_text(text)
			with self.assertRaises(workspace.Failed):
				workspace.check_image_tree(tree)
			smap.write_text('ffff T tick_bc_init\n' if tree == 'ours' else text[:-5] + 'xit\n')
			workspace.check_image_tree(tree)

	def configure(self, rc):
		calls = []

		def run_logged(cmd, logfile, what, cwd=None, env=None):
			calls.append((cmd, logfile, cwd))
			return rc, 1.0
		with mock.patch.object(workspace, 'run_logged', run_logged), \
		     mock.patch.object(workspace, 'prepare_tree', lambda t: self.root / t):
			return workspace.configure('ours'), calls

	def test_configure_is_kunit_py_config_in_the_tree(self):
		cfg, calls = self.configure(0)
		self.assertEqual(cfg, self.root / 'ours/.build-x86_64/.config')
		self.assertEqual(cfg, workspace.config_path('ours'))
		[(cmd, logfile, cwd)] = calls
		self.assertEqual(cmd[2], 'config')
		self.assertIn('kernel/time/tests/.kunitconfig', cmd)
		self.assertEqual(logfile.name, 'build-ours.config.log')
		self.assertEqual(cwd, self.root / 'ours')

	def test_configure_that_fails_raises(self):
		with self.assertRaises(workspace.Failed):
			self.configure(1)

	def test_make_errors_are_the_last_error_lines(self):
		log = self.root / 'make.log'
		log.write_text('  CC a.o\na.c:1:2: error: x\n  CC b.o\nmake[1]: *** [b.o] Error 1\n'
			       + ''.join(f'c{i}.c:1: error: y\n' for i in range(20)))
		errors = workspace.make_errors(log)
		self.assertEqual(len(errors), 15)
		self.assertEqual(errors[-1], 'c19.c:1: error: y')
		self.assertEqual(workspace.make_errors(log, 30)[:2],
				 ['a.c:1:2: error: x', 'make[1]: *** [b.o] Error 1'])


class KunitCommand(unittest.TestCase):
	def test_kunit_py_command_lines_are_built_in_one_place(self):
		for f in sorted(workspace.TOOLS.glob('*.py')):
			if f.name != 'kunitcmd.py':
				self.assertFalse('kunit/kunit.py' in f.read_text(), f.name)

	def test_every_boot_keeps_off_the_tsc_and_ends_at_a_panic(self):
		x86 = ' '.join(kunitcmd.boot_args('x86_64'))
		self.assertIn('--kernel_args tsc=unstable', x86)
		self.assertIn('--kernel_args panic=1', x86)
		self.assertIn('--kernel_args panic=1', ' '.join(kunitcmd.boot_args('arm64')))
		self.assertIn('-smp 4 -icount', ' '.join(kunitcmd.boot_args('x86_64', ['-icount'])))

	def test_x86_boots_probe_no_ps2_port_that_could_print_into_the_ktap(self):
		x86 = ' '.join(kunitcmd.boot_args('x86_64'))
		self.assertIn('--kernel_args i8042.nokbd', x86)
		self.assertIn('--kernel_args i8042.noaux', x86)
