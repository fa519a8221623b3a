# SPDX-License-Identifier: GPL-2.0
"""The README agrees with what it describes: its length, every count it
gives, every make target, tb.py command and module it names."""

import argparse
import re
import subprocess
import unittest

import patchset
import scenarios
import tb
from layers import TOOLS

REPO = TOOLS.parents[2]
README = REPO / 'README.md'
MAX_LINES = 200
WORDS = ('zero one two three four five six seven eight nine ten eleven twelve thirteen '
	 'fourteen fifteen sixteen seventeen eighteen nineteen twenty').split()
# Commands of the kernel tree the README names.
KERNEL_TOOLS = {'kunit'}
NUMBER = r'\b(\d+|' + '|'.join(WORDS) + r')\b'


def number(word):
	return int(word) if word.isdigit() else WORDS.index(word.lower())


def counts_in(text):
	"""[(number, what)] for every "<number> [adjective] patches|fixes|
	scenarios" in text."""
	return [(number(m.group(1)), m.group(2)) for m in re.finditer(
		NUMBER + r'\s+(?:[a-z-]+\s+)?(patches|fixes|scenarios)\b', text, re.I)]


def actual():
	patches = patchset.load()
	return {'patches': len(patches), 'fixes': sum(p.fix for p in patches),
		'scenarios': len(scenarios.SCENARIOS)}


class Readme(unittest.TestCase):
	def setUp(self):
		self.text = README.read_text()

	def test_short(self):
		self.assertLessEqual(len(self.text.splitlines()), MAX_LINES)

	def test_every_count_is_the_series(self):
		want = actual()
		for n, what in counts_in(self.text):
			self.assertEqual(n, want[what.lower()], f'README: "{n} {what}"')

	def test_the_count_finder_finds_counts(self):
		self.assertEqual(counts_in('the 24 patches start with the nine standalone fixes; '
					   'Nine fixes, 3 scenarios'),
				 [(24, 'patches'), (9, 'fixes'), (9, 'fixes'), (3, 'scenarios')])

	def test_every_make_target_exists(self):
		r = subprocess.run(['make', '-s', '-C', str(REPO), 'help'], capture_output=True,
				   text=True)
		targets = set(re.findall(r'^  make (\S+)', r.stdout, re.M))
		self.assertIn('check', targets)
		named = re.findall(r'`make ([a-z][\w-]*)', self.text)
		named += re.findall(r'^make ([a-z][\w-]*)', self.text, re.M)	# in code blocks
		self.assertIn('absorb', named)
		for t in named:
			self.assertIn(t, targets, f'README names make {t}')

	def test_every_tb_command_exists(self):
		sub = [a for a in tb.parser()._actions if isinstance(a, argparse._SubParsersAction)]
		commands = set(sub[0].choices)
		actions = [a for a in sub[0].choices['series']._actions if a.dest == 'action']
		series = set(actions[0].choices or ())
		for cmd, sub in re.findall(r'tb\.py ([a-z][\w-]*)(?: ([a-z][\w-]*))?', self.text):
			self.assertIn(cmd, commands, f'README names tb.py {cmd}')
			if cmd == 'series' and sub:
				self.assertIn(sub, series, f'README names tb.py series {sub}')

	def test_every_module_exists(self):
		for name in set(re.findall(r'`([a-z]+)\.py`', self.text)) - KERNEL_TOOLS:
			self.assertTrue((TOOLS / f'{name}.py').exists() or
					(TOOLS / 'tests' / f'{name}.py').exists(), f'README names {name}.py')
