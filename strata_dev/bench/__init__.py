"""``strata bench``: benchmarks that print one JSON object each, with ratios against a baseline
measured in the same run (so numbers stay meaningful on a noisy shared machine)."""
