# SPDX-License-Identifier: GPL-2.0
"""The configurations a build bot would try, compiled with W=1.

Each variant starts from a known configuration, changes a few symbols
with scripts/config, checks after olddefconfig that the change held (a
variant that silently fell back to the default config tests nothing),
and compiles the directories the series touches. Any warning or error
fails the variant. Every variant has its own build directory inside the
tree, so a second run only recompiles what changed; ccache makes the
first one cheap where the sources match an earlier build.
"""

import re
import subprocess
import time
from pathlib import Path
from typing import Collection, Dict, Iterable, List, Optional, Sequence, Tuple

from arches import ARCHES
from results import Row, Status

# name: (arch, start, {symbol: y/n/m to set}, {symbol: value to expect}, targets)
# start "tested" is the x86_64 scenario kernel's .config; "defconfig" is
# the architecture's defconfig plus our KUnit suites.
# (arch, start, {symbol: value}, {symbol: value}, [target])
Variant = Tuple[str, str, Dict[str, str], Dict[str, str], List[str]]
VARIANTS: Dict[str, Variant] = {
	'periodic': ('x86_64', 'tested',
		     {'NO_HZ_IDLE': 'n', 'HZ_PERIODIC': 'y', 'HIGH_RES_TIMERS': 'n'},
		     {'TICK_ONESHOT': 'n', 'GENERIC_CLOCKEVENTS_BROADCAST': 'y'},
		     ['kernel/time/', 'drivers/cpuidle/']),
	'up': ('x86_64', 'tested', {'SMP': 'n'},
	       {'SMP': 'n', 'HOTPLUG_CPU': 'n', 'GENERIC_CLOCKEVENTS_BROADCAST': 'y'},
	       ['kernel/time/', 'drivers/cpuidle/']),
	'no-tracing': ('x86_64', 'tested', {'FTRACE': 'n', 'KPROBES': 'n'},
		       {'TRACING': 'n', 'TRACEPOINTS': 'n'}, ['kernel/time/', 'drivers/cpuidle/']),
	'arm64': ('arm64', 'defconfig', {}, {'GENERIC_CLOCKEVENTS_BROADCAST': 'y',
					     'TICK_BROADCAST_CORE': 'y'}, ['kernel/time/']),
	# Suspend, hibernation and kexec select HOTPLUG_CPU on arm64.
	'arm64-no-hotplug': ('arm64', 'defconfig', {'HOTPLUG_CPU': 'n', 'SUSPEND': 'n',
						    'HIBERNATION': 'n', 'KEXEC': 'n',
						    'KEXEC_FILE': 'n', 'CRASH_DUMP': 'n'},
			     {'HOTPLUG_CPU': 'n', 'GENERIC_CLOCKEVENTS_BROADCAST': 'y'},
			     ['kernel/time/']),
}
# Added to every defconfig start, so that our tests compile too.
KUNIT_SYMBOLS = {'KUNIT': 'y', 'TICK_BROADCAST_CORE_KUNIT_TEST': 'y',
		 'TICK_BROADCAST_LIVE_KUNIT_TEST': 'y', 'TICK_BROADCAST_TRACE_KUNIT_TEST': 'y',
		 'DEBUG_FS': 'y'}


def config_value(text: str, sym: str) -> str:
	m = re.search(rf'^CONFIG_{sym}=(\S+)$', text, re.M)
	return m.group(1) if m else 'n'


def set_symbols(src: Path, config: Path, symbols: Dict[str, str]) -> None:
	flag = {'y': '-e', 'n': '-d', 'm': '-m'}
	args: List[str] = []
	for sym, val in symbols.items():
		args += [flag[val], sym]
	if args:
		subprocess.run([str(src / 'scripts' / 'config'), '--file', str(config)] + args,
			       check=True)


def our_messages(out: str, ours: Collection[str]) -> List[str]:
	"""Compiler messages that count: errors anywhere, warnings in our files.

	W=1 also reports what upstream's files have always had (kernel-doc
	warnings in tick-oneshot.c, for one); those are not the series'.
	"""
	msgs = []
	for ln in out.splitlines():
		m = re.match(r'(?:\.\./)?([^:\s]+):\d+(?::\d+)?: (warning|error):', ln)
		if m and (m.group(2) == 'error' or m.group(1) in ours):
			msgs.append(ln)
	return msgs


def forget_objects(builddir: Path, ours: Iterable[str]) -> None:
	"""Remove the objects of our C files, so the next build compiles them.

	An object left from an earlier run would hide the warnings of a file
	that has not changed since; ccache replays them when it recompiles.
	"""
	for path in ours:
		if path.endswith('.c'):
			(builddir / (path[:-2] + '.o')).unlink(missing_ok=True)


def build_variant(src: Path, name: str, tested_config: Path, env: Dict[str, str], jobs: int,
		  ours: Collection[str]) -> Row:
	"""Configure and compile one variant in src; return a test row.

	ours: the tree paths of the series' files, whose warnings count.
	"""
	arch, start, symbols, expect, targets = VARIANTS[name]
	bdir = f'.build-{arch}-{name}' if not name.startswith(arch) else f'.build-{name}'
	# HOSTCC through ccache too: every build directory compiles the same
	# host tools (fixdep, kconfig, objtool) again.
	cross = ARCHES[arch].cross
	make = ['make', '-s', f'-j{jobs}', f'O={bdir}', f'ARCH={arch}',
		f'CC=ccache {cross}gcc', 'HOSTCC=ccache gcc']
	if cross:
		make.append(f'CROSS_COMPILE={cross}')
	(src / bdir).mkdir(exist_ok=True)
	config = src / bdir / '.config'
	t0 = time.time()

	def run(*extra: str) -> 'subprocess.CompletedProcess[str]':
		return subprocess.run(make + list(extra), cwd=src, env=env,
				      capture_output=True, text=True)
	if start == 'tested':
		config.write_bytes(tested_config.read_bytes())
		set_symbols(src, config, symbols)
	else:
		r = run('defconfig')
		if r.returncode:
			return Row(f'configs/{name}', Status.FAIL, r.stderr[-1500:])
		set_symbols(src, config, {**KUNIT_SYMBOLS, **symbols})
	r = run('olddefconfig')
	if r.returncode:
		return Row(f'configs/{name}', Status.FAIL, r.stderr[-1500:])
	text = config.read_text()
	off = {s: config_value(text, s) for s, v in expect.items() if config_value(text, s) != v}
	if off:
		return Row(f'configs/{name}', Status.FAIL,
			   f'after olddefconfig: {off}, wanted {expect}')
	forget_objects(src / bdir, ours)
	r = run('W=1', *targets)
	out = r.stdout + r.stderr
	msgs = our_messages(out, ours)
	if r.returncode and not msgs:
		msgs = out.splitlines()[-10:]
	ok = not r.returncode and not msgs
	return Row(f'configs/{name}', Status.of(ok),
		   f'{arch} {" ".join(f"{k}={v}" for k, v in symbols.items()) or "defconfig"}: '
		   f'{" ".join(targets)} in {time.time() - t0:.0f} s' +
		   ('' if ok else '\n' + '\n'.join(msgs[:15])))


def htmldocs(src: Path, env: Dict[str, str]) -> Row:
	"""make htmldocs SPHINXDIRS=timers: a test row, failing on any warning."""
	t0 = time.time()
	r = subprocess.run(['make', 'O=.build-htmldocs', 'SPHINXDIRS=timers', 'htmldocs'],
			   cwd=src, env=env, capture_output=True, text=True)
	out = r.stdout + r.stderr
	(src / '.build-htmldocs').mkdir(exist_ok=True)
	(src / '.build-htmldocs' / 'htmldocs.log').write_text(out)
	bad = [ln for ln in out.splitlines() if re.search(r'WARNING|ERROR|warning:|error:', ln)]
	ok = not r.returncode and not bad
	return Row('docs/htmldocs-timers', Status.of(ok),
		   f'{time.time() - t0:.0f} s, output in '
		   f'{src}/.build-htmldocs/Documentation/output/timers'
		   if ok else '\n'.join(bad[:15]) or out[-1500:])


def rows(src: Path, tested_config: Path, env: Dict[str, str], jobs: int, ours: Collection[str],
	 names: Optional[Sequence[str]] = None) -> List[Row]:
	"""Test rows of every variant (or names), in order."""
	out = []
	for name in names or VARIANTS:
		row = build_variant(src, name, tested_config, env, jobs, ours)
		print(f'configs: {name}: {row.status.value} ({row.detail.splitlines()[0]})',
		      flush=True)
		out.append(row)
	return out
