# SPDX-License-Identifier: GPL-2.0
"""Test rows and their statuses, and the one place that prints them.

Every test of the testbed ends as a Row: its name (scenario/hpet-halt/ours,
kunit/base/tick_broadcast_live.masks, ...), a Status, and a detail (why
it failed, or what it measured); a scenario's or a stress boot's row also
carries its output directory and its figures. print_rows() prints rows
as make check does, summary() the last line of a run, which starts with
"N passed, N failed" (.ci/run greps that).

A known failure of the pristine base (a scenario's base_known, a KUnit
case that a fix of the series names, a stress boot with the base's
known signature) is the base's own, not the series': expect_failure()
turns such a row, failed, into XFAIL, its detail the reason and then
what failed. If it passed, it is XPASS, printed with a note that it was
expected to fail (a base case that no longer shows its bug is worth a
look, but a race of the base's need not show every time). Only FAIL
fails a run.

Bottom layer: imports nothing of the testbed.
"""

import enum
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, Generic, Iterable, Optional, TypeVar


class Status(enum.Enum):
	"""How a test ended; the value is its word in lower case, as the rows
	carried it when they were tuples."""
	PASS = 'pass'
	FAIL = 'fail'
	SKIP = 'skip'
	XFAIL = 'xfail'		# a known failure of the pristine base, with its reason
	XPASS = 'xpass'		# ...that did not fail this time

	@classmethod
	def of(cls, ok: bool) -> 'Status':
		return cls.PASS if ok else cls.FAIL


# What a row carries besides its verdict: a scenario boot's metrics, a
# stress boot's summary.
M = TypeVar('M')


@dataclass
class Row(Generic[M]):
	"""One test: name, status, detail; a boot's output directory and figures."""
	name: str
	status: Status
	detail: str = ''
	outdir: Optional[Path] = None
	metrics: Optional[M] = None


@dataclass
class Check:
	"""One check of a boot's verdict: its name (finished, lateness, ...),
	whether it held, and what was seen."""
	name: str
	ok: bool
	detail: str


def expect_failure(row: Row[M], why: str) -> Row[M]:
	"""row of a test known to fail for the reason why (a failure of the
	pristine base's own): failed, it is an expected failure (XFAIL) whose
	detail gives the reason, then what failed; passed, an unexpected pass
	(XPASS) with a note that it was expected to fail. Neither fails a
	run. A skip, or an empty why, leaves row as it is."""
	if not why:
		return row
	if row.status is Status.FAIL:
		return replace(row, status=Status.XFAIL, detail=f'{why}; this run: {row.detail}')
	if row.status is Status.PASS:
		note = f'passed, though expected to fail: {why}'
		return replace(row, status=Status.XPASS,
			       detail=f'{row.detail}; {note}' if row.detail else note)
	return row


def line(row: Row) -> str:
	"""A row as make check prints it: status and name, and the detail of
	a failure, expected or not, on the next line."""
	text = f'{row.status.name:4} {row.name}'
	if row.status in (Status.FAIL, Status.XFAIL, Status.XPASS):
		text += f'\n     {row.detail}'
	return text


def print_rows(rows: Iterable[Row]) -> None:
	for row in rows:
		print(line(row), flush=True)


def counts(rows: Iterable[Row]) -> Dict[Status, int]:
	"""{status: how many rows have it}, every status included."""
	n = Counter(row.status for row in rows)
	return {st: n[st] for st in Status}


def summary(rows: Iterable[Row]) -> str:
	"""The last line of a run: "N passed, N failed" (.ci/run greps that),
	then the other statuses."""
	n = counts(rows)
	return (f'{n[Status.PASS]} passed, {n[Status.FAIL]} failed, {n[Status.SKIP]} skipped, '
		f'{n[Status.XFAIL]} expected failures, {n[Status.XPASS]} unexpected passes')


def failed(rows: Iterable[Row]) -> bool:
	"""Whether a row failed: what makes a run exit non-zero (an expected
	failure does not)."""
	return any(row.status is Status.FAIL for row in rows)


def exit_status(rows: Iterable[Row]) -> int:
	return 1 if failed(rows) else 0
