# SPDX-License-Identifier: GPL-2.0
"""The series as stored: one truth, read as git am and quilt read it.

These need the pristine base (workspace.unpack_pristine(): unpacked once,
about a minute) and take a few seconds: the stack is applied to the
files it touches only.
"""

import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import List

import absorb
import patchset
import stackgit
import workspace


PRISTINE: Path
PATCHES: List[patchset.Patch]
WANT: patchset.FileState


def setUpModule():
	global PRISTINE, PATCHES, WANT
	PRISTINE = workspace.unpack_pristine()
	PATCHES = patchset.load()
	WANT = patchset.tree_files('ours', PRISTINE, patches=PATCHES)


def differences(tree):
	"""The paths whose contents in tree differ from what the series makes."""
	return [p for p, data in WANT.items()
		if (data is None) != (not (tree / p).exists()) or
		(data is not None and (tree / p).read_bytes() != data)]


class StoredSeries(unittest.TestCase):
	def test_kernel_paths_are_what_the_series_makes(self):
		"""The repository's files at kernel paths are the last patch's
		result; where not, say which patch the difference belongs to."""
		bad = patchset.mismatches(PRISTINE, patches=PATCHES)
		if bad:
			self.fail('the files at kernel paths differ from the series:\n'
				  + absorb.explain(PRISTINE) +
				  '\nmake absorb folds such edits into their patches; '
				  'git checkout -- <file> drops them')

	def test_git_am_takes_the_stored_files(self):
		with tempfile.TemporaryDirectory() as tmp:
			repo = stackgit.sparse_repo(Path(tmp) / 'r', PRISTINE,
						    patchset.touched_paths(PATCHES))
			r = subprocess.run(['git', '-C', str(repo), 'am', '-q', '--whitespace=error-all']
					   + [str(p.path) for p in PATCHES], capture_output=True, text=True,
					   env=stackgit.fixed_env())
			self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
			self.assertEqual(differences(repo), [])
			subjects = stackgit.git(repo, 'log', '--reverse', '--format=%s',
						f'{stackgit.BASE_TAG}..').splitlines()
			self.assertEqual(subjects, [p.message()[0] for p in PATCHES])

	def test_quilt_pushes_the_stored_files(self):
		with tempfile.TemporaryDirectory() as tmp:
			tree = stackgit.copy_files(Path(tmp), PRISTINE, patchset.touched_paths(PATCHES))
			env = dict(os.environ, QUILT_PATCHES=str(patchset.SERIES_DIR),
				   QUILTRC='/dev/null')
			r = subprocess.run(['quilt', 'push', '-a', '-q'], cwd=tree, env=env,
					   capture_output=True, text=True)
			self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
			self.assertEqual(differences(tree), [])

	def test_stored_files_are_in_normal_form(self):
		"""Each file is what git format-patch writes for its commit, so that
		edit, save and absorb change only what was changed."""
		with tempfile.TemporaryDirectory() as tmp:
			repo = stackgit.sparse_repo(Path(tmp) / 'r', PRISTINE,
						    patchset.touched_paths(PATCHES))
			tip = stackgit.commit_stack(repo, 'x', stackgit.stack_of(PATCHES), trailers=True)
			for p, text in stackgit.read_branch(repo, tip):
				self.assertEqual(text, p.path.read_text(), f'{p.slug}.patch')
			self.assertEqual([p for p, _ in stackgit.read_branch(repo, tip)], PATCHES)

	def test_no_other_files_in_the_series_directory(self):
		listed = {p.path.name for p in PATCHES}
		here = {f.name for f in patchset.SERIES_DIR.iterdir()}
		extra = here - listed - {'series', 'base-files.sha256'} - \
			{f'{c}.msg' for c in patchset.COVERS}
		self.assertEqual(extra, set(), 'files in series/ that the series list does not name')


class RangeDiff(unittest.TestCase):
	def test_the_old_form_reads_as_the_new(self):
		"""The series before and after it became format-patch files: the
		same patches (the conversion changed none)."""
		import rangediff
		for rev in ('bf2c2a4', '9b11524'):
			if stackgit.run_git(patchset.REPO, 'cat-file', '-e', rev).returncode:
				self.skipTest(f'commit {rev} is not in this clone')
		def parts(rev):
			# the blob ids' abbreviation was git's own before, 12 since
			return [(p, m.subject, m.body, re.sub(r'^index .*\n', '', m.diff, flags=re.M))
				for p, m in rangediff.stack_at(rev)]
		old, new = parts('bf2c2a4'), parts('9b11524')
		self.assertEqual(old, new)
		self.assertEqual(len(new), 37)
