# SPDX-License-Identifier: GPL-2.0
"""The fixes at the head of the series are standalone, on 6.12 and 6.1.

Stable takes patches one at a time: every fix ("fix" in series/series)
must apply alone to the pristine 6.12 files it touches, and its 6.1
version (backport.py) alone to pristine 6.1's; and all of them, in
series order, to each. These need both pristine bases
(workspace.unpack_pristine(): each unpacked once, seconds) and take a
second: only the files the fixes touch are copied.
"""

import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import backport
import patchset
import stackgit
import workspace
from patchset import Mail, Patch, SeriesError

OTHER = '6.1'
OLD: Path
NEW: Path
FIXES: List[Patch]


def setUpModule():
	global OLD, NEW, FIXES
	OLD = workspace.unpack_pristine()
	NEW = workspace.unpack_pristine(OTHER)
	FIXES = [p for p in patchset.load() if p.fix]


def check(diff: str, pristine: Path) -> str:
	"""'' if diff applies alone to a copy of the pristine files it
	touches (git apply --check), else git's complaint."""
	with tempfile.TemporaryDirectory() as tmp:
		stackgit.copy_files(Path(tmp), pristine, patchset.diff_paths(diff))
		r = subprocess.run(['git', 'apply', '--check', '-p1', '-'], cwd=tmp,
				   input=diff.encode(), capture_output=True)
	return '' if not r.returncode else r.stderr.decode().strip() or 'git apply failed'


def ported() -> Tuple[List[Tuple[Patch, Mail]], Dict[str, str]]:
	"""([(fix, its 6.1 mail)], {slug: why it has none})."""
	out, errors = [], {}
	for p in FIXES:
		try:
			out.append((p, backport.port_fix(p, OLD, NEW, names=(workspace.DEFAULT_BASE,
									     OTHER)).mail))
		except SeriesError as e:
			errors[p.slug] = str(e)
	return out, errors


def report(what: str, bad: Dict[str, str]) -> str:
	return (f'{len(bad)} fixes {what}: {", ".join(bad)}\n\n' +
		'\n\n'.join(f'{slug}:\n{why}' for slug, why in bad.items()))


def am(pristine: Path, stack: Sequence[Tuple[Patch, Mail]]) -> str:
	"""'' if git am takes the mails, in order, on a repository of the
	pristine files they touch, else why not."""
	paths = sorted({p for _, m in stack for p in patchset.diff_paths(m.diff)})
	with tempfile.TemporaryDirectory() as tmp:
		repo = stackgit.sparse_repo(Path(tmp) / 'r', pristine, paths)
		mbox = Path(tmp) / 'mbox'
		mbox.write_text(''.join(
			f'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
			f'From: {m.author}\nDate: {m.date}\nSubject: [PATCH] {m.subject}\n\n'
			f'{m.body}---\n{m.diff}\n' for _, m in stack))
		r = subprocess.run(['git', '-C', str(repo), 'am', '-q', str(mbox)],
				   capture_output=True, text=True, env=stackgit.fixed_env())
	return '' if not r.returncode else (r.stdout + r.stderr).strip()[-2000:]


class Standalone(unittest.TestCase):
	def test_there_are_fixes(self):
		self.assertTrue(FIXES)

	def test_each_fix_applies_alone_to_6_12(self):
		bad = {p.slug: why for p in FIXES if (why := check(p.diff_text(), OLD))}
		if bad:
			self.fail(report(f'do not apply alone to pristine {workspace.DEFAULT_BASE}',
					 bad))

	def test_each_fix_made_for_6_1_applies_alone_to_6_1(self):
		stack, bad = ported()
		bad.update({p.slug: why for p, m in stack if (why := check(m.diff, NEW))})
		if bad:
			self.fail(report(f'have no version that applies alone to pristine {OTHER}',
					 bad))


class TestPatches(unittest.TestCase):
	def test_the_test_patches_can_be_made_for_6_1(self):
		"""make proof BASE=6.1 puts them on 6.1 before the fixes."""
		tooling = patchset.patches_for('base')
		made = backport.port_stack(tooling, OLD, NEW, (workspace.DEFAULT_BASE, OTHER))
		self.assertEqual([f.patch.slug for f in made], [p.slug for p in tooling])
		self.assertFalse(am(NEW, [(f.patch, f.mail) for f in made]))


class InOrder(unittest.TestCase):
	def test_the_fixes_apply_in_order_to_6_12(self):
		why = am(OLD, [(p, p.mail()) for p in FIXES])
		self.assertFalse(why, f'git am of the fixes in series order on '
			      f'{workspace.DEFAULT_BASE}:\n{why}')

	def test_the_fixes_made_for_6_1_apply_in_order_to_6_1(self):
		stack, bad = ported()
		if bad:
			self.fail(report(f'cannot be made for {OTHER}, so not all of them apply '
					 'in order', bad))
		why = am(NEW, stack)
		self.assertFalse(why, f'git am of the fixes made for {OTHER} in series order:\n{why}')
