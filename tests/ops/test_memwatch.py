"""``cardserver.memwatch`` names the source line and the type of what a process kept."""

from __future__ import annotations

import json
import tracemalloc

from cardserver.memwatch import MemoryWatch


class Kept:
    def __init__(self) -> None:
        self.payload = bytearray(1024)


def test_a_sample_names_the_line_and_the_type_of_objects_kept_since_the_first(tmp_path):
    watch = MemoryWatch(tmp_path / "watch.jsonl")
    try:
        kept = [Kept() for _ in range(2000)]  # about 2 MB held past the sample
        record = watch.sample()
    finally:
        tracemalloc.stop()
    assert len(kept) == 2000
    assert record["rss_kb"] > 0
    assert dict(record["types"])["Kept"] == 2000
    top = record["grown"][0]
    assert top["kb"] >= 2000
    assert any(__file__ in where for where in top["where"])
    assert json.loads((tmp_path / "watch.jsonl").read_text())["types"] == [
        list(pair) for pair in record["types"]
    ]
