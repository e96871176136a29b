"""The rules contract in the repository, docs/rules.md, is the shared RULES.md word for word."""

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
SHARED_RULES = REPOSITORY.parent / "shared" / "RULES.md"


@pytest.mark.skipif(not SHARED_RULES.is_file(), reason=f"no {SHARED_RULES} beside the repository")
def test_docs_rules_is_the_shared_rules_byte_for_byte():
    assert (REPOSITORY / "docs" / "rules.md").read_bytes() == SHARED_RULES.read_bytes(), (
        f"docs/rules.md differs from {SHARED_RULES}: copy the contract over again"
    )
