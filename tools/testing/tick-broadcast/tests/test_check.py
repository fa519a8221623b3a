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
		self.assertEqual(check.included_sources(list(files), files.get),
				 {'kernel/time/tests/tick_broadcast_devices_kunit.c'})


if __name__ == '__main__':
	unittest.main()
