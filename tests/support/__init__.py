"""Helpers shared by the tests: real servers on loopback, fixtures, paths."""
