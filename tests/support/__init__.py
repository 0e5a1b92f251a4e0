"""Helpers shared by the tests: paths, model builders, golden vectors, emit probes."""
