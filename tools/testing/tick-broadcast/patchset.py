# SPDX-License-Identifier: GPL-2.0
"""The series as data: a stack of patches over the pristine base.

series/ is a quilt patch directory: series/series lists the patches in
order, one `git format-patch` file a line, and series/<slug>.patch is
each patch, its changelog and its diff in one mail. `git am` takes the
files as they are, and so does quilt (QUILT_PATCHES=series). What the
testbed knows of a patch follows a '#' on its line, which quilt and git
never read:

	<slug>.patch	# [base] [fix [case=NAME...]]

"base": the pristine tree gets the patch too (the test cpuidle driver
and the KUnit suites that test both implementations), so that both
kernels are tested and benchmarked the same way; every patch goes into
ours. "fix": a standalone fix of the pristine code, which `make series
PART=fixes` exports alone; each must apply to the pristine base. A fix
names the KUnit cases that fail on the base because of its bug
(case=NAME, the case's name in its suite): they are the base's known
failures, and `tb.py series proof` shows each fail before its fix and
pass after it.

The files the series creates, and the two it replaces wholly
(OWN_FILES), are also kept at their kernel paths in the repository, as
the last patch leaves them, for reading; mismatches() says where they
differ from the stack (a unit test fails then). Changes to other
upstream files (Kconfig, Makefile, MAINTAINERS, ...) live in the
patches only.

This module knows nothing of builds, git repositories or QEMU (it runs
git apply on files in a temporary directory): it turns the series into
file contents, and imports nothing of the testbed.
"""

import email.header
import enum
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parents[2]
SERIES_DIR = TOOLS / 'series'
SERIES = SERIES_DIR / 'series'
TREES = ('ours', 'base')
WORDS = ('base', 'fix')
# Upstream files the series replaces as a whole: ours at the end.
OWN_FILES = ('kernel/time/tick-broadcast.c', 'kernel/time/tick-broadcast-hrtimer.c')

# {tree path: contents, or None where the series deletes the file}
FileState = Dict[str, Optional[bytes]]


class SeriesError(Exception):
	"""The series list or one of its patches is broken."""


@dataclass(frozen=True)
class Mail:
	"""A git format-patch file, taken apart as git am takes it apart."""
	author: str
	date: str
	subject: str
	body: str
	diff: str


def parse_mail(text: str, where: str = 'patch') -> Mail:
	"""The parts of one git format-patch file, as git am takes it apart:
	the headers up to the first blank line (the mbox From_ line skipped,
	folded lines joined, RFC 2047 words decoded), the changelog up to
	'---' or the first diff, the diff from its first 'diff --git' line to
	git's signature."""
	head, sep, rest = text.partition('\n\n')
	if not sep:
		raise SeriesError(f'{where}: no blank line after the mail headers')
	headers: Dict[str, str] = {}
	key = ''
	for line in head.splitlines():
		if line.startswith('From ') and not headers:
			continue
		if line[:1] in (' ', '\t') and key:
			headers[key] += ' ' + line.strip()
			continue
		key, _, value = line.partition(':')
		key = key.lower()
		headers[key] = value.strip()
	if 'subject' not in headers or 'from' not in headers:
		raise SeriesError(f'{where}: no From: or Subject: header')
	decoded = {k: str(email.header.make_header(email.header.decode_header(v)))
		   for k, v in headers.items()}
	subject = re.sub(r'^(\[[^\]]*\]\s*)+', '', decoded['subject'])
	m = re.search(r'^(---|diff --git .*)$', rest, re.M)
	body = rest[:m.start()] if m else rest
	d = re.search(r'^diff --git ', rest, re.M)
	if not d:
		raise SeriesError(f'{where}: no diff')
	diff = re.sub(r'\n-- \n\d+(\.\d+)+\S*\n*$', '\n', rest[d.start():])
	return Mail(decoded['from'], decoded.get('date', ''), subject.strip(),
		    body.strip('\n') + '\n', diff)


@dataclass(frozen=True)
class Patch:
	"""One patch of the series: number is its place, 1 first."""
	number: int
	slug: str
	base: bool = False
	fix: bool = False
	cases: Tuple[str, ...] = ()

	@property
	def path(self) -> Path:
		return SERIES_DIR / f'{self.slug}.patch'

	@property
	def trees(self) -> Tuple[str, ...]:
		return ('ours', 'base') if self.base else ('ours',)

	def mail(self) -> Mail:
		if not self.path.exists():
			raise SeriesError(f'{self.path.name}: listed in the series but missing')
		return parse_mail(self.path.read_text(), self.path.name)

	def message(self) -> Tuple[str, str]:
		"""(subject, body) of the changelog."""
		m = self.mail()
		return m.subject, m.body

	def diff_text(self) -> str:
		return self.mail().diff

	def words(self) -> List[str]:
		"""What the series list says of the patch after its '#'."""
		return ((['base'] if self.base else []) + (['fix'] if self.fix else []) +
			[f'case={c}' for c in self.cases])

	def series_line(self) -> str:
		words = self.words()
		return f'{self.slug}.patch' + (f'\t# {" ".join(words)}' if words else '')


def parse_words(number: int, slug: str, words: Sequence[str], where: str) -> Patch:
	"""A Patch from its slug and the words after its '#'."""
	cases = tuple(w[len('case='):] for w in words if w.startswith('case='))
	flags = [w for w in words if not w.startswith('case=')]
	if any(f not in WORDS for f in flags) or (cases and 'fix' not in flags) or \
			not re.fullmatch(r'[a-z0-9][a-z0-9-]*', slug):
		raise SeriesError(f'{where}: want "SLUG.patch [# [base] [fix [case=NAME...]]]" '
				  'with a slug of lower-case letters, digits and dashes')
	return Patch(number, slug, 'base' in flags, 'fix' in flags, cases)


def parse_series(text: str, where: str = 'series') -> List[Patch]:
	"""[Patch] from the text of the series list."""
	patches: List[Patch] = []
	for n, raw in enumerate(text.splitlines(), 1):
		if not raw.strip():
			continue
		if raw.lstrip().startswith('#'):
			if patches:
				raise SeriesError(f'{where}:{n}: comments go above the first patch '
						  '(edit and save keep only those)')
			continue
		name, _, meta = raw.partition('#')
		words = name.split()
		if len(words) != 1 or not words[0].endswith('.patch'):
			raise SeriesError(f'{where}:{n}: want one patch file a line, not "{raw}"')
		patches.append(parse_words(len(patches) + 1, words[0][:-len('.patch')],
					   meta.split(), f'{where}:{n}'))
	slugs = [p.slug for p in patches]
	if len(set(slugs)) != len(slugs):
		raise SeriesError(f'{where}: a patch is listed twice')
	return patches


def load(series: Optional[Path] = None) -> List[Patch]:
	"""[Patch] in series order (of the series list SERIES unless given)."""
	series = series or SERIES
	return parse_series(series.read_text(), series.name)


def series_header(series: Optional[Path] = None) -> str:
	"""The comment lines at the top of the series list, kept on save."""
	series = series or SERIES
	lines = []
	for line in series.read_text().splitlines() if series.exists() else []:
		if line.strip() and not line.lstrip().startswith('#'):
			break
		lines.append(line)
	return '\n'.join(lines).rstrip('\n') + '\n' if lines else ''


def series_text(patches: Sequence[Patch], header: str) -> str:
	return header + ''.join(p.series_line() + '\n' for p in patches)


def diff_paths(text: str) -> List[str]:
	"""Tree paths a git diff changes, in order."""
	return re.findall(r'^diff --git a/\S+ b/(\S+)$', text, re.M)


def known_base_failures(patches: Optional[List[Patch]] = None) -> Dict[str, str]:
	"""{KUnit case name: the fix of the base that makes it pass}."""
	return {c: p.slug for p in (load() if patches is None else patches) for c in p.cases}


def patches_for(tree: str, patches: Optional[List[Patch]] = None) -> List[Patch]:
	return [p for p in (load() if patches is None else patches) if tree in p.trees]


# The cover letters: cover.msg for the whole series, cover-fixes.msg for
# the fixes alone. The line COVER_LIST in either becomes cover_list().
COVERS = ('cover', 'cover-fixes')
COVER_LIST = '@@PATCHES@@'
COVER_GROUPS = (
	('stable', 'Fixes for stable: a user can hit the bug, on the path the changelog\n'
		   'names; with the case of the devices suite that fails without each:'),
	('fix', 'Fixes of bugs an in-tree path reaches:'),
	('hardening', 'Hardening: bugs that no in-tree caller is known to reach in normal\n'
		       'operation:'),
	('base', 'Test tooling, which runs on the code before and after the rewrite:'),
	('rest', 'The rewrite:'),
)
# What a changelog says of the fix's reach, read by fix_group().
STABLE_TAG = 'Cc: stable@vger.kernel.org'
NO_CALLER = 'No in-tree caller is known to reach'


def fix_group(p: Patch) -> str:
	"""stable, fix or hardening, as the fix's changelog says: its Cc:
	stable tag, or the sentence that no in-tree caller reaches the bug."""
	body = p.message()[1]
	if STABLE_TAG in body.splitlines():
		return 'stable'
	return 'hardening' if NO_CALLER in ' '.join(body.split()) else 'fix'


def cover_list(patches: Sequence[Patch]) -> str:
	"""The cover letter's list of patches, numbered as git format-patch
	numbers them, in groups: the fixes (for stable, the others, the
	hardening), the tests that run on the current code, the rest."""
	def group(p: Patch) -> str:
		return fix_group(p) if p.fix else 'base' if p.base else 'rest'
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


def cover_message(patches: Sequence[Patch]) -> Tuple[str, str]:
	"""(subject, body) of the cover letter of patches, its list filled in."""
	name = 'cover-fixes' if patches and all(p.fix for p in patches) else 'cover'
	f = SERIES_DIR / f'{name}.msg'
	subject, _, body = f.read_text().partition('\n')
	if COVER_LIST not in body:
		raise SeriesError(f'{name}.msg: no {COVER_LIST} line for the list of patches')
	return subject.strip(), body.strip('\n').replace(COVER_LIST, cover_list(patches)) + '\n'


def apply_diff(text: str, state: FileState, pristine: Path, name: str = 'patch') -> None:
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


def tree_files(tree: str, pristine: Path, upto: Optional[int] = None,
	       patches: Optional[List[Patch]] = None) -> FileState:
	"""{tree path: bytes or None (deleted)} the series sets in tree.

	upto limits it to the first upto patches of the series (by number).
	"""
	state: FileState = {}
	for p in patches_for(tree, patches):
		if upto is not None and p.number > upto:
			break
		apply_diff(p.diff_text(), state, pristine, p.path.name)
	return state


def touched_paths(patches: Optional[List[Patch]] = None) -> List[str]:
	"""Every tree path some patch of the series changes."""
	out: Dict[str, None] = {}
	for p in load() if patches is None else patches:
		out.update(dict.fromkeys(diff_paths(p.diff_text())))
	return sorted(out)


def own_files(pristine: Path, state: FileState) -> List[str]:
	"""The paths of state kept in the repository: new files and OWN_FILES."""
	return sorted(p for p, data in state.items()
		      if data is not None and (p in OWN_FILES or not (pristine / p).exists()))


class Drift(enum.Enum):
	"""How a file at a kernel path disagrees with the series."""
	DIFFERS = 'differs from what the series makes of it'
	MISSING = 'missing in the repository, though the series makes it'
	STRAY = 'in the repository, but no patch of the series makes it'


@dataclass(frozen=True)
class Mismatch:
	path: str
	drift: Drift

	def __str__(self) -> str:
		return f'{self.path}: {self.drift.value}'


def mismatches(pristine: Path, repo: Optional[Path] = None,
	       patches: Optional[List[Patch]] = None,
	       state: Optional[FileState] = None) -> List[Mismatch]:
	"""Where the repository's own files disagree with the stack (state:
	what it makes of ours, if known): a file the series makes that
	differs or is missing, or a file at one of our paths that the series
	does not make."""
	repo = repo or REPO
	if state is None:
		state = tree_files('ours', pristine, patches=patches)
	own = own_files(pristine, state)
	bad = []
	for path in own:
		f = repo / path
		if not f.exists():
			bad.append(Mismatch(path, Drift.MISSING))
		elif f.read_bytes() != state[path]:
			bad.append(Mismatch(path, Drift.DIFFERS))
	bad += [Mismatch(path, Drift.STRAY) for path in stray_files(repo, own)]
	return bad


# Where the repository keeps kernel files (everything else is tooling).
KERNEL_DIRS = ('kernel', 'drivers', 'include', 'Documentation', 'arch')


def stray_files(repo: Path, own: Sequence[str]) -> List[str]:
	"""Files under the repository's kernel directories that are not among
	own (new kernel files written at a kernel path instead of into a patch)."""
	found = []
	for d in KERNEL_DIRS:
		for f in sorted((repo / d).rglob('*')) if (repo / d).is_dir() else ():
			rel = f.relative_to(repo).as_posix()
			if f.is_file() and rel not in own:
				found.append(rel)
	return found


def repo_paths(pristine: Path) -> List[str]:
	"""The repository's own files of the series, at their kernel paths."""
	return own_files(pristine, tree_files('ours', pristine))
