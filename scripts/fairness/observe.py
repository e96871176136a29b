"""Watch a bot's matches through the public API, standard library only: for each match,
what was public when it was first seen (ply, sealed, commitment) and when its seed first
showed. Prints JSON.

    python3 scripts/fairness/observe.py http://127.0.0.1:8000 BOT SECONDS > observed.json
"""

import json
import sys
import time
import urllib.request


def now() -> str:
    moment = time.time()
    return time.strftime("%H:%M:%S", time.gmtime(moment)) + f".{int(moment * 1000) % 1000:03d}"


def read(url: str) -> dict:
    with urllib.request.urlopen(url) as answer:
        return json.load(answer)


def main(base: str, bot: str, seconds: float) -> None:
    seen: dict[int, dict] = {}
    end = time.time() + seconds
    while time.time() < end:
        for match in read(f"{base}/api/v1/matches/?bot={bot}")["results"]:
            entry = seen.setdefault(match["id"], {
                "first_seen": now(), "ply": match["ply"], "status": match["status"],
                "sealed": match["sealed"], "commitment": match["seed_commitment"],
            })  # fmt: skip
            unsealed = match["status"] == "finished" and not match["sealed"]
            if "seed_seen" not in entry and unsealed:
                seed = read(f"{base}/api/v1/matches/{match['id']}/")["seed"]
                if seed:
                    entry["seed_seen"], entry["seed"] = now(), seed
        time.sleep(0.25)
    json.dump(seen, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
