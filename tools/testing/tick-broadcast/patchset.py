# SPDX-License-Identifier: GPL-2.0
"""The series as data: which files and hunks make which patch.

series/series.conf lists the patches in order. A patch starts with

	patch SLUG TREE...

and its entries follow, one a line:

	file PATH	a file wholly ours, at PATH in the kernel tree
	hunk DIFF	a unified diff (a/ b/ prefixes, one or more files),
			applied to the tree as the patches before it left it

SLUG names the changelog, series/SLUG.msg (subject line, blank line,
body). TREE says which trees get the patch: "ours" is the series, "base"
the pristine tree plus the test tooling both kernels share; the base's
patches must be the first ones of the series, so that the base tree is
exactly the series applied up to that point.

This module knows nothing of builds or QEMU: it turns the configuration
into file contents, and nothing else imports it back.
"""

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parents[2]
SERIES_DIR = TOOLS / 'series'
CONF = SERIES_DIR / 'series.conf'
TREES = ('ours', 'base')


class SeriesError(Exception):
	"""The series configuration or one of its hunks is broken."""


@dataclass
class Patch:
	"""One patch of the series."""
	number: int
	slug: str
	trees: tuple
	entries: list = field(default_factory=list)	# [(kind, repo Path, [tree paths])]

	@property
	def msg(self):
		return SERIES_DIR / f'{self.slug}.msg'

	def message(self):
		"""(subject, body) of the changelog."""
		if not self.msg.exists():
			raise SeriesError(f'{self.msg.relative_to(REPO)}: no changelog for patch {self.slug}')
		text = self.msg.read_text()
		subject, _, body = text.partition('\n')
		return subject.strip(), body.strip('\n') + '\n'


def hunk_targets(diff):
	"""Tree paths a unified diff changes."""
	paths = re.findall(r'^\+\+\+ b/(\S+)', diff.read_text(), re.M)
	if not paths:
		raise SeriesError(f'{diff.relative_to(REPO)}: no "+++ b/FILE" line')
	return paths


def load(conf=CONF):
	"""[Patch] in series order."""
	patches = []
	for n, raw in enumerate(conf.read_text().splitlines(), 1):
		words = raw.split('#', 1)[0].split()
		if not words:
			continue
		where = f'{conf.relative_to(REPO)}:{n}'
		if words[0] == 'patch':
			if len(words) < 3 or any(t not in TREES for t in words[2:]):
				raise SeriesError(f'{where}: want "patch SLUG TREE..."')
			patches.append(Patch(len(patches) + 1, words[1], tuple(words[2:])))
			continue
		if words[0] not in ('file', 'hunk') or len(words) != 2 or not patches:
			raise SeriesError(f'{where}: want "file PATH" or "hunk DIFF" after a "patch" line')
		src = REPO / words[1]
		if not src.exists():
			raise SeriesError(f'{where}: {words[1]} does not exist')
		dsts = hunk_targets(src) if words[0] == 'hunk' else [words[1]]
		patches[-1].entries.append((words[0], src, dsts))
	base = [p.number for p in patches if 'base' in p.trees]
	if base != list(range(1, len(base) + 1)):
		raise SeriesError(f'{conf.relative_to(REPO)}: the base tree\'s patches must come first')
	return patches


def patches_for(tree, patches=None):
	return [p for p in (patches or load()) if tree in p.trees]


def repo_paths(patches=None):
	"""Every repository file the series is made of, in series order."""
	out = []
	for p in patches or load():
		for _, src, _ in p.entries:
			rel = str(src.relative_to(REPO))
			if rel not in out:
				out.append(rel)
	return out


def apply_hunk(diff, state, pristine):
	"""Apply diff over state ({tree path: bytes}, falling back to pristine).

	Refuses fuzz and offsets: a hunk applies exactly or not at all.
	"""
	with tempfile.TemporaryDirectory() as tmp:
		for dst in hunk_targets(diff):
			target = Path(tmp) / dst
			target.parent.mkdir(parents=True, exist_ok=True)
			if dst in state:
				if state[dst] is not None:
					target.write_bytes(state[dst])
			elif (pristine / dst).exists():
				shutil.copy(pristine / dst, target)
		r = subprocess.run(['patch', '-p1', '-F0', '--no-backup-if-mismatch', '-d', tmp,
				    '-i', str(diff)], capture_output=True, text=True)
		out = r.stdout + r.stderr
		if r.returncode or re.search(r'offset|fuzz', out, re.I):
			raise SeriesError(f'hunk {diff.relative_to(REPO)} does not apply exactly:\n{out}')
		for dst in hunk_targets(diff):
			target = Path(tmp) / dst
			state[dst] = target.read_bytes() if target.exists() else None


def apply_patch(patch, state, pristine):
	for kind, src, dsts in patch.entries:
		if kind == 'file':
			state[dsts[0]] = src.read_bytes()
		else:
			apply_hunk(src, state, pristine)


def tree_files(tree, pristine, upto=None):
	"""{tree path: bytes or None (deleted)} the series sets in tree.

	upto limits it to the first upto patches of the series.
	"""
	state = {}
	for p in patches_for(tree):
		if upto is not None and p.number > upto:
			break
		apply_patch(p, state, pristine)
	return state
