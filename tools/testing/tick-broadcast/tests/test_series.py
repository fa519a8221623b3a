# SPDX-License-Identifier: GPL-2.0
"""series: the base's own warnings are known at every step, wherever they move."""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import backport
import patchset
import series
import workspace
from results import Status


class MessageKey(unittest.TestCase):
	def test_a_warning_that_moved_is_the_same(self):
		a = ("../kernel/time/tick-broadcast.c:1034: warning: Function parameter or struct "
		     "member 'bc' not described in 'tick_broadcast_setup_oneshot'")
		b = a.replace('../', '').replace(':1034:', ':1071:')
		self.assertEqual(series.message_key(a), series.message_key(b))

	def test_another_warning_is_not(self):
		a = "kernel/time/tick-broadcast.c:12:5: warning: no previous prototype for 'f'"
		b = "kernel/time/tick-broadcast.c:12:5: warning: no previous prototype for 'g'"
		self.assertNotEqual(series.message_key(a), series.message_key(b))
		self.assertNotEqual(series.message_key(a),
				    series.message_key(a.replace('tick-broadcast.c', 'tick-sched.c')))


class OtherBase(unittest.TestCase):
	def test_the_fixes_for_another_base_go_to_their_own_directory(self):
		self.assertEqual(series.outdir_of(workspace, 'all'), workspace.CACHE / 'series')
		self.assertEqual(series.outdir_of(workspace, 'fixes', '6.12'),
				 workspace.CACHE / 'series-fixes')
		self.assertEqual(series.outdir_of(workspace, 'fixes', '6.1'),
				 workspace.CACHE / 'series-fixes-6.1')

	def test_make_series_passes_the_base(self):
		import subprocess
		r = subprocess.run(['make', '-n', '-C', str(workspace.REPO), 'series', 'PART=fixes',
				    'BASE=6.1'], capture_output=True, text=True)
		self.assertRegex(r.stdout, r'series --part fixes --kernel 6\.1\b')
		r = subprocess.run(['make', '-n', '-C', str(workspace.REPO), 'series'],
				   capture_output=True, text=True)
		self.assertNotIn('--kernel', r.stdout)


class FixesBuild(unittest.TestCase):
	def test_files_set_leave_their_pristine_twins_alone(self):
		with tempfile.TemporaryDirectory() as tmp:
			pristine, tree = Path(tmp) / 'p', Path(tmp) / 't'
			(pristine / 'k').mkdir(parents=True)
			(tree / 'k').mkdir(parents=True)
			for name in ('a.c', 'b.c', 'gone.c'):
				(pristine / 'k' / name).write_text(f'pristine {name}\n')
				os.link(pristine / 'k' / name, tree / 'k' / name)
			series.set_files(tree, {'k/a.c': b'fixed\n', 'k/b.c': b'pristine b.c\n',
						'k/gone.c': None, 'k/new.c': b'new\n'})
			self.assertEqual((tree / 'k/a.c').read_bytes(), b'fixed\n')
			self.assertEqual((pristine / 'k/a.c').read_bytes(), b'pristine a.c\n')
			self.assertFalse((tree / 'k/gone.c').exists())
			self.assertTrue((pristine / 'k/gone.c').exists())
			self.assertEqual((tree / 'k/new.c').read_bytes(), b'new\n')
			# unchanged: not rewritten, so kbuild has nothing to rebuild
			self.assertTrue((tree / 'k/b.c').samefile(pristine / 'k/b.c'))
			series.set_files(tree, {'k/a.c': b'pristine a.c\n'})
			self.assertEqual((pristine / 'k/a.c').read_bytes(), b'pristine a.c\n')

	def test_a_fix_that_cannot_be_made_fails_and_skips_the_build(self):
		def fail(*args, **kw):
			raise patchset.SeriesError('fix some-fix does not apply alone to 6.1')
		with mock.patch.object(backport, 'port_fixes', fail), \
				mock.patch.object(workspace, 'unpack_pristine',
						  lambda base='6.12': Path('/nonexistent')):
			rows = series.other_base_rows(workspace, '6.1')
		self.assertEqual([(r.name, r.status) for r in rows],
				 [('series/6.1/fixes', Status.FAIL), ('series/6.1/build', Status.SKIP)])
		self.assertIn('some-fix', rows[0].detail)

	def test_make_check_builds_the_fixes_on_every_other_base(self):
		import check
		asked = []

		def other(ws, base):
			asked.append(base)
			return [series.row(f'series/{base}/build', True)]
		with mock.patch.object(series, 'other_base_rows', other), \
				mock.patch.object(series, 'check_rows', lambda ws, steps: []), \
				mock.patch.object(check.configbuilds, 'rows', lambda *a: []), \
				mock.patch.object(check.configbuilds, 'htmldocs',
						  lambda *a: series.row('docs', True)), \
				mock.patch.object(check.patchset, 'tree_files', lambda *a, **k: {}), \
				mock.patch.object(check, 'log', lambda *a: None), \
				mock.patch.object(workspace, 'unpack_pristine', lambda: Path('/x')):
			got = check.series_checks()
			quick = check.series_checks(quick=True)
		self.assertEqual(asked, ['6.1'])
		self.assertIn('series/6.1/build', [r.name for r in got])
		self.assertEqual(quick, [])

if __name__ == '__main__':
	unittest.main()
