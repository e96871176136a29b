"""The shell blocks of README.md and docs/: where they are, how each is marked, their key words.

A shell block is a fenced block in ``bash``, ``sh``, ``console`` or ``shell``; an unlabelled
or ``text`` block whose first line reads as a command counts too (it must be labelled, so
that nothing escapes the rule). The HTML comment on the line just before a block says
how it is checked (docs/testing.md, "Shell blocks in the docs"):

- no comment: ``tests/docs/test_shell_blocks.py`` runs it;
- ``<!-- server: PORT -->``: it runs it until something listens on PORT (moved to a free
  port), then stops it;
- ``<!-- tested-by: tests/x.py[::test_name], ... -->``: those tests run its commands; the
  files must exist and hold the block's key words;
- ``<!-- not-tested: why -->``: nothing runs it, for the reason given.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent
SHELL_LANGUAGES = {"bash", "sh", "console", "shell"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<language>[\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>[\w-]+):\s*(?P<value>.*?)\s*-->\s*$")
KINDS = ("server", "tested-by", "not-tested")
# The first line of an unlabelled block that is a command rather than output or a picture.
LOOKS_LIKE_COMMAND = re.compile(
    r"^(\$ |\.venv/bin/|python3? |make |curl |pip |cardkit |scripts/|docker |[A-Z_]+=\S*\s)"
)


@dataclass(frozen=True, slots=True)
class Block:
    page: Path
    line: int  # of the opening fence, from 1
    language: str
    text: str
    marker: tuple[str, str] | None  # (kind, value) of the comment just before it

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(BASE_DIR)}:{self.line}"


def pages() -> list[Path]:
    return [BASE_DIR / "README.md", *sorted((BASE_DIR / "docs").rglob("*.md"))]


def fenced_blocks(page: Path) -> list[Block]:
    """Return every fenced block of ``page`` with the marker just before it, if any."""
    lines = page.read_text().split("\n")
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        start, body = index, []
        index += 1
        while index < len(lines) and lines[index].strip() != opening["fence"]:
            body.append(lines[index].removeprefix(opening["indent"]))
            index += 1
        # The marker stands on the line just before the fence, nothing between.
        found = MARKER.match(lines[start - 1]) if start else None
        marker = (found["kind"], found["value"]) if found else None
        blocks.append(Block(page, start + 1, opening["language"], "\n".join(body), marker))
        index += 1
    return blocks


def is_shell(block: Block) -> bool:
    return block.language in SHELL_LANGUAGES


def looks_like_shell(block: Block) -> bool:
    """Whether an unlabelled or ``text`` block starts with a command."""
    first = next((line for line in block.text.split("\n") if line.strip()), "")
    return block.language in ("", "text") and bool(LOOKS_LIKE_COMMAND.match(first))


def shell_blocks() -> list[Block]:
    return [block for page in pages() for block in fenced_blocks(page) if is_shell(block)]


def page_files(page: Path) -> dict[str, str]:
    """Return the files a page shows as Python blocks whose first line is ``# name.py``."""
    files = {}
    for block in fenced_blocks(page):
        first = block.text.split("\n", 1)[0]
        named = re.fullmatch(r"#\s*([\w.-]+\.py)\s*", first)
        if block.language == "python" and named:
            files[named[1]] = block.text
    return files


def commands(text: str) -> list[str]:
    """Return the block's commands: continuations joined, comments, prompts and output dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.split("\n"):
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        elif not line or line.startswith("#") or (text.lstrip().startswith("$ ")):
            continue  # a comment, or the output of a console transcript
        found.append(re.sub(r"\s+#\s.*$", "", line))
    return found


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _names_a_subcommand(token: str, after: str) -> bool:
    if token.endswith(("manage.py", "cardkit", "make")):
        return bool(re.fullmatch(r"[a-z_]+", after))
    return token == "-m" and after not in ("", "cardkit")


def key_words(text: str) -> set[str]:
    """Return the words a test of these commands must name: each long option, each
    subcommand of manage.py, cardkit and make, each module run with ``-m``, and the
    words of each path a ``curl`` requests."""
    words: set[str] = set()
    for command in commands(text):
        tokens = _tokens(command)
        for position, token in enumerate(tokens):
            after = tokens[position + 1] if position + 1 < len(tokens) else ""
            if re.fullmatch(r"--[a-z][\w-]*(=.*)?", token):
                words.add(token.split("=", 1)[0])
            elif _names_a_subcommand(token, after):
                words.add(after)
        if tokens and tokens[0] == "curl":
            for token in tokens:
                path = re.sub(r"^(\$API|https?://[^/]+)", "", token)
                if path != token:
                    words |= {w for w in re.split(r"[/?=&]", path) if re.fullmatch(r"[a-z_]+", w)}
    return words


def named_tests(value: str) -> list[tuple[Path, str | None]]:
    """Return (file, test name or None) of each ``path[::test]`` a tested-by marker names."""
    named = []
    for item in (part.strip() for part in value.split(",")):
        path, _, test = item.partition("::")
        named.append((BASE_DIR / path, test or None))
    return named


INLINE_COMMAND = re.compile(r"`([^`]*(?:python3? -m |manage\.py |cardkit )[^`]*)`")


def inline_commands(page: Path) -> list[str]:
    """Return the commands a page quotes in code spans (outside its fenced blocks)."""
    lines = page.read_text().split("\n")
    for block in fenced_blocks(page):
        for index in range(block.line - 1, min(block.line + block.text.count("\n") + 1,
                                                len(lines))):  # fmt: skip
            lines[index] = ""
    return [" ".join(found.split()) for found in INLINE_COMMAND.findall("\n".join(lines))]


def program_and_options(command: str) -> tuple[tuple[str, ...], list[str]] | None:
    """Return (the program whose ``--help`` lists its options, the long options used) of a
    ``manage.py``, ``cardkit`` or ``python -m`` command; None for any other command."""
    tokens = [token.strip("[]()|,;") for token in command.split()]
    if "--" in tokens:
        tokens = tokens[: tokens.index("--")]  # the rest belongs to another program
    for position, token in enumerate(tokens):
        rest = tokens[position + 1 :]
        if token.endswith("manage.py") and rest and re.fullmatch(r"[a-z_]+", rest[0]):
            program = ("manage.py", rest[0])
        elif token == "cardkit" and rest and re.fullmatch(r"[a-z]+", rest[0]):
            program = ("-m", "cardkit", rest[0])
        elif token == "-m" and rest and rest[0] != "cardkit" and re.fullmatch(r"[a-z_.]+", rest[0]):
            module = rest[0]
            program = ("-m", module)
            if module == "benchmarks" and rest[1:2] and rest[1] in ("report", "record"):
                program = ("-m", module, rest[1])
        else:
            continue
        options = [found.group(0) for found in map(OPTION.match, rest) if found]
        return program, options
    return None


OPTION = re.compile(r"--[a-z][a-z0-9-]*")
