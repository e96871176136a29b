"""The bot kit: RL environment steps per second, local arena deals per second, install size.

    python -m benchmarks.kit [--seconds 2] [--repeats 3] [--no-install]

- ``env``: steps per second of ``cardkit.rl.env`` per table, random masked actions (an
  observation and a mask for the agent to act at every step, as a learner needs), on one
  pinned core; beside it, the engine's own random-play moves per second on the same table
  in the same run (``benchmarks.engine.play_for``), the baseline it is built on.
- ``arena``: deals per second of ``cardkit.arena.play_deal`` with built-in players
  (every seat asked with the server's request), beside the same players on the bare
  engine (no request, no log), interleaved.
- ``install``: the wheel of kit/pyproject.toml, and the size of a fresh venv's
  site-packages with only the kit (and its dependencies, and with ``[rl]``) installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import numpy as np

from benchmarks import harness
from benchmarks.engine import pin_to_one_core, play_for

ROOT = Path(__file__).resolve().parent.parent
TABLES = [
    ("durak", 2, 36), ("durak", 3, 36), ("durak", 4, 36), ("durak", 2, 32),
    ("volynshchik", 2, 32), ("volynshchik", 3, 32), ("volynshchik", 5, 32),
]
ARENA = [
    ("durak", 2, ["greedy", "random"]), ("durak", 3, ["greedy", "random", "random"]),
    ("volynshchik", 3, ["greedy", "random", "random"]),
]


def env_steps(game: str, players: int, deck: int, seconds: float, seed: int) -> float:
    from cardkit.rl import env

    table = env(game, players=players, deck_size=deck if game == "durak" else None)
    rng = np.random.default_rng(seed)
    table.reset(seed=seed)
    steps = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        observation, _, done, _, _ = table.last()
        if done:
            table.reset(seed=int(rng.integers(2**31)))
            continue
        table.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        steps += 1
    return steps / (time.perf_counter() - started)


def arena_deals(game: str, players: int, names: list[str], seconds: float) -> float:
    from cardkit.arena import deal_seed, play_deal
    from cardkit.specs import BuiltinPlayer

    bots = [BuiltinPlayer(name) for name in names]
    deals = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        play_deal(game, {"players": players}, bots, seating=tuple(range(players)),
                  seed=deal_seed("bench", deals), dealer=deals % players)
        deals += 1
    return deals / (time.perf_counter() - started)


def direct_deals(game: str, players: int, names: list[str], seconds: float) -> float:
    """The baseline of ``arena_deals``: the same players on the engine, with no request."""
    from cardkit.arena import deal_seed
    from cardkit.engine import load_game
    from cardkit.players import decision_rng, get_player

    table = load_game(game, players=players)
    bots = [get_player(name, game) for name in names]
    deals = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        seed = deal_seed("bench", deals)
        state = table.deal(seed=seed, dealer=deals % players)
        ply = 0
        while not state.is_over:
            seat = state.to_move
            move = bots[seat].choose(state.view(seat), state.legal_moves(),
                                     decision_rng(seed, seat, ply))
            state = state.play(move)
            ply += 1
        deals += 1
    return deals / (time.perf_counter() - started)


def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _site_size(target: Path) -> int:
    (site,) = target.glob("lib/python*/site-packages")
    return sum(f.stat().st_size for f in site.rglob("*") if f.is_file())


def _quiet(command: list[str]) -> None:
    # pip warns about every index location it skips; only a failure is worth showing.
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")


def install_sizes() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        _quiet([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where),
                str(ROOT / "kit")])
        (wheel,) = where.glob("cardserver_kit-*.whl")
        sizes = {"wheel_bytes": wheel.stat().st_size}
        for label, spec in (("kit", str(wheel)), ("kit_rl", f"{wheel}[rl]")):
            target = where / label
            venv.create(target, with_pip=False)
            empty = _site_size(target)
            _quiet([sys.executable, "-m", "pip", "--python", str(target / "bin/python"),
                    "install", "-q", "--disable-pip-version-check", spec])
            sizes[f"{label}_site_packages_bytes"] = _site_size(target) - empty
            listed = subprocess.run(
                [sys.executable, "-m", "pip", "--python", str(target / "bin/python"), "list",
                 "--format", "freeze", "--disable-pip-version-check"],
                capture_output=True, text=True, check=True,
            )
            sizes[f"{label}_packages"] = listed.stdout.split()
        return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per table and repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-install", action="store_true", help="skip the install size")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures: dict = {"pinned": pin_to_one_core(), "load": os.getloadavg()}
    print(f"# kit benchmark: {figures['pinned']}, load {figures['load'][0]:.1f}; median "
          f"(min-max) of {args.repeats} x {args.seconds:g} s")
    print(f"{'table':<20} {'env steps/s':>22} {'engine moves/s':>22}")
    figures["env"] = []
    for game, players, deck in TABLES:
        steps, moves = [], []
        for repeat in range(args.repeats):
            # Interleaved: the baseline and the environment see the same load.
            steps.append(env_steps(game, players, deck, args.seconds, repeat))
            done = play_for(game, players, deck, args.seconds, repeat)
            moves.append(done[1] / done[2])
        row = {"game": game, "players": players, "deck_size": deck,
               "steps_per_s": _spread(steps), "engine_moves_per_s": _spread(moves)}
        figures["env"].append(row)
        s, m = row["steps_per_s"], row["engine_moves_per_s"]
        print(f"{game + f' {players}p {deck}':<20} {s['median']:>8.0f} ({s['min']:.0f}-"
              f"{s['max']:.0f}) {m['median']:>10.0f} ({m['min']:.0f}-{m['max']:.0f})")
    figures["arena"] = []
    for game, players, names in ARENA:
        rates, direct = [], []
        for _ in range(args.repeats):
            rates.append(arena_deals(game, players, names, args.seconds))
            direct.append(direct_deals(game, players, names, args.seconds))
        row = {"game": game, "players": players, "bots": names, "deals_per_s": _spread(rates),
               "direct_deals_per_s": _spread(direct)}
        figures["arena"].append(row)
        r, b = row["deals_per_s"], row["direct_deals_per_s"]
        print(f"arena {game} {'-'.join(names)}: {r['median']:.0f} deals/s "
              f"({r['min']:.0f}-{r['max']:.0f}); the same players on the bare engine "
              f"{b['median']:.0f} ({b['min']:.0f}-{b['max']:.0f})")
    if not args.no_install:
        figures["install"] = sizes = install_sizes()
        print(f"wheel {sizes['wheel_bytes'] / 1024:.0f} KiB; site-packages: kit "
              f"{sizes['kit_site_packages_bytes'] / 2**20:.1f} MiB "
              f"({' '.join(sizes['kit_packages'])}); with [rl] "
              f"{sizes['kit_rl_site_packages_bytes'] / 2**20:.1f} MiB")
    figures["load_end"] = os.getloadavg()
    harness.write_json(args.json, figures)


if __name__ == "__main__":
    main()
