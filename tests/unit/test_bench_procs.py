"""strata_dev.bench.procs: CPU time of a process tree, from /proc."""

from __future__ import annotations

import subprocess
import sys

from strata_dev.bench.procs import CpuMeter, cpu_seconds, tree


def test_a_child_process_and_its_own_children_are_counted() -> None:
    # A parent that starts a busy child and waits: the child's CPU belongs to the parent's tree.
    script = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
              "'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass\\n"
              "import sys; sys.stdout.write(\"done\"); sys.stdout.flush(); time.sleep(30)'])")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None and parent.stdout.read(4) == b"done"
        members = tree(parent.pid)
        assert parent.pid in members and len(members) == 2
        assert cpu_seconds(parent.pid) >= 0.25  # 0.3 s of the child's CPU, read in clock ticks
    finally:
        for pid in reversed(tree(parent.pid)):
            subprocess.run(["kill", str(pid)], check=False)
        parent.wait()


def test_a_process_that_is_gone_counts_nothing() -> None:
    assert cpu_seconds(2**22 + 1) == 0.0  # above the largest pid Linux can hand out


def test_the_meter_reports_per_unit_largest_first_and_this_process_as_bench() -> None:
    meter = CpuMeter({}).start()
    total = 0
    for i in range(2_000_000):
        total += i
    used = meter.stop()
    assert set(used) == {"bench"} and used["bench"] > 0
    meter.used = {"a": 0.5, "b": 2.0, "idle": 0.0}
    assert list(meter.per(10).items()) == [("b", 200.0), ("a", 50.0)]
