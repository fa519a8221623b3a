# SPDX-License-Identifier: GPL-2.0
"""results: how rows print, and the summary line CI reads."""

import contextlib
import io
import re
import unittest
from pathlib import Path
from typing import List

import results
from results import Row, Status

ROWS: List[Row] = [Row('a', Status.PASS, '3 s'), Row('b', Status.FAIL, 'why b'),
		   Row('c', Status.SKIP, 'not here'), Row('d', Status.PASS),
		   Row('e', Status.XFAIL, 'known; this run: why e')]


class Printing(unittest.TestCase):
	def test_a_failure_has_its_detail_under_it(self):
		out = io.StringIO()
		with contextlib.redirect_stdout(out):
			results.print_rows(ROWS)
		self.assertEqual(out.getvalue(), 'PASS a\nFAIL b\n     why b\nSKIP c\nPASS d\n'
				 'XFAIL e\n     known; this run: why e\n')

	def test_summary_starts_as_ci_greps_it(self):
		line = results.summary(ROWS)
		self.assertRegex(line, r'^[0-9]+ passed, [0-9]+ failed')
		self.assertEqual(line, '2 passed, 1 failed, 1 skipped, 1 expected failures, '
				 '0 unexpected passes')
		self.assertEqual(results.summary([]).split(', ')[:2], ['0 passed', '0 failed'])

	def test_only_a_failure_fails_the_run(self):
		self.assertEqual(results.exit_status(ROWS), 1)
		self.assertEqual(results.exit_status([r for r in ROWS if r.status is not Status.FAIL]), 0)
		self.assertEqual(results.exit_status([]), 0)

	def test_an_expected_failure_names_its_reason(self):
		failed = Row('x', Status.FAIL, 'finished: hang', Path('/o'), 7)
		row = results.expect_failure(failed, 'known failure of the base')
		self.assertEqual(row, Row('x', Status.XFAIL,
					  'known failure of the base; this run: finished: hang',
					  Path('/o'), 7))

	def test_an_expected_failure_that_passed_is_an_unexpected_pass_with_a_note(self):
		row: Row = results.expect_failure(Row('x', Status.PASS, '12 s'), 'known')
		self.assertEqual((row.status, row.detail),
				 (Status.XPASS, '12 s; passed, though expected to fail: known'))
		self.assertIn('expected to fail', results.line(row))
		self.assertFalse(results.failed([row]))
		row = results.expect_failure(Row('x', Status.PASS), 'known')
		self.assertEqual(row.detail, 'passed, though expected to fail: known')

	def test_nothing_expected_changes_nothing(self):
		for row in ROWS:
			self.assertEqual(results.expect_failure(row, ''), row)
		skip: Row = Row('x', Status.SKIP, 'no broadcast')
		self.assertEqual(results.expect_failure(skip, 'known'), skip)

	def test_statuses_keep_their_words(self):
		self.assertEqual([s.value for s in Status][:3], ['pass', 'fail', 'skip'])
		self.assertTrue(all(re.fullmatch('[a-z]+', s.value) for s in Status))
		self.assertIs(Status.of(True), Status.PASS)
		self.assertIs(Status.of(False), Status.FAIL)


if __name__ == '__main__':
	unittest.main()
