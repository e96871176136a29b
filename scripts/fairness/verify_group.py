"""Check matches of a deal group with the standard library only (docs/fairness.md): the
group's seed against its commitment, each match's commitment as first seen while sealed
(``observe.py``'s output) against the seed, and each deck recomputed from the seed.

    python3 scripts/fairness/verify_group.py http://127.0.0.1:8000 observed.json ID...
"""

import hashlib
import json
import random
import sys
import urllib.request


def h(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def deck(seed: str, size: int) -> list[str]:
    cards = [rank + suit for suit in "SHDC" for rank in "6789TJQKA"[9 - size // 4:]]
    digest = hashlib.sha256(f"cardserver-deck:{seed}".encode()).digest()
    random.Random(int.from_bytes(digest, "big")).shuffle(cards)
    return cards


def read(url: str) -> dict:
    with urllib.request.urlopen(url) as answer:
        return json.load(answer)


def main(base: str, observed_file: str, match_ids: list[str]) -> None:
    with open(observed_file) as file:
        observed = json.load(file)
    for match_id in match_ids:
        v = read(f"{base}/api/v1/matches/{match_id}/verify/")
        size = read(f"{base}/api/v1/matches/{match_id}/")["deck_size"]
        g, n, k = v["group_seed"], v["deal_number"], v["deal_copy"]
        first = observed[match_id]
        checks = {
            "sha256(G) == group commitment": h(g) == v["group_commitment"],
            f"sha256(group:G:n:k) == commitment seen at ply {first['ply']}, sealed": (
                h(f"cardserver-group:{g}:{n}:{k}") == first["commitment"] and first["sealed"]
            ),
            "deal seed == sha256(deal:G:n)": v["seed"] == h(f"cardserver-deal:{g}:{n}"),
            "deck recomputed == API's deck": [deck(v["seed"], size)] == v["decks"],
            "server's own check": v["ok"],
        }
        print(f"match {match_id}: G={g[:12]}... n={n} k={k} first seen {first['first_seen']} "
              f"at ply {first['ply']}, seed first seen {first.get('seed_seen')}")
        for name, ok in checks.items():
            print(f"   {'ok ' if ok else 'BAD'} {name}")
        print("   deck:", " ".join(v["decks"][0]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
