"""A soak's memory series: each process's RSS sampled every minute, and its slope.

A soak's reports give each kind of process's memory every few minutes, summed over its
processes; whether one process grows, and whether it levels off, needs each process on
its own and often. ``RssSeries`` keeps one sample of every process a minute and gives,
per process, its first, last and largest RSS and its least-squares slope in MB an hour
over the whole run and over its second half (the first minutes' warm-up, caches and
connection pools filling, say nothing of a leak).
"""

from __future__ import annotations

import time


def slope_mb_per_hour(points: list[tuple[float, float]]) -> float | None:
    """Return the least-squares slope of (seconds, MB) points in MB an hour."""
    if len(points) < 2:
        return None
    count = len(points)
    mean_t = sum(t for t, _ in points) / count
    mean_mb = sum(mb for _, mb in points) / count
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return None
    covariance = sum((t - mean_t) * (mb - mean_mb) for t, mb in points)
    return round(covariance / spread * 3600, 2)


class RssSeries:
    """Per-process RSS samples of a soak, keyed ``"<kind> <pid>"``."""

    def __init__(self, every: float = 60.0) -> None:
        self.every = every
        self.started = time.monotonic()
        self.next_at = self.started
        self.samples: list[dict] = []

    def due(self) -> bool:
        return time.monotonic() >= self.next_at

    def sample(self, processes: dict[str, list[tuple[int, float]]]) -> None:
        """Record ``processes`` ({kind: [(pid, MB)]}, as ``Soak.processes`` gives them)."""
        now = time.monotonic()
        self.next_at = now + self.every
        self.samples.append(
            {
                "seconds": round(now - self.started),
                "rss_mb": {
                    f"{kind} {pid}": round(mb, 1)
                    for kind, entries in sorted(processes.items())
                    for pid, mb in entries
                },
            }
        )

    def summary(self) -> dict[str, dict]:
        """Return {process: first, last and largest MB, slopes over all and second half}."""
        if not self.samples:
            return {}
        end = self.samples[-1]["seconds"]
        series: dict[str, list[tuple[float, float]]] = {}
        for sample in self.samples:
            for name, mb in sample["rss_mb"].items():
                series.setdefault(name, []).append((sample["seconds"], mb))
        return {
            name: {
                "samples": len(points),
                "first_mb": points[0][1],
                "last_mb": points[-1][1],
                "max_mb": max(mb for _, mb in points),
                "slope_mb_per_h": slope_mb_per_hour(points),
                "second_half_slope_mb_per_h": slope_mb_per_hour(
                    [(t, mb) for t, mb in points if t >= end / 2]
                ),
            }
            for name, points in series.items()
        }
