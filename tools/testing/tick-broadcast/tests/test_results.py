# SPDX-License-Identifier: GPL-2.0
"""results: how rows print, and the summary line CI reads."""

import contextlib
import io
import re
import unittest

import results
from results import Row, Status

ROWS = [Row('a', Status.PASS, '3 s'), Row('b', Status.FAIL, 'why b'),
	Row('c', Status.SKIP, 'not here'), Row('d', Status.PASS)]


class Printing(unittest.TestCase):
	def test_a_failure_has_its_detail_under_it(self):
		out = io.StringIO()
		with contextlib.redirect_stdout(out):
			results.print_rows(ROWS)
		self.assertEqual(out.getvalue(), 'PASS a\nFAIL b\n     why b\nSKIP c\nPASS d\n')

	def test_summary_starts_as_ci_greps_it(self):
		line = results.summary(ROWS)
		self.assertRegex(line, r'^[0-9]+ passed, [0-9]+ failed')
		self.assertTrue(line.startswith('2 passed, 1 failed, 1 skipped'), line)
		self.assertEqual(results.summary([]).split(', ')[:2], ['0 passed', '0 failed'])

	def test_only_a_failure_fails_the_run(self):
		self.assertEqual(results.exit_status(ROWS), 1)
		self.assertEqual(results.exit_status([r for r in ROWS if r.status is not Status.FAIL]), 0)
		self.assertEqual(results.exit_status([]), 0)

	def test_statuses_keep_their_words(self):
		self.assertEqual([s.value for s in Status][:3], ['pass', 'fail', 'skip'])
		self.assertTrue(all(re.fullmatch('[a-z]+', s.value) for s in Status))
		self.assertIs(Status.of(True), Status.PASS)
		self.assertIs(Status.of(False), Status.FAIL)


if __name__ == '__main__':
	unittest.main()
