# SPDX-License-Identifier: GPL-2.0
"""Fold an edit made at a kernel path into the patch it belongs to.

  tb.py series absorb      (make absorb)

The repository keeps the series' own files at their kernel paths
(patchset.own_files): edit one there, then absorb. Every hunk of the
difference between the edited file and what the series makes of it
goes to the patch that last touched those lines, as `git absorb` does:
the latest patch whose lines the hunk changes, or for lines only added,
the latest of the patches that wrote the two lines around them. The
stack is committed into a small repository of the files it touches
(stackgit.sparse_repo), each hunk becomes a fixup commit of its patch,
`git rebase --autosquash` folds them in, and the patch files and the
series list are written back from the result.

absorb changes nothing when a hunk has no patch to go to (it changes
only lines of the pristine base, which no patch touched), when a file
is new or gone (a patch must add or remove it: tb.py series edit), or
when folding a hunk into its patch conflicts with a later patch. It
says which hunk, which patch and why. explain() gives the same
attribution without changing anything: the unit test that compares the
kernel paths with the stack prints it.
"""

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import patchset
import stackgit
from patchset import Patch
from stackgit import BASE_TAG, Failed, git

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


def parse_hunks(diff: str) -> List[Hunk]:
	"""The hunks of a git diff -U0, each with its file's header."""
	out = []
	for block in re.split(r'^(?=diff --git )', diff, flags=re.M):
		if not block.startswith('diff --git '):
			continue
		m = re.match(r'diff --git a/(\S+) b/', block)
		assert m
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
	commits = blamed(repo, tip, hunk.path, *lines) if lines[0] <= lines[1] else []
	patches = sorted({owner[c] for c in commits if c in owner}, key=lambda p: p.number)
	if not patches:
		return Target(hunk, None, f'{what} are the pristine base\'s: no patch touched '
			      'them, so none can take the change (tb.py series edit)')
	latest = patches[-1]
	why = f'{what} last changed by patch {latest.number}'
	if len(patches) > 1:
		why += ' (also by ' + ', '.join(f'{p.number}' for p in patches[:-1]) + ')'
	elif len(set(commits) - set(owner)):
		why += ' (and the base)'
	return Target(hunk, latest, why)


def plan(pristine: Path, tmp: Path) -> Tuple[Path, str, List[Target], List[str]]:
	"""(repository, tip, where each hunk goes, what cannot be absorbed at
	all) for the repository's kernel paths against the series."""
	patches = patchset.load()
	bad = patchset.mismatches(pristine, patches=patches)
	repo = stackgit.sparse_repo(tmp / 'repo', pristine, patchset.touched_paths(patches))
	tip = stackgit.commit_stack(repo, BRANCH, stackgit.stack_of(patches), trailers=True)
	commits = git(repo, 'rev-list', '--reverse', f'{BASE_TAG}..{tip}').split()
	owner = dict(zip(commits, patches))
	refused = [f'{path}: {why}; a patch must '
		   f'{"add" if "no patch" in why else "remove" if "missing" in why else "change"} it '
		   '(tb.py series edit)' for path, why in bad if 'differs' not in why]
	edited = [path for path, why in bad if 'differs' in why]
	for path in edited:
		shutil.copyfile(patchset.REPO / path, repo / path)
	diff = git(repo, 'diff', '-U0', '--no-color', '--no-ext-diff', '--', *edited,
		   strip=False) if edited else ''
	return repo, tip, [target(repo, tip, h, owner) for h in parse_hunks(diff)], refused


def describe(targets: List[Target], refused: List[str]) -> str:
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
		_, _, targets, refused = plan(pristine, Path(tmp))
		return describe(targets, refused)


def fixups(repo: Path, targets: List[Target], commit_of: Dict[str, str]) -> None:
	"""One fixup commit per hunk, each applied to the index as it was at
	the tip: within a file from the last hunk up, so that the line
	numbers of the hunks above stay right."""
	for t in sorted(targets, key=lambda t: (t.hunk.path, -t.hunk.old)):
		assert t.patch
		git(repo, 'apply', '--cached', '--unidiff-zero', '-', input=t.hunk.header + t.hunk.text)
		git(repo, 'commit', '-q', '--no-verify', f'--fixup={commit_of[t.patch.slug]}',
		    env=stackgit.fixed_env())


def absorb(pristine: Path) -> List[Target]:
	"""Fold the kernel paths' edits into their patches and write the
	series; return where each hunk went. Raise Failed, changing nothing,
	if any hunk cannot go."""
	with tempfile.TemporaryDirectory(prefix='tb-absorb-') as tmpdir:
		tmp = Path(tmpdir)
		repo, tip, targets, refused = plan(pristine, tmp)
		if refused or any(t.patch is None for t in targets):
			raise Failed('nothing absorbed:\n' + describe(targets, refused))
		if not targets:
			return []
		commits = git(repo, 'rev-list', '--reverse', f'{BASE_TAG}..{tip}').split()
		commit_of = {p.slug: c for p, c in zip(patchset.load(), commits)}
		fixups(repo, targets, commit_of)
		want = git(repo, 'rev-parse', 'HEAD^{tree}')
		env = stackgit.fixed_env(GIT_SEQUENCE_EDITOR='true', GIT_EDITOR='true')
		r = git(repo, 'rebase', '-q', '-i', '--autosquash', BASE_TAG, env=env, check=False,
			merged_output=True)
		if git(repo, 'status', '--porcelain') or git(
				repo, 'rev-parse', '-q', '--verify', 'REBASE_HEAD', check=False):
			stopped = git(repo, 'log', '-1', '--format=%s', 'REBASE_HEAD', check=False)
			git(repo, 'rebase', '--abort', check=False)
			conflicts = [ln for ln in r.splitlines() if ln.startswith('CONFLICT')]
			raise Failed('nothing absorbed: folding the hunks into their patches conflicts '
				     f'with a later patch (git rebase stopped at "{stopped}": '
				     f'{"; ".join(conflicts) or "see git rebase"}); the hunks:\n'
				     + describe(targets, []) +
				     '\nfold them by hand: tb.py series edit, then series save')
		if git(repo, 'rev-parse', 'HEAD^{tree}') != want:
			raise Failed('nothing absorbed: the rebased series does not end in the '
				     'edited files (a bug of absorb)')
		stackgit.write_series(stackgit.read_branch(repo, 'HEAD'))
	left = patchset.mismatches(pristine)
	if left:
		raise Failed('absorbed, but the kernel paths still differ from the series: '
			     + ', '.join(f'{p} ({why})' for p, why in left))
	return targets
