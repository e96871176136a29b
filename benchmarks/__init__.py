"""Benchmarks that can be rerun: each module prints its figures; see the README."""
