# SPDX-License-Identifier: GPL-2.0
"""patchset: the series as a stack of diffs; seriesedit's pure parts."""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path

import patchset
import seriesedit

NEW = '''diff --git a/kernel/new.c b/kernel/new.c
new file mode 100644
--- /dev/null
+++ b/kernel/new.c
@@ -0,0 +1,2 @@
+int a;
+int b;
'''

CHANGE = '''diff --git a/kernel/old.c b/kernel/old.c
--- a/kernel/old.c
+++ b/kernel/old.c
@@ -2,3 +2,3 @@
 two
-three
+THREE
 four
'''

GONE = '''diff --git a/kernel/new.c b/kernel/new.c
deleted file mode 100644
--- a/kernel/new.c
+++ /dev/null
@@ -1,2 +0,0 @@
-int a;
-int b;
'''


class Stack(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.pristine = Path(self.tmp.name)
		(self.pristine / 'kernel').mkdir()
		(self.pristine / 'kernel' / 'old.c').write_text('one\ntwo\nthree\nfour\n')

	def tearDown(self):
		self.tmp.cleanup()

	def test_conf(self):
		p = patchset.parse_conf('# x\npatch a ours base\npatch b ours fix\n')
		self.assertEqual([(q.number, q.slug, q.trees, q.fix) for q in p],
				 [(1, 'a', ('ours', 'base'), False), (2, 'b', ('ours',), True)])
		self.assertEqual(patchset.parse_conf(p[1].conf_line())[0].fix, True)
		for bad in ('patch a\n', 'patch a mine\n', 'patch a ours later\n', 'file x\n',
			    'patch a ours\npatch a base\n'):
			with self.assertRaises(patchset.SeriesError, msg=bad):
				patchset.parse_conf(bad)

	def test_apply_new_change_delete(self):
		state = {}
		patchset.apply_diff(NEW, state, self.pristine)
		patchset.apply_diff(CHANGE, state, self.pristine)
		self.assertEqual(state['kernel/new.c'], b'int a;\nint b;\n')
		self.assertEqual(state['kernel/old.c'], b'one\ntwo\nTHREE\nfour\n')
		patchset.apply_diff(GONE, state, self.pristine)
		self.assertIsNone(state['kernel/new.c'])
		self.assertEqual(patchset.diff_paths(NEW + CHANGE), ['kernel/new.c', 'kernel/old.c'])

	def test_offsets_apply_and_fuzz_does_not(self):
		state = {'kernel/old.c': b'zero\none\ntwo\nthree\nfour\n'}
		patchset.apply_diff(CHANGE, state, self.pristine)
		self.assertEqual(state['kernel/old.c'], b'zero\none\ntwo\nTHREE\nfour\n')
		state = {'kernel/old.c': b'one\ntwo\nthree\nFOUR\n'}
		with self.assertRaises(patchset.SeriesError):
			patchset.apply_diff(CHANGE, state, self.pristine)

	def test_own_files(self):
		state = {'kernel/new.c': b'x', 'kernel/old.c': b'y', 'kernel/gone.c': None}
		self.assertEqual(patchset.own_files(self.pristine, state), ['kernel/new.c'])
		own = patchset.OWN_FILES[0]
		self.assertEqual(patchset.own_files(self.pristine, {own: b'z'}), [own])


class Series(unittest.TestCase):
	"""The repository's own series."""

	def test_every_patch_has_a_diff_and_a_changelog(self):
		for p in patchset.load():
			self.assertTrue(p.diff.exists(), p.slug)
			subject, body = p.message()
			self.assertTrue(subject and body.strip(), p.slug)

	def test_base_patches_are_test_tooling(self):
		for p in patchset.patches_for('base'):
			for path in patchset.diff_paths(p.diff_text()):
				self.assertNotRegex(path, r'tick-broadcast-core|tick-broadcast-(stats|trace)',
						    f'{p.slug} gives the base our code')

	def test_fixes_come_before_everything_but_themselves(self):
		patches = patchset.load()
		first_other = next((p.number for p in patches if not p.fix), len(patches) + 1)
		self.assertTrue(all(p.number < first_other for p in patches if p.fix))


class EditTrailer(unittest.TestCase):
	def test_slug(self):
		self.assertEqual(seriesedit.slugify('tick/broadcast: Send the IPIs after unlock'),
				 'send-the-ipis-after-unlock')

	def test_trailer_names_the_patch(self):
		p = patchset.Patch(3, 'fix-it', ('ours',), True)
		line = seriesedit.trailer(p)
		self.assertEqual(line, 'Tb-Patch: fix-it ours fix\n')
		q = patchset.parse_conf('patch ' + line.split(': ', 1)[1])[0]
		self.assertEqual((q.slug, q.trees, q.fix), ('fix-it', ('ours',), True))


class ReadCommit(unittest.TestCase):
	def test_a_diff_that_ends_in_a_blank_context_line_applies(self):
		"""git diff ends such a hunk with a line of one space: the
		saved diff must keep it, or git apply calls it corrupt."""
		with tempfile.TemporaryDirectory() as d:
			def git(*args):
				subprocess.run(['git', '-C', d, '-c', 'user.name=t', '-c', 'user.email=t@t']
					       + list(args), check=True, capture_output=True)
			f = Path(d) / 'a.c'
			f.write_text('int a;\nint b;\nint c;\n\nint d;\n')
			git('init', '-q')
			git('add', 'a.c')
			git('commit', '-q', '-m', 'one')
			f.write_text('int a2;\nint b;\nint c;\n\nint d;\n')
			git('commit', '-q', '-a', '-m', 'two\n\nTb-Patch: two ours')
			p, body, diff = seriesedit.read_commit(Path(d), 'HEAD')
			self.assertTrue(diff.endswith('\n \n'), repr(diff[-20:]))
			git('checkout', '-q', 'HEAD^')
			r = subprocess.run(['git', '-C', d, 'apply', '--check', '-'], input=diff,
					   text=True, capture_output=True)
			self.assertEqual(r.returncode, 0, r.stderr)
			self.assertEqual((p.slug, body), ('two', 'two\n'))


class Cover(unittest.TestCase):
	def check_list(self, patches):
		subject, body = patchset.cover_message(patches)
		self.assertNotIn(patchset.COVER_LIST, body)
		numbered = re.findall(r'^ +(\d+) (\S.*)$', body, re.M)
		# every patch, in order, numbered as git format-patch numbers them
		self.assertEqual(numbered, [(str(n), p.message()[0])
					    for n, p in enumerate(patches, 1)])
		for p in patches:
			for c in p.cases:
				self.assertIn(f'case {c}\n', body)
		return subject, body

	def test_the_series_cover_lists_every_patch(self):
		patches = patchset.patches_for('ours')
		subject, body = self.check_list(patches)
		fixes = body.split('Test tooling')[0]
		self.assertEqual(len(re.findall(r'^ +\d+ ', fixes, re.M)),
				 sum(p.fix for p in patches))

	def test_the_fixes_cover_lists_only_fixes(self):
		patches = [p for p in patchset.patches_for('ours') if p.fix]
		subject, body = self.check_list(patches)
		self.assertNotIn('The rewrite:', body)
		self.assertNotEqual(subject, patchset.cover_message(patchset.patches_for('ours'))[0])


class Changelogs(unittest.TestCase):
	def test_body_lines_fit_checkpatch(self):
		# checkpatch's COMMIT_LOG_LONG_LINE, seconds before make check runs it
		for p in patchset.load():
			for line in p.message()[1].splitlines():
				if not re.match(r'(Fixes|Link|Closes): ', line):
					self.assertLessEqual(len(line), 75, f'{p.slug}.msg: {line}')
