# SPDX-License-Identifier: GPL-2.0
"""Fold an edit made at a kernel path into the patch it belongs to.

  tb.py series absorb      (make absorb)

The repository keeps the series' own files at their kernel paths
(patchset.own_files): edit one there, then absorb. Every hunk of the
difference between the edited file and what the series makes of it
goes to the patch that last touched those lines, as `git absorb` does:
the latest patch whose lines the hunk changes, or for lines only added,
the latest of the patches that wrote the two lines around them (in an
empty file, the patch that made it). The stack is committed into a
small repository of the files it touches (stackgit.sparse_repo), each
hunk becomes a fixup commit of its patch, an interactive rebase whose
list absorb writes itself folds them in, and the patch files and the
series list are written back from the result.

absorb changes nothing when a hunk has no patch to go to (it changes
only lines of the pristine base, which no patch touched), when a file
is new or gone (a patch must add or remove it: tb.py series edit), when
folding a hunk into its patch conflicts with a later patch, or when the
result would no longer apply to one of the trees (a patch the base tree
gets too). It says which hunk, which patch and why. explain() gives the
same attribution without changing anything: the unit test that compares
the kernel paths with the stack, and a build that finds them apart,
print it.
"""

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import patchset
import stackgit
from patchset import Drift, Mismatch, Patch
from progress import Failed
from stackgit import BASE_TAG, git

BRANCH = 'tb-absorb'


@dataclass(frozen=True)
class Hunk:
	"""One hunk of a git diff -U0: old lines [old, old + old_len), or for
	an insertion (old_len 0) the place after old line old."""
	path: str
	header: str
	text: str
	old: int
	old_len: int

	def lines(self) -> str:
		if self.old_len:
			return f'{self.path}:{self.old}-{self.old + self.old_len - 1}'
		return f'{self.path}: lines added after {self.old}'


@dataclass(frozen=True)
class Target:
	"""Where a hunk goes: patch, or None and why not."""
	hunk: Hunk
	patch: Optional[Patch]
	why: str


@dataclass
class Plan:
	"""The stack committed in a sparse repository, and where each hunk goes.

	repo, tip	the repository and its branch's tip
	patches		the series
	commits		{slug: its commit}
	targets		where each hunk of the edit goes
	refused		what cannot be absorbed at all, and why
	"""
	repo: Path
	tip: str
	patches: List[Patch]
	commits: Dict[str, str]
	targets: List[Target] = field(default_factory=list)
	refused: List[str] = field(default_factory=list)


def parse_hunks(diff: str) -> List[Hunk]:
	"""The hunks of a git diff -U0 with a/ and b/ prefixes, each with its
	file's header."""
	out = []
	for block in re.split(r'^(?=diff --git )', diff, flags=re.M):
		if not block.startswith('diff --git '):
			continue
		m = re.match(r'diff --git a/(\S+) b/', block)
		if not m:
			raise Failed(f'absorb cannot read this diff header: {block.splitlines()[0]}')
		head, _, body = block.partition('\n@@')
		for h in re.split(r'^(?=@@ )', '@@' + body, flags=re.M) if body else ():
			r = re.match(r'@@ -(\d+)(?:,(\d+))? \+', h)
			if r:
				out.append(Hunk(m.group(1), head + '\n', h, int(r.group(1)),
						int(r.group(2) if r.group(2) is not None else 1)))
	return out


def blamed(repo: Path, tip: str, path: str, first: int, last: int) -> List[str]:
	"""The commits that last changed lines first..last of path at tip."""
	out = git(repo, 'blame', '-l', '-s', '-L', f'{first},{last}', tip, '--', path)
	return [line.lstrip('^')[:40] for line in out.splitlines()]


def target(repo: Path, tip: str, hunk: Hunk, owner: Dict[str, Patch]) -> Target:
	"""The patch hunk belongs to (owner: commit -> patch; commits not in
	it are the base's)."""
	if hunk.old_len:
		lines = (hunk.old, hunk.old + hunk.old_len - 1)
		what = 'the lines it changes'
	else:
		total = len(git(repo, 'show', f'{tip}:{hunk.path}', strip=False).splitlines())
		lines = (max(hunk.old, 1), min(hunk.old + 1, total))
		what = 'the lines around it'
	if lines[0] <= lines[1]:
		commits = blamed(repo, tip, hunk.path, *lines)
	else:
		# an empty file: the patch that made it
		what = 'the file it adds to'
		commits = git(repo, 'log', '--diff-filter=A', '--format=%H', tip, '--',
			      hunk.path).split()[:1]
	patches = sorted({owner[c] for c in commits if c in owner}, key=lambda p: p.number)
	if not patches:
		return Target(hunk, None, f'{what} are the pristine base\'s: no patch touched '
			      'them, so none can take the change (tb.py series edit)')
	latest = patches[-1]
	why = f'{what} last changed by patch {latest.number}'
	if len(patches) > 1:
		why += ' (also by ' + ', '.join(f'{p.number}' for p in patches[:-1]) + ')'
	elif set(commits) - set(owner):
		why += ' (and the base)'
	return Target(hunk, latest, why)


def refusal(m: Mismatch, pristine: Path) -> str:
	"""Why a file that does not merely differ cannot be absorbed."""
	if m.drift is Drift.MISSING:
		return f'{m}: a patch must remove it (tb.py series edit)'
	if (pristine / m.path).exists():
		return (f'{m.path}: an upstream file the repository keeps no copy of; change '
			'it in its patch (tb.py series edit)')
	return f'{m}: a new file needs a patch that adds it (tb.py series edit)'


def plan(pristine: Path, tmp: Path) -> Plan:
	"""Where each difference between the kernel paths and the series goes."""
	patches = patchset.load()
	bad = patchset.mismatches(pristine, patches=patches)
	repo = stackgit.sparse_repo(tmp / 'repo', pristine, patchset.touched_paths(patches))
	tip = stackgit.commit_stack(repo, BRANCH, stackgit.stack_of(patches), trailers=True)
	commits = git(repo, 'rev-list', '--reverse', f'{BASE_TAG}..{tip}').split()
	pl = Plan(repo, tip, patches, {p.slug: c for p, c in zip(patches, commits)})
	pl.refused = [refusal(m, pristine) for m in bad if m.drift is not Drift.DIFFERS]
	edited = [m.path for m in bad if m.drift is Drift.DIFFERS]
	for path in edited:
		shutil.copyfile(patchset.REPO / path, repo / path)
	if not edited:
		return pl
	diff = git(repo, 'diff', '-U0', '--no-color', '--no-ext-diff', '--src-prefix=a/',
		   '--dst-prefix=b/', '--', *edited, strip=False)
	hunks = parse_hunks(diff)
	if not hunks:
		pl.refused.append(', '.join(edited) + ': differ in bytes that git diff does not '
				  'show (line endings?)')
	owner = dict(zip(commits, patches))
	pl.targets = [target(repo, tip, h, owner) for h in hunks]
	return pl


def describe(targets: Sequence[Target], refused: Sequence[str]) -> str:
	lines = list(refused)
	for t in targets:
		where = (f'patch {t.patch.number} ({t.patch.slug}.patch)' if t.patch
			 else 'no patch')
		lines.append(f'{t.hunk.lines()}: {where}: {t.why}')
	return '\n'.join(lines)


def explain(pristine: Path) -> str:
	"""Which patch each difference between the kernel paths and the
	series belongs to, without changing anything."""
	with tempfile.TemporaryDirectory(prefix='tb-absorb-') as tmp:
		pl = plan(pristine, Path(tmp))
		return describe(pl.targets, pl.refused)


def fixups(pl: Plan) -> Dict[str, List[Tuple[str, Target]]]:
	"""One fixup commit per hunk, applied to the index from the top of
	each file down (git places a -U0 hunk by its new line number, which
	counts the hunks above it); return {patch slug: [(fixup, target)]}.
	The index must then be the edited files."""
	out: Dict[str, List[Tuple[str, Target]]] = {}
	for t in sorted(pl.targets, key=lambda t: (t.hunk.path, t.hunk.old)):
		assert t.patch
		git(pl.repo, 'apply', '--cached', '--unidiff-zero', '-',
		    input=t.hunk.header + t.hunk.text)
		git(pl.repo, 'commit', '-q', '--no-verify', '-m', f'fixup {t.patch.slug}')
		out.setdefault(t.patch.slug, []).append((git(pl.repo, 'rev-parse', 'HEAD'), t))
	if git(pl.repo, 'diff', '--name-only'):
		raise Failed('nothing absorbed: the fixups do not add up to the edit (a bug of '
			     'absorb):\n' + describe(pl.targets, []))
	return out


def fold(pl: Plan, folds: Dict[str, List[Tuple[str, Target]]], tmp: Path) -> None:
	"""Rebase the stack with each patch's fixups folded into it, by a
	rebase list written here; on a conflict, name the hunk or the patch
	that conflicts."""
	todo = tmp / 'todo'
	lines = []
	for p in pl.patches:
		lines.append(f'pick {pl.commits[p.slug]}')
		lines += [f'fixup {c}' for c, _ in folds.get(p.slug, [])]
	todo.write_text('\n'.join(lines) + '\n')
	env = stackgit.fixed_env(GIT_SEQUENCE_EDITOR=f'cp {todo}', GIT_EDITOR='true')
	r = stackgit.run_git(pl.repo, 'rebase', '-q', '-i', BASE_TAG, env=env)
	stopped = git(pl.repo, 'rev-parse', '-q', '--verify', 'REBASE_HEAD', check=False)
	if r.returncode or stopped:
		git(pl.repo, 'rebase', '--abort', check=False)
		what = {c: f'its hunk {t.hunk.lines()} into patch {t.patch.number}'
			for fs in folds.values() for c, t in fs if t.patch}
		what.update({c: f'patch {p.number} ({p.slug}) on top of the folded hunks'
			     for p in pl.patches for s, c in pl.commits.items() if s == p.slug})
		conflicts = [ln for ln in (r.stdout + r.stderr).splitlines()
			     if ln.startswith(('CONFLICT', 'error', 'fatal'))]
		raise Failed('nothing absorbed: git could not apply '
			     f'{what.get(stopped, "the rebase list")}: '
			     f'{"; ".join(conflicts) or r.stderr.strip()[-300:]}\nthe hunks:\n'
			     + describe(pl.targets, []) +
			     '\nfold them by hand: tb.py series edit, then series save')
	n = len(git(pl.repo, 'rev-list', f'{BASE_TAG}..HEAD').split())
	if n != len(pl.patches):
		raise Failed(f'nothing absorbed: the rebase left {n} commits for '
			     f'{len(pl.patches)} patches (a bug of absorb)')


def check_trees(stack: Sequence[Tuple[Patch, str]], pristine: Path) -> None:
	"""Both trees still apply, and ours ends in the edited files."""
	for tree in patchset.TREES:
		state: patchset.FileState = {}
		for p, text in stack:
			if tree in p.trees:
				try:
					patchset.apply_diff(patchset.parse_mail(text).diff, state,
							    pristine, f'{p.slug}.patch')
				except patchset.SeriesError as e:
					raise Failed(f'nothing absorbed: the {tree} tree would no longer '
						     f'apply: {e}')
		if tree == 'ours':
			left = [p for p in patchset.own_files(pristine, state)
				if (patchset.REPO / p).read_bytes() != state[p]]
			if left:
				raise Failed('nothing absorbed: the folded series does not end in '
					     f'the edited files: {", ".join(left)} (a bug of absorb)')


def absorb(pristine: Path) -> List[Target]:
	"""Fold the kernel paths' edits into their patches and write the
	series; return where each hunk went. Raise Failed, changing nothing,
	if any hunk cannot go."""
	with tempfile.TemporaryDirectory(prefix='tb-absorb-') as tmpdir:
		tmp = Path(tmpdir)
		pl = plan(pristine, tmp)
		if pl.refused or any(t.patch is None for t in pl.targets):
			raise Failed('nothing absorbed:\n' + describe(pl.targets, pl.refused))
		if not pl.targets:
			return []
		fold(pl, fixups(pl), tmp)
		stack = stackgit.read_branch(pl.repo, 'HEAD')
		check_trees(stack, pristine)
		stackgit.write_series(stack)
	left = patchset.mismatches(pristine)
	assert not left, left
	return pl.targets
