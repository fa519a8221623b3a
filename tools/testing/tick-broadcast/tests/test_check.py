# SPDX-License-Identifier: GPL-2.0
"""check: which of our C files are objects of their own."""

import unittest

import check


class IncludedSources(unittest.TestCase):
	def test_a_suite_included_by_its_source_is_no_object(self):
		files = {
			'kernel/time/tick-broadcast.c': '#include "tick-internal.h"\n'
							'#include "tests/tick_broadcast_devices_kunit.c"\n',
			'kernel/time/tests/tick_broadcast_devices_kunit.c': '#include <kunit/test.h>\n',
			'kernel/time/tests/tick_broadcast_kunit.c': '#include "../tick-broadcast-core.h"\n',
		}
		self.assertEqual(check.included_sources(list(files), files.__getitem__),
				 {'kernel/time/tests/tick_broadcast_devices_kunit.c'})


if __name__ == '__main__':
	unittest.main()


class KerneldocCoverage(unittest.TestCase):
	"""Upstream's functions the series leaves alone need no kernel-doc of
	ours; a changed one does."""

	OLD = 'int a(void)\n{\n\treturn 1;\n}\n\nvoid b(int x)\n{\n\tx++;\n}\n'

	def test_definitions_up_to_the_closing_brace(self):
		got = check.function_texts(self.OLD)
		self.assertEqual(set(got), {'a', 'b'})
		self.assertEqual(got['a'], 'int a(void)\n{\n\treturn 1;')

	def test_only_identical_definitions_are_upstreams(self):
		new = self.OLD.replace('x++', 'x--')
		old, cur = check.function_texts(self.OLD), check.function_texts(new)
		self.assertEqual({n for n, t in cur.items() if old.get(n) == t}, {'a'})
