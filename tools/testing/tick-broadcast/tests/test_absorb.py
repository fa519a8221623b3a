# SPDX-License-Identifier: GPL-2.0
"""absorb: edits at kernel paths go to the patch that last touched the
lines, or nowhere, with the reason. On a small series of its own."""

import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import List, Optional, Tuple
from unittest import mock

import absorb
import patchset
import stackgit
from progress import Failed

OWN = 'kernel/time/tick-broadcast.c'
NEW = 'kernel/time/new.c'
LINES = [f'l{n}' for n in range(1, 13)]


def text(lines):
	return ''.join(f'{x}\n' for x in lines)


class Absorb(unittest.TestCase):
	"""Pristine OWN is l1..l12. Patch one changes l2 and l4, two adds NEW,
	three changes l5 and l9 and adds x after l11."""

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
		steps: List[Tuple[str, List[Tuple[int, str]], Optional[str]]]
		steps = [('one', [(1, 'L2'), (3, 'L4')], None),
			 ('two', [], 'a\nb\nc\n'),
			 ('three', [(4, 'L5'), (8, 'L9')], None)]
		for slug, changes, new in steps:
			for i, v in changes:
				own[i] = v
			if slug == 'three':
				own.insert(11, 'x')
			(git / OWN).write_text(text(own))
			if new:
				(git / NEW).write_text(new)
			stackgit.git(git, 'add', '-A')
			stackgit.git(git, 'commit', '-q', '-m', f'x: Patch {slug}\n\nBody.\n\n'
				     f'Tb-Patch: {slug}', env=stackgit.fixed_env())
		stackgit.write_series(stackgit.read_branch(git, 'HEAD'))
		self.own = own
		self.write(OWN, text(own))
		self.write(NEW, 'a\nb\nc\n')
		self.assertEqual(patchset.mismatches(self.pristine), [])

	def tearDown(self):
		self.tmp.cleanup()

	def write(self, path, data):
		(self.repo / path).parent.mkdir(parents=True, exist_ok=True)
		(self.repo / path).write_text(data)

	def patch_text(self, slug):
		return (patchset.SERIES_DIR / f'{slug}.patch').read_text()

	def test_each_hunk_goes_to_the_patch_that_last_touched_it(self):
		own = list(self.own)
		own[1] = 'L2b'				# one's line
		own[8] = 'L9b'				# three's line
		own.insert(12, 'y')			# after three's x, before pristine l12
		self.write(OWN, text(own))
		self.write(NEW, 'a\nB\nc\n')		# two's file
		self.assertIn('patch 1 (one.patch)', absorb.explain(self.pristine))
		done = absorb.absorb(self.pristine)
		self.assertEqual(sorted((t.hunk.path, t.patch and t.patch.slug) for t in done),
				 [(NEW, 'two'), (OWN, 'one'), (OWN, 'three'), (OWN, 'three')])
		self.assertEqual(patchset.mismatches(self.pristine), [])
		self.assertIn('+L2b\n', self.patch_text('one'))
		self.assertIn('+B\n', self.patch_text('two'))
		self.assertIn('+L9b\n', self.patch_text('three'))
		self.assertIn('+y\n', self.patch_text('three'))
		self.assertNotIn('L9b', self.patch_text('one'))

	def test_a_pristine_line_goes_nowhere_and_nothing_changes(self):
		before = {f.name: f.read_text() for f in patchset.SERIES_DIR.iterdir()}
		own = list(self.own)
		own[6] = 'l7b'
		own[1] = 'L2b'
		self.write(OWN, text(own))
		with self.assertRaises(Failed) as e:
			absorb.absorb(self.pristine)
		self.assertIn(f'{OWN}:7-7: no patch', str(e.exception))
		self.assertIn('pristine base', str(e.exception))
		self.assertEqual({f.name: f.read_text() for f in patchset.SERIES_DIR.iterdir()}, before)

	def test_a_new_file_needs_a_patch(self):
		self.write('kernel/time/other.c', 'int x;\n')
		with self.assertRaises(Failed) as e:
			absorb.absorb(self.pristine)
		self.assertIn('kernel/time/other.c', str(e.exception))
		self.assertIn('no patch of the series makes it', str(e.exception))

	def test_nothing_to_absorb(self):
		self.assertEqual(absorb.absorb(self.pristine), [])

	def test_a_hunk_that_conflicts_with_a_later_patch_is_refused(self):
		"""L4 is one's, but three changed the line after it: folded into
		one, the change meets three's when three is replayed."""
		before = {f.name: f.read_text() for f in patchset.SERIES_DIR.iterdir()}
		own = list(self.own)
		own[3] = 'L4b'
		self.write(OWN, text(own))
		with self.assertRaises(Failed) as e:
			absorb.absorb(self.pristine)
		self.assertIn('conflicts', str(e.exception))
		self.assertIn(f'{OWN}:4-4: patch 1 (one.patch)', str(e.exception))
		self.assertEqual({f.name: f.read_text() for f in patchset.SERIES_DIR.iterdir()}, before)


if __name__ == '__main__':
	unittest.main()
