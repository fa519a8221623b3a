# SPDX-License-Identifier: GPL-2.0
"""absorb: edits at kernel paths go to the patch that last touched the
lines, or nowhere, with the reason. On small series of their own."""

import tempfile
import unittest
from pathlib import Path
from typing import Callable, List, Optional, Tuple
from unittest import mock

import absorb
import patchset
import stackgit
from progress import Failed

OWN = 'kernel/time/tick-broadcast.c'
NEW = 'kernel/time/new.c'
LINES = [f'l{n}' for n in range(1, 13)]
AUTHOR = 'A U Thor <a@example.org>'
DATE = 'Mon, 7 Dec 2026 10:00:00 +0100'

# (slug, words of the series list, what it does to OWN's lines, NEW's text)
Step = Tuple[str, str, Callable[[List[str]], None], Optional[str]]


def slug(t: absorb.Target) -> str:
	assert t.patch
	return t.patch.slug


def text(lines):
	return ''.join(f'{x}\n' for x in lines)


def setl(i, v):
	def f(own):
		own[i] = v
	return f


def steps_of(*fs):
	def f(own):
		for g in fs:
			g(own)
	return f


class MiniSeries(unittest.TestCase):
	"""A series over a pristine OWN of l1..l12, kept in a repository of
	its own: patchset's REPO and series directory point there."""
	STEPS: List[Step] = []

	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		root = Path(self.tmp.name)
		self.pristine = root / 'pristine'
		(self.pristine / 'kernel/time').mkdir(parents=True)
		(self.pristine / OWN).write_text(text(LINES))
		self.repo = root / 'repo'
		series = self.repo / 'series'
		series.mkdir(parents=True)
		(series / 'series').write_text('# the test series\n')
		for name, value in (('REPO', self.repo), ('SERIES_DIR', series),
				    ('SERIES', series / 'series')):
			p = mock.patch.object(patchset, name, value)
			p.start()
			self.addCleanup(p.stop)
		git = stackgit.sparse_repo(root / 'git', self.pristine, [OWN])
		own = list(LINES)
		for slug, words, change, new in self.STEPS:
			change(own)
			(git / OWN).write_text(text(own))
			if new:
				(git / NEW).write_text(new)
			stackgit.git(git, 'add', '-A')
			env = stackgit.fixed_env(GIT_AUTHOR_NAME='A U Thor',
						 GIT_AUTHOR_EMAIL='a@example.org', GIT_AUTHOR_DATE=DATE)
			stackgit.git(git, 'commit', '-q', '-m', f'x: Patch {slug}\n\nBody.\n\n'
				     f'Tb-Patch: {slug} {words}'.rstrip(), env=env)
		stackgit.write_series(stackgit.read_branch(git, 'HEAD'))
		self.own = own
		self.write(OWN, text(own))
		if any(new for _, _, _, new in self.STEPS):
			self.write(NEW, next(new for _, _, _, new in self.STEPS if new))
		self.assertEqual(patchset.mismatches(self.pristine), [])

	def tearDown(self):
		self.tmp.cleanup()

	def write(self, path, data):
		(self.repo / path).parent.mkdir(parents=True, exist_ok=True)
		(self.repo / path).write_text(data)

	def series_files(self):
		return {f.name: f.read_text() for f in patchset.SERIES_DIR.iterdir()}

	def patch_text(self, slug):
		return (patchset.SERIES_DIR / f'{slug}.patch').read_text()

	def refused(self, pattern):
		"""absorb fails, saying pattern, and changes nothing."""
		before = self.series_files()
		with self.assertRaises(Failed) as e:
			absorb.absorb(self.pristine)
		self.assertRegex(str(e.exception), pattern)
		self.assertEqual(self.series_files(), before)
		return str(e.exception)


class Absorb(MiniSeries):
	"""Patch one changes l2 and l4, two adds NEW, three changes l5 and
	l9 and adds x after l11."""
	STEPS = [('one', '', steps_of(setl(1, 'L2'), setl(3, 'L4')), None),
		 ('two', '', lambda own: None, 'a\nb\nc\n'),
		 ('three', '', steps_of(setl(4, 'L5'), setl(8, 'L9'),
					lambda own: own.insert(11, 'x')), None)]

	def test_each_hunk_goes_to_the_patch_that_last_touched_it(self):
		own = list(self.own)
		own[1] = 'L2b'				# one's line
		own[8] = 'L9b'				# three's line
		own.insert(12, 'y')			# after three's x, before pristine l12
		self.write(OWN, text(own))
		self.write(NEW, 'a\nB\nc\n')		# two's file
		self.assertIn('patch 1 (one.patch)', absorb.explain(self.pristine))
		done = absorb.absorb(self.pristine)
		self.assertEqual(sorted((t.hunk.path, slug(t)) for t in done),
				 [(NEW, 'two'), (OWN, 'one'), (OWN, 'three'), (OWN, 'three')])
		self.assertEqual(patchset.mismatches(self.pristine), [])
		self.assertIn('+L2b\n', self.patch_text('one'))
		self.assertIn('+B\n', self.patch_text('two'))
		self.assertIn('+L9b\n', self.patch_text('three'))
		self.assertIn('+y\n', self.patch_text('three'))
		self.assertNotIn('L9b', self.patch_text('one'))

	def test_hunks_that_move_the_lines_below_them(self):
		"""Two insertions in one file, the upper one adding lines: the
		lower one must land where it was made."""
		own = list(self.own)
		own[1:2] = ['L2', 'z1', 'z2']		# after one's L2
		own.insert(own.index('x') + 1, 'y')	# after three's x
		self.write(OWN, text(own))
		done = absorb.absorb(self.pristine)
		self.assertEqual([slug(t) for t in done], ['one', 'three'])
		self.assertEqual(patchset.mismatches(self.pristine), [])

	def test_at_the_start_and_the_end_of_a_file(self):
		self.write(NEW, 'first\na\nb\nc\nlast\n')
		done = absorb.absorb(self.pristine)
		self.assertEqual([slug(t) for t in done], ['two', 'two'])
		self.assertEqual(patchset.mismatches(self.pristine), [])

	def test_author_date_and_changelog_stay(self):
		own = list(self.own)
		own[1] = 'L2b'
		self.write(OWN, text(own))
		before = patchset.parse_mail(self.patch_text('one'))
		absorb.absorb(self.pristine)
		after = patchset.parse_mail(self.patch_text('one'))
		self.assertEqual((after.author, after.date, after.subject, after.body),
				 (AUTHOR, DATE, before.subject, before.body))
		self.assertEqual(self.patch_text('two').count('Tb-Patch'), 0)

	def test_a_pristine_line_goes_nowhere_and_nothing_changes(self):
		own = list(self.own)
		own[6] = 'l7b'
		own[1] = 'L2b'
		self.write(OWN, text(own))
		msg = self.refused(f'{OWN}:7-7: no patch')
		self.assertIn('pristine base', msg)

	def test_a_new_file_needs_a_patch(self):
		self.write('kernel/time/other.c', 'int x;\n')
		self.refused('kernel/time/other.c: in the repository, but no patch.*adds it')

	def test_a_removed_file_needs_a_patch(self):
		(self.repo / NEW).unlink()
		self.refused(f'{NEW}: missing.*must remove it')

	def test_nothing_to_absorb(self):
		self.assertEqual(absorb.absorb(self.pristine), [])

	def test_a_hunk_that_conflicts_with_a_later_patch_is_refused(self):
		"""L4 is one's, but three changed the line after it: folded into
		one, the change meets three's when three is replayed."""
		own = list(self.own)
		own[3] = 'L4b'
		self.write(OWN, text(own))
		msg = self.refused('CONFLICT')
		self.assertIn('its hunk kernel/time/tick-broadcast.c:4-4 into patch 1', msg)
		self.assertIn(f'{OWN}:4-4: patch 1 (one.patch)', msg)


class BaseTree(MiniSeries):
	"""Fix one changes l7; base patch two, which the pristine tree gets
	without the fix, changes l12."""
	STEPS = [('one', 'fix', setl(6, 'L7'), None),
		 ('two', 'base', setl(11, 'L12'), None)]

	def test_a_hunk_that_would_break_the_base_tree_is_refused(self):
		"""Deleting l9-l11 with two's L12 goes to two, whose context then
		takes in the fix's L7: two no longer applies to the pristine tree."""
		own = list(self.own)
		del own[8:11]
		own[own.index('L12')] = 'L12b'
		self.write(OWN, text(own))
		self.refused('the base tree would no longer apply')


if __name__ == '__main__':
	unittest.main()
