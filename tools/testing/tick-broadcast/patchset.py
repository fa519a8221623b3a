# SPDX-License-Identifier: GPL-2.0
"""The series as data: a stack of patches over the pristine base.

series/series.conf lists the patches in order, one a line:

	patch SLUG TREE... [fix [case=NAME...]]

series/patches/SLUG.diff is the patch's change (git diff format, a/ and
b/ prefixes, any number of files), applied to the tree as the patches
before it left it; series/SLUG.msg is its changelog (subject line, blank
line, body). TREE says which trees get the patch: "ours" is the series,
"base" the pristine tree plus the test tooling both kernels share (the
test cpuidle driver and the KUnit suites that run on both). "fix" marks
the standalone fixes of bugs in the pristine code, which `make series
PART=fixes` exports alone: each must apply to the pristine base. A fix
names the KUnit cases that fail on the base because of the bug it fixes
(case=NAME, the case's name in the suite): they are the base's known
failures, and `tb.py series proof` shows each fail before its fix and
pass after it.

The files the series creates, and the two it replaces wholly
(OWN_FILES), are also kept at their kernel paths in the repository, as
the last patch leaves them, for reading; check_files() says where they
differ from the stack. Changes to other upstream files (Kconfig,
Makefile, MAINTAINERS, ...) live in the diffs only.

This module knows nothing of builds or QEMU: it turns the configuration
into file contents, and nothing else imports it back.
"""

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parents[2]
SERIES_DIR = TOOLS / 'series'
PATCH_DIR = SERIES_DIR / 'patches'
CONF = SERIES_DIR / 'series.conf'
TREES = ('ours', 'base')
FLAGS = ('fix',)
# Upstream files the series replaces as a whole: ours at the end.
OWN_FILES = ('kernel/time/tick-broadcast.c', 'kernel/time/tick-broadcast-hrtimer.c')


class SeriesError(Exception):
	"""The series configuration or one of its patches is broken."""


@dataclass
class Patch:
	"""One patch of the series."""
	number: int
	slug: str
	trees: tuple
	fix: bool = False
	cases: tuple = ()

	@property
	def msg(self):
		return SERIES_DIR / f'{self.slug}.msg'

	@property
	def diff(self):
		return PATCH_DIR / f'{self.slug}.diff'

	def message(self):
		"""(subject, body) of the changelog."""
		if not self.msg.exists():
			raise SeriesError(f'{self.msg.relative_to(REPO)}: no changelog for patch {self.slug}')
		subject, _, body = self.msg.read_text().partition('\n')
		return subject.strip(), body.strip('\n') + '\n'

	def diff_text(self):
		if not self.diff.exists():
			raise SeriesError(f'{self.diff.relative_to(REPO)}: no diff for patch {self.slug}')
		return self.diff.read_text()

	def conf_line(self):
		"""The patch's line in series.conf, its trees aligned by tabs."""
		tabs = '\t' * max(1, (40 - 8 - len(self.slug) + 7) // 8)
		rest = list(self.trees) + (['fix'] if self.fix else [])
		line = f'patch\t{self.slug}{tabs}' + '\t'.join(rest)
		return ''.join([line] + [f' \\\n\tcase={c}' for c in self.cases])


def diff_paths(text):
	"""Tree paths a git diff changes, in order."""
	return re.findall(r'^diff --git a/\S+ b/(\S+)$', text, re.M)


def parse_conf(text, where='series.conf'):
	"""[Patch] from the text of series.conf (a line may go on after a
	backslash)."""
	patches = []
	for n, raw in enumerate(text.replace('\\\n', ' ').splitlines(), 1):
		words = raw.split('#', 1)[0].split()
		if not words:
			continue
		if words[0] != 'patch' or len(words) < 3:
			raise SeriesError(f'{where}:{n}: want "patch SLUG TREE... [fix [case=NAME...]]"')
		trees = tuple(w for w in words[2:] if w in TREES)
		cases = tuple(w[len('case='):] for w in words[2:] if w.startswith('case='))
		flags = [w for w in words[2:] if w not in TREES and not w.startswith('case=')]
		if not trees or any(f not in FLAGS for f in flags) or (cases and 'fix' not in flags):
			raise SeriesError(f'{where}:{n}: trees are {"/".join(TREES)}, flags '
					  f'{"/".join(FLAGS)}, and only a fix names cases')
		patches.append(Patch(len(patches) + 1, words[1], trees, 'fix' in flags, cases))
	slugs = [p.slug for p in patches]
	if len(set(slugs)) != len(slugs):
		raise SeriesError(f'{where}: a slug appears twice')
	return patches


def load(conf=CONF):
	"""[Patch] in series order."""
	return parse_conf(conf.read_text(), str(conf.relative_to(REPO)))


def conf_header(conf=CONF):
	"""The comment lines at the top of series.conf, kept by save."""
	lines = []
	for line in conf.read_text().splitlines() if conf.exists() else []:
		if line.startswith('patch'):
			break
		lines.append(line)
	return '\n'.join(lines).rstrip('\n') + '\n\n' if lines else ''


def known_base_failures(patches=None):
	"""{KUnit case name: the fix of the base that makes it pass}."""
	return {c: p.slug for p in (load() if patches is None else patches) for c in p.cases}


def patches_for(tree, patches=None):
	return [p for p in (load() if patches is None else patches) if tree in p.trees]


# The cover letters: cover.msg for the whole series, cover-fixes.msg for
# the fixes alone. The line COVER_LIST in either becomes cover_list().
COVERS = ('cover', 'cover-fixes')
COVER_LIST = '@@PATCHES@@'
COVER_GROUPS = (
	('fix', 'Fixes of the current code, each standalone, with the case of the\n'
		'devices suite that fails without it:'),
	('base', 'Test tooling, which runs on the code before and after the rewrite:'),
	('rest', 'The rewrite:'),
)


def cover_list(patches):
	"""The cover letter's list of patches, numbered as git format-patch
	numbers them, in groups: the fixes, the tests that run on the
	current code, the rest."""
	def group(p):
		return 'fix' if p.fix else 'base' if 'base' in p.trees else 'rest'
	out = []
	for key, title in COVER_GROUPS:
		members = [(n, p) for n, p in enumerate(patches, 1) if group(p) == key]
		if not members:
			continue
		out.append(title)
		for n, p in members:
			out.append(f'  {n:2} {p.message()[0]}')
			out += [f'       case {c}' for c in p.cases]
		out.append('')
	return '\n'.join(out).rstrip('\n')


def cover_message(patches):
	"""(subject, body) of the cover letter of patches, its list filled in."""
	name = 'cover-fixes' if patches and all(p.fix for p in patches) else 'cover'
	subject, body = Patch(0, name, ('ours',)).message()
	if COVER_LIST not in body:
		raise SeriesError(f'{name}.msg: no {COVER_LIST} line for the list of patches')
	return subject, body.replace(COVER_LIST, cover_list(patches))


def apply_diff(text, state, pristine, name='patch'):
	"""Apply a git diff over state ({tree path: bytes or None}, falling
	back to pristine), with git apply: exact context, offsets allowed."""
	paths = diff_paths(text)
	with tempfile.TemporaryDirectory() as tmp:
		for path in paths:
			data = state[path] if path in state else (
				(pristine / path).read_bytes() if (pristine / path).exists() else None)
			if data is not None:
				target = Path(tmp) / path
				target.parent.mkdir(parents=True, exist_ok=True)
				target.write_bytes(data)
		r = subprocess.run(['git', 'apply', '-p1', '--whitespace=nowarn', '-'], cwd=tmp,
				   input=text.encode(), capture_output=True)
		if r.returncode:
			raise SeriesError(f'{name} does not apply:\n{r.stderr.decode()[-2000:]}')
		for path in paths:
			target = Path(tmp) / path
			state[path] = target.read_bytes() if target.exists() else None


def tree_files(tree, pristine, upto=None, patches=None):
	"""{tree path: bytes or None (deleted)} the series sets in tree.

	upto limits it to the first upto patches of the series (by number).
	"""
	state = {}
	for p in patches_for(tree, patches):
		if upto is not None and p.number > upto:
			break
		apply_diff(p.diff_text(), state, pristine, str(p.diff.relative_to(REPO)))
	return state


def own_files(pristine, state):
	"""The paths of state kept in the repository: new files and OWN_FILES."""
	return sorted(p for p, data in state.items()
		      if data is not None and (p in OWN_FILES or not (pristine / p).exists()))


def check_files(pristine, repo=REPO, patches=None):
	"""[(path, why)] where the repository's own files disagree with the stack."""
	state = tree_files('ours', pristine, patches=patches)
	bad = []
	for path in own_files(pristine, state):
		f = repo / path
		if not f.exists():
			bad.append((path, 'missing in the repository'))
		elif f.read_bytes() != state[path]:
			bad.append((path, 'differs from what the series makes of it'))
	return bad


def repo_paths(pristine):
	"""The repository's own files of the series, at their kernel paths."""
	return own_files(pristine, tree_files('ours', pristine))
