# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the testbed: python3 tools/testing/tick-broadcast/tb.py unit."""
