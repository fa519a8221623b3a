# SPDX-License-Identifier: GPL-2.0
"""mutate: the mutant list stays in step with the code, results parse."""

import json
import tempfile
import unittest
from pathlib import Path

import mutate
import workspace


class MutantList(unittest.TestCase):
	def test_every_mutant_applies_once_to_the_repo(self):
		self.assertEqual(mutate.check_list(workspace.REPO), [])

	def test_enough_mutants_of_both_files(self):
		paths = [m.path for m in mutate.MUTANTS]
		self.assertGreaterEqual(len(paths), 25)
		self.assertGreaterEqual(paths.count(mutate.CORE), 10)
		self.assertGreaterEqual(paths.count(mutate.GLUE), 10)

	def test_every_mutant_changes_its_file(self):
		for m in mutate.MUTANTS:
			self.assertNotEqual(m.old, m.new, m.id)


class Results(unittest.TestCase):
	def test_failed_cases_are_named_with_their_suite(self):
		data = {'name': 'KUnit Test Group', 'sub_groups': [
			{'name': 'tick_broadcast_glue', 'status': 'FAIL', 'test_cases': [
				{'name': 'glue_a', 'status': 'PASS'},
				{'name': 'glue_b', 'status': 'FAIL'}]},
			{'name': 'tick_broadcast_live', 'status': 'PASS', 'test_cases': [
				{'name': 'live_a', 'status': 'PASS'}]}]}
		with tempfile.TemporaryDirectory() as d:
			js = Path(d) / 'r.json'
			js.write_text(json.dumps(data))
			failed, summary = mutate.results(js, 'Testing complete. Ran 3 tests: passed: 2')
		self.assertEqual(failed, ['tick_broadcast_glue.glue_b'])
		self.assertEqual(summary, 'Ran 3 tests: passed: 2')

	def test_a_case_that_never_reported_is_named_by_its_suite(self):
		data = {'name': 'KUnit Test Group', 'sub_groups': [
			{'name': 'tick_broadcast_trace', 'test_cases': [
				{'name': 'trace_a', 'status': 'PASS'},
				{'name': '', 'status': 'ERROR'}, {'name': '', 'status': 'ERROR'}]}]}
		with tempfile.TemporaryDirectory() as d:
			js = Path(d) / 'r.json'
			js.write_text(json.dumps(data))
			failed, summary = mutate.results(js, 'timed out after 300 seconds')
		self.assertEqual(failed, ['tick_broadcast_trace (no result)',
					  '(incomplete run: crash or timeout)'])
		self.assertEqual(summary, 'incomplete')

	def test_a_failed_parameter_is_named_with_suite_and_case(self):
		data = {'name': 'KUnit Test Group', 'sub_groups': [
			{'name': 'tick_broadcast_devices', 'test_cases': [
				{'name': 'devices_a', 'status': 'PASS'}], 'sub_groups': [
				{'name': 'devices_p', 'test_cases': [
					{'name': 'oneshot device', 'status': 'PASS'},
					{'name': 'periodic device', 'status': 'FAIL'}]}]}]}
		with tempfile.TemporaryDirectory() as d:
			js = Path(d) / 'r.json'
			js.write_text(json.dumps(data))
			failed, _ = mutate.results(js, 'Testing complete. Ran 3 tests: passed: 2')
		self.assertEqual(failed, ['tick_broadcast_devices.devices_p.periodic device'])

	def test_no_results_counts_as_caught(self):
		failed, _ = mutate.results(Path('/nonexistent.json'), '')
		self.assertTrue(failed)


if __name__ == '__main__':
	unittest.main()
