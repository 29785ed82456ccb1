"""Strata's developer tooling: the local stack, the benchmarks, the `strata` CLI and the function
packager. Installed by `make setup`; never part of a function's deployable source (only `core/` is)."""
