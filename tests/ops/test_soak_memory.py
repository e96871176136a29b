"""The soak's memory series (benchmarks.soak_memory): each process's RSS a minute, and the
slope of its second half, which says whether a process levels off after its warm-up."""

from __future__ import annotations

from benchmarks.soak_memory import RssSeries, slope_mb_per_hour


def test_slope_is_megabytes_an_hour_by_least_squares():
    points = [(0, 100.0), (1800, 110.0), (3600, 120.0)]

    assert slope_mb_per_hour(points) == 20.0
    assert slope_mb_per_hour([(0, 100.0)]) is None


def test_a_process_that_levels_off_has_a_flat_second_half_whatever_its_warm_up():
    series = RssSeries(every=60)
    for minute in range(61):
        series.started -= 60  # an hour of samples without waiting an hour
        warm = 150.0 + min(minute, 20)  # grows 20 MB in its first 20 minutes, then holds
        series.sample({"web worker": [(11, warm), (12, 150.0 + minute / 2)]})

    summary = series.summary()

    assert set(summary) == {"web worker 11", "web worker 12"}
    levelled, growing = summary["web worker 11"], summary["web worker 12"]
    assert levelled["first_mb"] == 150.0 and levelled["max_mb"] == levelled["last_mb"] == 170.0
    assert levelled["second_half_slope_mb_per_h"] == 0.0
    assert levelled["slope_mb_per_h"] > 5
    assert growing["second_half_slope_mb_per_h"] == growing["slope_mb_per_h"] == 30.0
