"""The cost line's rate probes on a shared machine: a repeat preempted by other work is timed by its
CPU time, and the share of the cores the search gets is the probes' CPU time over their wall time, so
that the other work counts once in the estimate (wall time = work / rate / share)."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from lssvm.cli import _cost


class _Clock:
    """Every timed repeat takes ``cpu`` seconds of CPU and ``slowdown`` times that of wall time."""

    def __init__(self, cpu, slowdown):
        self.cpu, self.slowdown = cpu, slowdown
        self.n_wall = self.n_cpu = 0

    def perf_counter(self):
        self.n_wall += 1
        return self.slowdown * self.cpu * (self.n_wall // 2)

    def process_time(self):
        self.n_cpu += 1
        return self.cpu * (self.n_cpu // 2)


def _one_thread(monkeypatch, threads=1, others=9.0):
    @contextmanager
    def scope(n_jobs):
        yield SimpleNamespace(threads=threads, usable=threads)

    monkeypatch.setattr(_cost, "thread_scope", scope)
    monkeypatch.setattr(_cost, "other_runnable", lambda: others)


def test_preempted_probes_count_the_other_work_once(monkeypatch):
    _one_thread(monkeypatch)
    cpu = 0.01
    monkeypatch.setattr(_cost, "time", _Clock(cpu, slowdown=10.0))
    rates = _cost.machine_rates()
    assert rates.gemm == pytest.approx(2 * 384**3 / cpu)  # the repeat's CPU time, not its wall time
    assert rates.eigh == pytest.approx(9 * 384**3 / cpu)
    assert rates.stream == pytest.approx((1 << 20) / cpu)
    assert rates.share == pytest.approx(0.1)  # CPU over wall of the probes
    # the estimate: the work at the unloaded rate, over the share: 10x the CPU time, not 100x
    cost = _cost.estimate_cost("sparse", 2000, 10, 5, 21, rate=rates)
    unloaded = _cost.MachineRates(rates.gemm, rates.eigh, rates.stream, share=1.0)
    assert cost.seconds == pytest.approx(10 * _cost.estimate_cost("sparse", 2000, 10, 5, 21, rate=unloaded).seconds)


def test_unloaded_probes_are_timed_by_the_wall_clock(monkeypatch):
    _one_thread(monkeypatch, others=0.0)
    clock = _Clock(0.02, slowdown=1.0)
    monkeypatch.setattr(_cost, "time", clock)
    rates = _cost.machine_rates()
    assert rates.gemm == pytest.approx(2 * 384**3 / 0.02)
    assert rates.share == pytest.approx(1.0)


def test_several_threads_keep_wall_times_and_the_runnable_count(monkeypatch):
    _one_thread(monkeypatch, threads=2, others=2.0)
    monkeypatch.setattr(_cost, "time", _Clock(0.01, slowdown=10.0))
    rates = _cost.machine_rates()
    assert rates.gemm == pytest.approx(2 * 384**3 / 0.1)
    assert rates.share == pytest.approx(2 / (2 + 2.0))


def test_probe_best_time_takes_the_fastest_repeat():
    probe = _cost._Probe(one_thread=True)
    assert probe.best_time(lambda: sum(range(20000)), repeats=3) > 0
    assert 0 < probe.share() <= 1
    assert _cost._Probe(one_thread=False).share() is None
