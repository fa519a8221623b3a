# SPDX-License-Identifier: GPL-2.0
"""The series as git commits, and back.

  commit_stack   one commit per patch on the base (tag tb-base) of a git
                 repository, with the patch's author, date and changelog;
                 with trailers=True each changelog also gets the line
                 "Tb-Patch: SLUG [base] [fix [case=NAME...]]" that
                 read_branch() turns back into the patch's name and
                 words of the series list
  read_branch    the commits of a branch as patches: the files
                 `git format-patch` writes for them, normalised so that
                 the same commit always gives the same bytes
  write_series   the patches and the series list into series/
  sparse_repo    a throwaway git repository whose base is only the
                 pristine files the series touches: enough to commit,
                 blame and rebase the stack in seconds

Nothing here builds or boots; the commands that edit the series
(seriesedit.py) and export it (series.py) sit on top.
"""

import email.utils
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import patchset
from patchset import Mail, Patch
from progress import Failed

BASE_TAG = 'tb-base'
TRAILER = 'Tb-Patch'
# git format-patch as the stored files are written: no commit id, no
# numbering, no signature (the git version), three lines of context,
# abbreviated blob ids of a fixed length. git() reads no configuration
# but the repository's own, so nothing of the user's (diff.context,
# format.subjectPrefix, format.cc, commit.gpgSign, hooks, ...) enters.
FORMAT_CONFIG = ['-c', 'core.abbrev=12']
FORMAT_ARGS = ['format-patch', '--zero-commit', '--no-numbered', '--no-signature',
	       '--no-renames', '--stdout', '--stat=72', '-U3', '--subject-prefix=PATCH',
	       '--src-prefix=a/', '--dst-prefix=b/']
# The identity and date of the tooling's own commits (the base commit;
# the committer of every commit), where the environment sets none.
FIXED_ENV = {'GIT_AUTHOR_NAME': 'tb', 'GIT_AUTHOR_EMAIL': 'tb@localhost',
	     'GIT_COMMITTER_NAME': 'tb', 'GIT_COMMITTER_EMAIL': 'tb@localhost',
	     'GIT_AUTHOR_DATE': '2000-01-01T00:00:00Z',
	     'GIT_COMMITTER_DATE': '2000-01-01T00:00:00Z'}


def fixed_env(**extra: str) -> Dict[str, str]:
	"""The environment of git(): no global or system configuration, the
	tooling's identity where none is set, and extra."""
	env = dict(os.environ, GIT_CONFIG_GLOBAL='/dev/null', GIT_CONFIG_NOSYSTEM='1')
	for k in FIXED_ENV:
		env.setdefault(k, FIXED_ENV[k])
	env.update(extra)
	return env


def run_git(repo: Path, *args: str, env: Optional[Dict[str, str]] = None,
	    input: Optional[str] = None) -> 'subprocess.CompletedProcess[str]':
	"""git in repo, with fixed_env() unless env is given; its output captured."""
	return subprocess.run(['git', '-C', str(repo)] + list(args), capture_output=True,
			      text=True, env=env or fixed_env(), input=input)


def git(repo: Path, *args: str, env: Optional[Dict[str, str]] = None, check: bool = True,
	strip: bool = True, input: Optional[str] = None, merged_output: bool = False) -> str:
	"""git's output (with merged_output, its error output after it),
	stripped unless strip=False (a diff's last context line may be a
	single space). It runs with fixed_env() unless env is given."""
	r = run_git(repo, *args, env=env, input=input)
	if check and r.returncode:
		raise Failed(f'git {" ".join(args)} in {repo} failed:\n'
			     f'{r.stdout[-2000:]}{r.stderr[-2000:]}')
	out = r.stdout + r.stderr if merged_output else r.stdout
	return out.strip() if strip else out


def trailer(p: Patch) -> str:
	"""The trailer that names the patch in its commit."""
	return f'{TRAILER}: {" ".join([p.slug] + p.words())}'


def with_trailer(message: str, line: str) -> str:
	"""message with line added to its trailer block (a new block if the
	last paragraph is not one)."""
	message = message.rstrip('\n')
	last = message.rsplit('\n\n', 1)[-1]
	block = all(re.match(r'[\w-]+: ', ln) for ln in last.splitlines()) and '\n\n' in message
	return f'{message}{chr(10) if block else chr(10) * 2}{line}\n'


def without_trailer(message: str, where: str = 'commit') -> Tuple[str, Optional[str]]:
	"""(message without its Tb-Patch lines, their value or None). Two
	different values (two commits squashed) are an error."""
	values = {v.strip() for v in re.findall(rf'^{TRAILER}: (.*)$', message, re.M)}
	if len(values) > 1:
		raise Failed(f'{where} names more than one patch ({", ".join(sorted(values))}): '
			     f'two commits squashed? keep one {TRAILER} line')
	rest = re.sub(rf'^{TRAILER}: .*\n?', '', message, flags=re.M)
	return re.sub(r'\n\n+$', '\n', rest.rstrip('\n') + '\n'), values.pop() if values else None


Stack = Sequence[Tuple[Patch, Mail]]


def stack_of(patches: Sequence[Patch]) -> List[Tuple[Patch, Mail]]:
	"""The patches with their mails, as commit_stack() takes them."""
	return [(p, p.mail()) for p in patches]


def commit_stack(wt: Path, branch: str, stack: Stack, trailers: bool = False,
		 tail: Optional[Callable[[Patch], str]] = None) -> str:
	"""(Re)make branch in worktree wt: one commit per patch on tb-base,
	each with the patch's author, date and changelog (and its Tb-Patch
	trailer, or tail(patch) appended); return the tip."""
	git(wt, 'checkout', '-q', '-f', '-B', branch, BASE_TAG)
	git(wt, 'clean', '-q', '-f', '-d')
	for p, mail in stack:
		r = subprocess.run(['git', '-C', str(wt), 'apply', '--index', '-p1', '-'],
				   input=mail.diff, capture_output=True, text=True)
		if r.returncode:
			raise Failed(f'patch {p.number} ({p.slug}) does not apply:\n{r.stderr[-2000:]}')
		message = mail.subject + (f'\n\n{mail.body}' if mail.body.strip() else '\n')
		if trailers:
			message = with_trailer(message, trailer(p))
		if tail:
			message = with_trailer(message, tail(p).rstrip('\n'))
		name, addr = email.utils.parseaddr(mail.author)
		env = fixed_env(GIT_AUTHOR_NAME=name or addr, GIT_AUTHOR_EMAIL=addr)
		if mail.date:
			env['GIT_AUTHOR_DATE'] = mail.date
		git(wt, 'commit', '-q', '--allow-empty', '--no-verify', '--cleanup=verbatim',
		    '-F', '-', input=message, env=env)
	return git(wt, 'rev-parse', 'HEAD')


def slugify(subject: str) -> str:
	words = re.sub(r'^[\w/ -]+?: ', '', subject).lower()
	return re.sub(r'[^a-z0-9]+', '-', words).strip('-')[:40].strip('-') or 'patch'


def format_commit(wt: Path, commit: str, message: str) -> str:
	"""The stored form of one commit: what git format-patch writes for a
	copy of it whose changelog is message (the Tb-Patch trailer taken
	out), with the same author, date, tree and parent."""
	name, email, date = git(wt, 'log', '-1', '--format=%an%x00%ae%x00%ad', '--date=raw',
				commit).split('\0')
	env = fixed_env(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email, GIT_AUTHOR_DATE=date)
	copy = git(wt, 'commit-tree', f'{commit}^{{tree}}', '-p', f'{commit}^', '-F', '-',
		   input=message, env=env)
	return git(wt, *FORMAT_CONFIG, *FORMAT_ARGS, '-1', copy, strip=False)


def read_branch(wt: Path, tip: str, base: str = BASE_TAG) -> List[Tuple[Patch, str]]:
	"""[(Patch, its file's text)] of the commits base..tip, in order.

	A commit names its patch in its Tb-Patch trailer; one without
	(a new commit) becomes a patch named after its subject."""
	out: List[Tuple[Patch, str]] = []
	for n, c in enumerate(git(wt, 'rev-list', '--reverse', f'{base}..{tip}').split(), 1):
		where = f'commit {c[:12]}'
		message, value = without_trailer(git(wt, 'log', '-1', '--format=%B', c, strip=False),
						 where)
		if re.search(r'^---$', message, re.M):
			raise Failed(f'{where}: a changelog line "---" would end it for git am')
		if value:
			words = value.split()
			p = patchset.parse_words(n, words[0], words[1:], where)
		else:
			p = Patch(n, slugify(message.partition('\n')[0]))
		if p.slug in {q.slug for q, _ in out}:
			raise Failed(f'two commits are named {p.slug} ({where})')
		out.append((p, format_commit(wt, c, message)))
	return out


def write_series(stack: Sequence[Tuple[Patch, str]]) -> List[Patch]:
	"""The patch files and the series list; stale patch files removed."""
	series_dir, series = patchset.SERIES_DIR, patchset.SERIES
	header = patchset.series_header(series)
	slugs = {p.slug for p, _ in stack}
	for f in series_dir.glob('*.patch'):
		if f.stem not in slugs:
			f.unlink()
	for p, text in stack:
		f = series_dir / f'{p.slug}.patch'
		if not f.exists() or f.read_text() != text:
			f.write_text(text)
	patches = [p for p, _ in stack]
	series.write_text(patchset.series_text(patches, header))
	return patches


def copy_files(dst: Path, pristine: Path, paths: Iterable[str]) -> Path:
	"""The pristine files among paths (those that exist there), copied
	into dst; return dst."""
	for path in paths:
		if (pristine / path).exists():
			(dst / path).parent.mkdir(parents=True, exist_ok=True)
			shutil.copyfile(pristine / path, dst / path)
	return dst


def sparse_repo(dst: Path, pristine: Path, paths: Iterable[str]) -> Path:
	"""A new git repository at dst whose one commit, tagged tb-base,
	holds the pristine files among paths (those that exist there)."""
	shutil.rmtree(dst, ignore_errors=True)
	dst.mkdir(parents=True)
	git(dst, 'init', '-q')
	copy_files(dst, pristine, paths)
	git(dst, 'add', '-A', '-f', '.')
	git(dst, 'commit', '-q', '--allow-empty', '-m', 'base', env=fixed_env())
	git(dst, 'tag', BASE_TAG)
	return dst
