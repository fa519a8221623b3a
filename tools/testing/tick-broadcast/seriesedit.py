# SPDX-License-Identifier: GPL-2.0
"""Working on the series with git: the stack as a branch, and back.

  edit   makes branch tb-edit in $TB_CACHE/linux-<version>/series-edit, a
         worktree of the base repository, with one commit per patch of the
         series. Work there with git: commit, rebase -i, commit --fixup
         and rebase --autosquash; build with O= as anywhere.
  save   turns tb-edit back into the series: the patch files, the series
         list, and the repository's own files at their kernel paths, as
         the last commit has them.

For a change to the code of a patch, absorb.py is shorter: edit the
file at its kernel path and absorb it. edit and save are for what
absorb cannot do: changelogs, new or reordered patches, changes to
upstream files the repository keeps no copy of.

Each commit carries a trailer "Tb-Patch: SLUG [base] [fix [case=NAME...]]"
that save reads to keep the patch's name and its words in the series
list (a commit without one becomes a patch named after its subject).
edit refuses to overwrite a tb-edit with commits that were not saved,
or a worktree with changes.
"""

import subprocess
from pathlib import Path
from typing import Iterable, List

import patchset
import stackgit
from patchset import Patch
from series import base_repo, base_worktree
from stackgit import BASE_TAG, Failed, git

EDIT_BRANCH = 'tb-edit'


def worktree(workdir: Path, pristine: Path) -> Path:
	"""The editing worktree of the base repository."""
	return base_worktree(base_repo(workdir, pristine, ''), workdir, 'series-edit')


def saved_mark(wt: Path) -> Path:
	return wt.parent / 'series-edit.saved'


def edit(workdir: Path, pristine: Path, force: bool = False) -> Path:
	"""Make tb-edit from the series; return the worktree."""
	wt = worktree(workdir, pristine)
	mark = saved_mark(wt)
	if not force:
		if git(wt, 'status', '--porcelain'):
			raise Failed(f'{wt} has uncommitted changes or new files: commit them and '
				     'save, or --force to drop them')
		tip = git(wt, 'rev-parse', '-q', '--verify', EDIT_BRANCH, check=False)
		if tip and (not mark.exists() or mark.read_text().strip() != tip):
			raise Failed(f'{EDIT_BRANCH} in {wt} has commits that were not saved: '
				     'tb.py series save, or --force to drop them')
	tip = stackgit.commit_stack(wt, EDIT_BRANCH, stackgit.stack_of(patchset.load()),
				    trailers=True)
	mark.write_text(tip + '\n')
	return wt


def write_own_files(wt: Path, tip: str, pristine: Path, before: Iterable[str]) -> List[str]:
	"""The repository's own files as tip has them; those dropped removed."""
	state: patchset.FileState = {p: None for p in before}
	for path in git(wt, 'diff', '--name-only', '--no-renames', BASE_TAG, tip).split():
		r = subprocess.run(['git', '-C', str(wt), 'show', f'{tip}:{path}'], capture_output=True)
		state[path] = r.stdout if not r.returncode else None
	now = patchset.own_files(pristine, state)
	for path in now:
		f = patchset.REPO / path
		f.parent.mkdir(parents=True, exist_ok=True)
		data = state[path]
		assert data is not None
		if not f.exists() or f.read_bytes() != data:
			f.write_bytes(data)
	for path in sorted(set(before) - set(now)):
		(patchset.REPO / path).unlink(missing_ok=True)
	return now


def save_branch(wt: Path, tip: str, pristine: Path) -> List[Patch]:
	"""The commits BASE_TAG..tip of wt into the series and the kernel paths."""
	before = patchset.repo_paths(pristine)
	patches = stackgit.write_series(stackgit.read_branch(wt, tip))
	write_own_files(wt, tip, pristine, before)
	return patches


def save(workdir: Path, pristine: Path) -> List[Patch]:
	"""tb-edit back into the repository; return the patches."""
	wt = worktree(workdir, pristine)
	tip = git(wt, 'rev-parse', EDIT_BRANCH)
	patches = save_branch(wt, tip, pristine)
	saved_mark(wt).write_text(tip + '\n')
	return patches
