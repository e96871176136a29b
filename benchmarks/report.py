"""Write docs/benchmarks.md from the benchmarks' JSON records.

    python -m benchmarks report [--results docs/figures] [--out docs/benchmarks.md]

Each record (``benchmarks.results``, written by ``python -m benchmarks record NAME``)
becomes a section: the command that produced it, the commit, the date, the machine, and
per metric the median and the range (min-max) of its runs. Any other JSON file in the
folder (a benchmark's own ``--json`` output, saved by hand) is listed with the pages that
quote it. The page depends on the files alone, so a test can check that the committed
page is what the committed records give.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from benchmarks.results import BASE_DIR, RESULTS_DIR

DOCS_DIR = BASE_DIR / "docs"
OUT = DOCS_DIR / "benchmarks.md"
REQUIRED = ("benchmark", "command", "commit", "date", "machine", "metrics")


class RecordError(ValueError):
    """A JSON file that looks like a record but lacks what the report shows."""


def number(value: float) -> str:
    """Return ``value`` with as many decimals as its size deserves (three figures or more)."""
    size = abs(value)
    digits = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else 3
    return f"{value:,.{digits}f}"


def summary(metric: dict) -> tuple[str, str, str]:
    """Return (median, "min-max", runs) of one metric, from its runs when it has them."""
    if metric.get("runs"):
        runs = [float(v) for v in metric["runs"]]
        low, middle, high, count = min(runs), statistics.median(runs), max(runs), str(len(runs))
    elif all(key in metric for key in ("median", "min", "max")):
        low, middle, high, count = metric["min"], metric["median"], metric["max"], "?"
    else:
        raise RecordError(f"metric {metric.get('name')!r} has neither runs nor median/min/max")
    spread = number(low) if low == high else f"{number(low)}-{number(high)}"
    return number(middle), spread, count


def machine_line(machine: dict) -> str:
    parts = [f"Python {machine.get('python', '?')}", str(machine.get("system", "?")),
             f"{machine.get('cores', '?')} cores"]  # fmt: skip
    if "load_start" in machine:
        parts.append(f"load average {machine['load_start']} at the start, "
                     f"{machine.get('load_end', '?')} at the end")  # fmt: skip
    return ", ".join(parts)


def section(path: Path, record: dict) -> list[str]:
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise RecordError(f"{path.name}: no {', '.join(missing)}")
    lines = [
        f"## {path.stem}",
        "",
        f"- Command: `{record['command']}`",
        f"- JSON: `{_shown(path)}`",
        f"- Commit {record['commit']}, {record['date']}",
        f"- Machine: {machine_line(record['machine'])}",
        "",
        "| Figure | Median | Range (min-max) | Runs | Unit |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for metric in record["metrics"]:
        middle, spread, count = summary(metric)
        lines.append(f"| {metric['name']} | {middle} | {spread} | {count} | {metric['unit']} |")
    return [*lines, ""]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(BASE_DIR))
    except ValueError:
        return path.name


def quoted_by(name: str, docs: Path) -> list[str]:
    """Return the pages under ``docs`` that name the file ``name`` (this page aside)."""
    return sorted(
        str(page.relative_to(docs))
        for page in docs.rglob("*.md")
        if page.name != OUT.name and name in page.read_text()
    )


def render(results: Path, docs: Path = DOCS_DIR) -> str:
    """Return the Markdown page of every JSON file in ``results``."""
    records, others = [], []
    for path in sorted(results.glob("*.json")):
        try:
            content = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise RecordError(f"{path.name}: not JSON ({error})") from None
        if isinstance(content, dict) and "metrics" in content:
            records.append((path, content))
        else:
            others.append(path)
    lines = [
        "# Benchmarks",
        "",
        "<!-- Written by `python -m benchmarks report`; edit the records, not this page. -->",
        "",
        "Every timed figure the documentation quotes is here, with the command that measured "
        "it and the JSON record it came from. `python -m benchmarks record NAME -- ARGS` runs "
        "a benchmark and writes its record to `docs/figures/NAME.json`; "
        "`python -m benchmarks report` writes this page from those records. A range is the "
        "lowest and highest of the runs (Runs `?`: the benchmark kept their median and range, "
        "not the runs); figures measured on a machine shared with other "
        "work are noisier than the same on a quiet one (the load average says how busy it "
        "was).",
        "",
    ]
    for path, record in sorted(records, key=lambda item: (item[0].stem, item[1]["benchmark"])):
        lines += section(path, record)
    if not records:
        lines += ["No benchmark has been recorded yet.", ""]
    if others:
        lines += [
            "## Other figure files",
            "",
            "Results a benchmark wrote with its own `--json`, saved as they are (no record "
            "around them); the pages that quote them name the command.",
            "",
            "| File | Quoted in |",
            "| --- | --- |",
        ]
        for path in others:
            pages = ", ".join(f"[{page}]({page})" for page in quoted_by(path.name, docs))
            lines.append(f"| `{_shown(path)}` | {pages or 'nowhere'} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks report",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--results", type=Path, default=RESULTS_DIR,
                        help="the folder of JSON records (default docs/figures)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=OUT, help="default docs/benchmarks.md")
    parser.add_argument("--docs", type=Path, default=DOCS_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        parser.error(f"no folder {args.results}")
    try:
        page = render(args.results, args.docs)
    except RecordError as error:
        raise SystemExit(f"python -m benchmarks report: {error}") from None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page)
    print(f"Written to {args.out}")
