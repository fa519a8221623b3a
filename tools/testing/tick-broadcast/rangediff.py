# SPDX-License-Identifier: GPL-2.0
"""The series as it was at a commit of this repository, and
`git range-diff` between two such commits: a change to the series,
reviewed patch by patch.

  tb.py series range-diff OLD [NEW]

reads the series at the repository's commits OLD and NEW (default: the
working tree), commits each as a branch over the pristine files it
touches (stackgit.sparse_repo) and runs git range-diff on the two.
Commits before the series became git format-patch files kept it as
series.conf, series/patches/SLUG.diff and series/SLUG.msg: that form is
read too, with the commit's author and date for every patch.
"""

import re
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional, Tuple

import patchset
import stackgit
from patchset import Mail, Patch
from stackgit import Failed, git

SERIES_REL = patchset.SERIES_DIR.relative_to(patchset.REPO).as_posix()


def show(rev: str, path: str) -> Optional[str]:
	"""The file at path in the repository's commit rev, or None."""
	r = subprocess.run(['git', '-C', str(patchset.REPO), 'show', f'{rev}:{path}'],
			   capture_output=True, text=True)
	return r.stdout if not r.returncode else None


def old_conf(text: str) -> List[Tuple[str, List[str]]]:
	"""[(slug, words)] of an old series.conf ("patch SLUG TREE... [fix]
	[case=NAME...]", lines continued by a backslash)."""
	out = []
	for raw in text.replace('\\\n', ' ').splitlines():
		words = raw.split('#', 1)[0].split()
		if words and words[0] == 'patch':
			out.append((words[1], [w for w in words[2:] if w != 'ours']))
	return out


def stack_at(rev: Optional[str]) -> List[Tuple[Patch, Mail]]:
	"""The series at the repository's commit rev (None: the working tree)."""
	if rev is None:
		return stackgit.stack_of(patchset.load())
	text = show(rev, f'{SERIES_REL}/series')
	if text is not None:
		out = []
		for p in patchset.parse_series(text, f'{rev}:series'):
			mail = show(rev, f'{SERIES_REL}/{p.slug}.patch')
			if mail is None:
				raise Failed(f'{rev}: {p.slug}.patch is listed but missing')
			out.append((p, patchset.parse_mail(mail, f'{rev}:{p.slug}.patch')))
		return out
	conf = show(rev, f'{SERIES_REL}/series.conf')
	if conf is None:
		raise Failed(f'{rev}: no series in {SERIES_REL}/')
	if re.search(r'^\s+(file|hunk) ', conf, re.M):
		raise Failed(f'{rev} keeps the series as whole files and hunks (before '
			     'commit 0a0e8b0), a form range-diff does not read')
	author = git(patchset.REPO, 'log', '-1', '--format=%an <%ae>', rev)
	date = git(patchset.REPO, 'log', '-1', '--format=%aD', rev)
	out = []
	for n, (slug, words) in enumerate(old_conf(conf), 1):
		msg = show(rev, f'{SERIES_REL}/{slug}.msg')
		diff = show(rev, f'{SERIES_REL}/patches/{slug}.diff')
		if msg is None or diff is None:
			raise Failed(f'{rev}: patch {slug} has no series/{slug}.msg or '
				     f'series/patches/{slug}.diff')
		subject, _, body = msg.partition('\n')
		p = patchset.parse_words(n, slug, words, f'{rev}:series.conf')
		out.append((p, Mail(author, date, subject.strip(), body.strip('\n') + '\n', diff)))
	return out


def touched(*stacks: List[Tuple[Patch, Mail]]) -> List[str]:
	return sorted({path for s in stacks for _, m in s for path in patchset.diff_paths(m.diff)})


def range_diff(pristine: Path, old: str, new: Optional[str], extra: List[str]) -> str:
	"""git range-diff of the series at old against the series at new."""
	a, b = stack_at(old), stack_at(new)
	with tempfile.TemporaryDirectory(prefix='tb-range-diff-') as tmp:
		repo = stackgit.sparse_repo(Path(tmp) / 'repo', pristine, touched(a, b))
		stackgit.commit_stack(repo, 'old', a)
		stackgit.commit_stack(repo, 'new', b)
		return git(repo, 'range-diff', *extra, f'{stackgit.BASE_TAG}..old',
			   f'{stackgit.BASE_TAG}..new', strip=False)


def label(rev: Optional[str]) -> str:
	if rev is None:
		return 'the working tree'
	return re.sub(r'\s+', ' ', git(patchset.REPO, 'log', '-1', '--format=%h (%s)', rev))
