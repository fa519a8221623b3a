# SPDX-License-Identifier: GPL-2.0
"""Working on the series with git: the stack as a branch, and back.

  edit   makes branch tb-edit in $TB_CACHE/linux-<version>/series-edit, a
         worktree of the base repository, with one commit per patch of the
         series (ours). Work there with git: commit, rebase -i, commit
         --fixup and rebase --autosquash; build with O= as anywhere.
  save   turns tb-edit back into the series: series.conf, patches/*.diff,
         the changelogs, and the repository's own files at their kernel
         paths, as the last commit has them.

Each commit carries a trailer "Tb-Patch: SLUG TREE... [fix [case=NAME...]]" that save
reads to keep the patch's name and trees (a commit without one becomes
an ours patch named after its subject). edit refuses to overwrite a
tb-edit with commits that were not saved, or a worktree with changes.
"""

import re
import subprocess

import patchset
from series import BASE_TAG, Failed, base_repo, base_worktree, commit_patches, git

EDIT_BRANCH = 'tb-edit'
TRAILER = 'Tb-Patch'


def worktree(workdir, pristine):
	"""The editing worktree of the base repository."""
	return base_worktree(base_repo(workdir, pristine, ''), workdir, 'series-edit')


def saved_mark(wt):
	return wt.parent / 'series-edit.saved'


def trailer(p):
	"""The trailer that names the patch in its commit."""
	words = (p.slug,) + p.trees + (('fix',) if p.fix else ()) + tuple(f'case={c}' for c in p.cases)
	return f'{TRAILER}: {" ".join(words)}\n'


def edit(workdir, pristine, force=False):
	"""Make tb-edit from the series; return the worktree."""
	wt = worktree(workdir, pristine)
	mark = saved_mark(wt)
	if not force:
		if git(wt, 'status', '--porcelain', '--untracked-files=no'):
			raise Failed(f'{wt} has uncommitted changes: commit them and save, or --force')
		tip = git(wt, 'rev-parse', '-q', '--verify', EDIT_BRANCH, check=False)
		if tip and (not mark.exists() or mark.read_text().strip() != tip):
			raise Failed(f'{EDIT_BRANCH} in {wt} has commits that were not saved: '
				     'tb.py series save, or --force to drop them')
	tip = commit_patches(wt, EDIT_BRANCH, patchset.patches_for('ours'), trailer)
	mark.write_text(tip + '\n')
	return wt


def slugify(subject):
	words = re.sub(r'^[\w/ -]+?: ', '', subject).lower()
	return re.sub(r'[^a-z0-9]+', '-', words).strip('-')[:40] or 'patch'


def read_commit(wt, commit):
	"""(Patch, subject and body, diff) of one commit of tb-edit."""
	text = git(wt, 'log', '-1', '--format=%B', commit)
	m = re.search(rf'^{TRAILER}: (\S+)((?: \S+)*)\s*$', text, re.M)
	body = re.sub(rf'^{TRAILER}: .*\n?', '', text, flags=re.M).rstrip() + '\n'
	if m:
		p = patchset.parse_conf(f'patch {m.group(1)}{m.group(2)}\n', commit)[0]
	else:
		p = patchset.Patch(0, slugify(body.partition('\n')[0]), ('ours',))
	diff = git(wt, 'diff', '--no-renames', '--no-ext-diff', f'{commit}^', commit, strip=False)
	return p, body, diff


def write_series(patches, bodies, diffs):
	"""series.conf, the diffs and the changelogs; stale files removed."""
	header = patchset.conf_header()
	for f in list(patchset.PATCH_DIR.glob('*.diff')) + list(patchset.SERIES_DIR.glob('*.msg')):
		if f.stem not in {p.slug for p in patches} and f.stem not in patchset.COVERS:
			f.unlink()
	for p, body, diff in zip(patches, bodies, diffs):
		p.msg.write_text(body)
		p.diff.write_text(diff)
	patchset.CONF.write_text(header + ''.join(p.conf_line() + '\n' for p in patches))


def write_own_files(wt, tip, pristine, before):
	"""The repository's own files as tip has them; those dropped removed."""
	state = {p: None for p in before}
	for path in git(wt, 'diff', '--name-only', '--no-renames', BASE_TAG, tip).split():
		r = subprocess.run(['git', '-C', str(wt), 'show', f'{tip}:{path}'], capture_output=True)
		state[path] = r.stdout if not r.returncode else None
	now = patchset.own_files(pristine, state)
	for path in now:
		f = patchset.REPO / path
		f.parent.mkdir(parents=True, exist_ok=True)
		if not f.exists() or f.read_bytes() != state[path]:
			f.write_bytes(state[path])
	for path in sorted(set(before) - set(now)):
		(patchset.REPO / path).unlink(missing_ok=True)
	return now


def save(workdir, pristine):
	"""tb-edit back into the repository; return the patches."""
	wt = worktree(workdir, pristine)
	tip = git(wt, 'rev-parse', EDIT_BRANCH)
	commits = git(wt, 'rev-list', '--reverse', f'{BASE_TAG}..{tip}').split()
	patches, bodies, diffs = [], [], []
	for n, c in enumerate(commits, 1):
		p, body, diff = read_commit(wt, c)
		p.number = n
		if p.slug in {q.slug for q in patches}:
			raise Failed(f'two commits are named {p.slug}')
		patches.append(p)
		bodies.append(body)
		diffs.append(diff)
	before = patchset.repo_paths(pristine)
	write_series(patches, bodies, diffs)
	write_own_files(wt, tip, pristine, before)
	saved_mark(wt).write_text(tip + '\n')
	return patches


def main(args, ws):
	pristine = ws.unpack_pristine()
	try:
		if args.action == 'edit':
			wt = edit(ws.workdir(), pristine, args.force)
			print(f'series: branch {EDIT_BRANCH} in {wt}, one commit per patch; '
			      f'work there with git, then "tb.py series save"')
		else:
			patches = save(ws.workdir(), pristine)
			print(f'series: saved {len(patches)} patches into {patchset.SERIES_DIR}')
	except (Failed, patchset.SeriesError) as e:
		raise SystemExit(f'series: error: {e}')
