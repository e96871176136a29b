"""README.md is a front door (issue 33): short, and every page it links exists."""

import re

from tests.docs.shell_blocks import BASE_DIR

README = BASE_DIR / "README.md"


def test_the_readme_is_at_most_200_lines():
    assert len(README.read_text().splitlines()) <= 200


def test_every_page_the_readme_links_exists():
    # mkdocs --strict checks the site's links; the README is outside the site.
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README.read_text())
    assert links, "the README links the docs"
    assert [link for link in links if not (BASE_DIR / link).exists()] == []
