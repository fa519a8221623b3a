# SPDX-License-Identifier: GPL-2.0
"""Messages and long-running commands of the testbed, with a heartbeat.

Bottom layer: imports nothing of the testbed. Every step that may take
more than a few seconds prints a start line, then a heartbeat line at
least every HEARTBEAT seconds (elapsed time and, where cheap, progress),
and its output goes to a log file whose path is printed.
"""

import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, NoReturn, Optional, Sequence, Tuple

HEARTBEAT = 30		# seconds between two progress lines of one step


class Failed(Exception):
	"""A step failed; the message says which and where its log is."""


def log(msg: str) -> None:
	print(f'tb: {msg}', flush=True)


def die(msg: str) -> NoReturn:
	print(f'tb: error: {msg}', file=sys.stderr, flush=True)
	sys.exit(1)


def run(cmd: Sequence[str], **kw: Any) -> 'subprocess.CompletedProcess[Any]':
	"""Run a short command, die with its name on failure."""
	r = subprocess.run(cmd, **kw)
	if r.returncode:
		die(f'command failed ({r.returncode}): {" ".join(map(str, cmd))}')
	return r


def elapsed(secs: float) -> str:
	secs = int(secs)
	return f'{secs // 60}m{secs % 60:02d}s' if secs >= 60 else f'{secs}s'


def count_lines(path: Path, needle: str) -> int:
	"""How many lines of the log at path contain needle (cheap progress)."""
	try:
		with open(path, 'rb') as f:
			return f.read().count(needle.encode())
	except OSError:
		return 0


def run_logged(cmd: Sequence[str], logfile: Path, what: str, cwd: Optional[Path] = None,
	       env: Optional[Dict[str, str]] = None,
	       progress: Optional[Callable[[Path], str]] = None,
	       interval: float = HEARTBEAT) -> Tuple[int, float]:
	"""Run cmd with stdout and stderr to logfile, printing a heartbeat.

	progress(logfile) -> str, if given, adds e.g. "1234 objects compiled"
	to each heartbeat line. Returns (returncode, seconds).
	"""
	logfile.parent.mkdir(parents=True, exist_ok=True)
	log(f'{what}: started, log {logfile}')
	t0 = time.time()
	with open(logfile, 'w') as out:
		proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out,
					stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
		while True:
			try:
				rc = proc.wait(timeout=interval)
				break
			except subprocess.TimeoutExpired:
				extra = progress(logfile) if progress else ''
				log(f'{what}: {elapsed(time.time() - t0)}'
				    + (f', {extra}' if extra else ''))
	secs = time.time() - t0
	log(f'{what}: {"done" if rc == 0 else f"FAILED (exit {rc})"} in {elapsed(secs)}')
	return rc, secs


def tail(path: Path, chars: int = 6000) -> str:
	try:
		return path.read_text(errors='replace')[-chars:]
	except OSError:
		return ''
