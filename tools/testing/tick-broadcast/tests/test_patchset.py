# SPDX-License-Identifier: GPL-2.0
"""patchset: the series list and its patch files; stackgit's trailers."""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path

import patchset
import stackgit
from progress import Failed

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


MAIL = '''From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor
 <a@example.org>
Date: Sat, 5 Dec 2026 08:32:46 +0000
Subject: [PATCH] tick/broadcast: Do a thing that needs a long subject
 line

Because.

Fixes: 123456789abc ("x")
---
 kernel/old.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

''' + CHANGE + '''-- 
2.39.5
'''


class Stack(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.pristine = Path(self.tmp.name)
		(self.pristine / 'kernel').mkdir()
		(self.pristine / 'kernel' / 'old.c').write_text('one\ntwo\nthree\nfour\n')

	def tearDown(self):
		self.tmp.cleanup()

	def test_series_list(self):
		p = patchset.parse_series('# x\n\na.patch\t# base\nb.patch # fix case=c1 case=c2\n')
		self.assertEqual([(q.number, q.slug, q.trees, q.fix, q.cases) for q in p],
				 [(1, 'a', ('ours', 'base'), False, ()),
				  (2, 'b', ('ours',), True, ('c1', 'c2'))])
		self.assertEqual(patchset.parse_series(p[1].series_line())[0].cases, ('c1', 'c2'))
		for bad in ('a\n', 'a.patch # mine\n', 'a.patch # case=x\n', 'a.patch b.patch\n',
			    'a.patch\na.patch # base\n', 'A_b.patch\n'):
			with self.assertRaises(patchset.SeriesError, msg=bad):
				patchset.parse_series(bad)

	def test_mail(self):
		m = patchset.parse_mail(MAIL)
		self.assertEqual(m.author, 'A U Thor <a@example.org>')
		self.assertEqual(m.subject, 'tick/broadcast: Do a thing that needs a long subject line')
		self.assertEqual(m.body, 'Because.\n\nFixes: 123456789abc ("x")\n')
		self.assertEqual(m.diff, CHANGE)

	def test_apply_new_change_delete(self):
		state: patchset.FileState = {}
		patchset.apply_diff(NEW, state, self.pristine)
		patchset.apply_diff(CHANGE, state, self.pristine)
		self.assertEqual(state['kernel/new.c'], b'int a;\nint b;\n')
		self.assertEqual(state['kernel/old.c'], b'one\ntwo\nTHREE\nfour\n')
		patchset.apply_diff(GONE, state, self.pristine)
		self.assertIsNone(state['kernel/new.c'])
		self.assertEqual(patchset.diff_paths(NEW + CHANGE), ['kernel/new.c', 'kernel/old.c'])

	def test_offsets_apply_and_fuzz_does_not(self):
		state: patchset.FileState = {'kernel/old.c': b'zero\none\ntwo\nthree\nfour\n'}
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

	def test_every_patch_has_a_changelog_and_a_diff(self):
		for p in patchset.load():
			subject, body = p.message()
			self.assertTrue(subject and body.strip() and p.diff_text(), p.slug)

	def test_base_patches_are_test_tooling(self):
		for p in patchset.patches_for('base'):
			for path in patchset.diff_paths(p.diff_text()):
				self.assertNotRegex(path, r'tick-broadcast-core|tick-broadcast-trace',
						    f'{p.slug} gives the base our code')

	def test_fixes_come_before_everything_but_themselves(self):
		patches = patchset.load()
		first_other = next((p.number for p in patches if not p.fix), len(patches) + 1)
		self.assertTrue(all(p.number < first_other for p in patches if p.fix))


class Trailer(unittest.TestCase):
	def test_slug(self):
		self.assertEqual(stackgit.slugify('tick/broadcast: Send the IPIs after unlock'),
				 'send-the-ipis-after-unlock')

	def test_trailer_names_the_patch_and_comes_out_again(self):
		p = patchset.Patch(3, 'fix-it', False, True, ('c',))
		line = stackgit.trailer(p)
		self.assertEqual(line, 'Tb-Patch: fix-it fix case=c')
		for msg in ('s\n\nbody\n', 's\n\nbody\n\nFixes: 1234 ("x")\n'):
			with_it = stackgit.with_trailer(msg, line)
			self.assertIn('\n' + line + '\n', with_it)
			self.assertEqual(stackgit.without_trailer(with_it), (msg, line.split(': ', 1)[1]))
		self.assertIn('("x")\nTb-Patch', stackgit.with_trailer('s\n\nb\n\nFixes: 1 ("x")', line))


class FormatCommit(unittest.TestCase):
	def test_a_diff_that_ends_in_a_blank_context_line_applies(self):
		"""git diff ends such a hunk with a line of one space: the
		stored patch must keep it, or git apply calls it corrupt."""
		with tempfile.TemporaryDirectory() as d:
			def git(*args):
				subprocess.run(['git', '-C', d] + list(args), check=True, capture_output=True,
					       env=stackgit.fixed_env())
			f = Path(d) / 'a.c'
			f.write_text('int a;\nint b;\nint c;\n\nint d;\n')
			git('init', '-q')
			git('add', 'a.c')
			git('commit', '-q', '-m', 'one')
			f.write_text('int a2;\nint b;\nint c;\n\nint d;\n')
			git('commit', '-q', '-a', '-m', 'x: Two\n\nBody.\n\nTb-Patch: two base')
			[(p, text)] = stackgit.read_branch(Path(d), 'HEAD', 'HEAD^')
			self.assertEqual((p.slug, p.base), ('two', True))
			self.assertNotIn('Tb-Patch', text)
			mail = patchset.parse_mail(text)
			self.assertEqual((mail.subject, mail.body), ('x: Two', 'Body.\n'))
			self.assertTrue(mail.diff.endswith('\n \n'), repr(mail.diff[-20:]))
			git('checkout', '-q', 'HEAD^')
			r = subprocess.run(['git', '-C', d, 'am', '-q'], input=text, text=True,
					   capture_output=True, env=stackgit.fixed_env())
			self.assertEqual(r.returncode, 0, r.stderr)


class RoundTrip(unittest.TestCase):
	"""A commit written as a patch file and committed again gives the
	same file: author (not ASCII), date, changelog and trailers kept."""

	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.d = Path(self.tmp.name)
		(self.d / 'a.c').write_text('int a;\n')
		stackgit.git(self.d, 'init', '-q')
		stackgit.git(self.d, 'add', 'a.c')
		stackgit.git(self.d, 'commit', '-q', '-m', 'base')
		stackgit.git(self.d, 'tag', stackgit.BASE_TAG)

	def tearDown(self):
		self.tmp.cleanup()

	def commit(self, message):
		(self.d / 'a.c').write_text((self.d / 'a.c').read_text() + 'int b;\n')
		env = stackgit.fixed_env(GIT_AUTHOR_NAME='J\u00f6rg R\u00f6del',
					 GIT_AUTHOR_EMAIL='joro@example.org',
					 GIT_AUTHOR_DATE='Mon, 7 Dec 2026 10:00:00 +0100')
		stackgit.git(self.d, 'commit', '-q', '-a', '-F', '-', input=message, env=env)

	def test_the_same_file_again(self):
		self.commit('x: Add b\n\nBody.\n\nFixes: 123456789abc ("y")\nTb-Patch: add-b fix\n')
		[(p, text)] = stackgit.read_branch(self.d, 'HEAD')
		self.assertEqual((p.slug, p.fix), ('add-b', True))
		mail = patchset.parse_mail(text)
		self.assertEqual(mail.author, 'J\u00f6rg R\u00f6del <joro@example.org>')
		self.assertEqual(mail.body, 'Body.\n\nFixes: 123456789abc ("y")\n')
		stackgit.commit_stack(self.d, 'again', [(p, mail)], trailers=True)
		self.assertEqual(stackgit.read_branch(self.d, 'again'), [(p, text)])

	def test_two_patches_squashed_into_one_commit_are_refused(self):
		self.commit('x: Add b\n\nTb-Patch: add-b\n\nx: Add c\n\nTb-Patch: add-c fix\n')
		with self.assertRaisesRegex(Failed, 'more than one patch'):
			stackgit.read_branch(self.d, 'HEAD')

	def test_a_changelog_line_git_am_would_cut_at_is_refused(self):
		self.commit('x: Add b\n\nBefore.\n---\nAfter.\n')
		with self.assertRaisesRegex(Failed, '---'):
			stackgit.read_branch(self.d, 'HEAD')


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

	def test_the_fixes_are_listed_by_their_reach(self):
		patches = [p for p in patchset.patches_for('ours') if p.fix]
		body = patchset.cover_list(patches)
		for p in patches:
			title = dict(patchset.COVER_GROUPS)[patchset.fix_group(p)]
			section = body.split(title, 1)[1].split('\n\n', 1)[0]
			self.assertIn(p.message()[0], section, p.slug)

	def test_the_fixes_cover_lists_only_fixes(self):
		patches = [p for p in patchset.patches_for('ours') if p.fix]
		subject, body = self.check_list(patches)
		self.assertNotIn('The rewrite:', body)
		self.assertNotEqual(subject, patchset.cover_message(patchset.patches_for('ours'))[0])


class Changelogs(unittest.TestCase):
	def test_fixes_say_what_reaches_them(self):
		# stable takes a fix of a bug a user can hit, with the commit that
		# introduced it; a fix of a bug nothing reaches is hardening
		for p in patchset.load():
			if not p.fix:
				continue
			body = p.message()[1]
			group = patchset.fix_group(p)
			if group == 'stable':
				self.assertRegex(body, r'(?m)^Fixes: [0-9a-f]{12} \("', p.slug)
				self.assertNotIn(patchset.NO_CALLER, ' '.join(body.split()), p.slug)

	def test_body_lines_fit_checkpatch(self):
		# checkpatch's COMMIT_LOG_LONG_LINE, seconds before make check runs it
		for p in patchset.load():
			for line in p.message()[1].splitlines():
				if not re.match(r'(Fixes|Link|Closes): ', line):
					self.assertLessEqual(len(line), 75, f'{p.slug}.patch: {line}')
