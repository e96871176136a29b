"""Every shell command the README and docs/ show is run here, named by a test that runs it,
or marked as not runnable with the reason (the convention: docs/testing.md, "Shell blocks
in the docs"; the parsing: ``tests/docs/shell_blocks.py``)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.harness import free_port, stop_process_group
from tests.docs.shell_blocks import (
    BASE_DIR,
    KINDS,
    MARKER,
    Block,
    commands,
    fenced_blocks,
    inline_commands,
    is_shell,
    key_words,
    looks_like_shell,
    named_tests,
    page_files,
    pages,
    program_and_options,
    shell_blocks,
)
from tests.processes import clean_environment

BLOCKS = shell_blocks()
RUN_TIMEOUT = 60
SERVER_TIMEOUT = 30


def _ids(blocks: list[Block]) -> list[str]:
    return [block.name for block in blocks]


def _marked(kind: str | None) -> list[Block]:
    return [b for b in BLOCKS if (b.marker[0] if b.marker else None) == kind]


def test_the_docs_show_shell_blocks():
    # The collector must see the blocks at all: a change of fence syntax must not make
    # every rule below pass on nothing.
    assert len(BLOCKS) >= 20
    assert {block.page.name for block in BLOCKS} >= {"README.md", "kit.md", "production.md"}


def test_every_shell_block_is_run_or_marked_with_a_known_marker():
    unknown = [f"{b.name}: <!-- {b.marker[0]}: -->" for b in BLOCKS
               if b.marker and b.marker[0] not in KINDS]  # fmt: skip
    assert unknown == [], f"markers are {', '.join(KINDS)}"


def test_no_command_hides_in_an_unlabelled_block():
    hidden = [block.name for page in pages() for block in fenced_blocks(page)
              if looks_like_shell(block)]  # fmt: skip
    assert hidden == [], "label these blocks sh or console, so that they are run or marked"


def test_every_marker_stands_just_before_a_shell_block():
    # A marker that drifted away from its block (a line added between) marks nothing.
    marked = {(b.page, b.line - 1) for page in pages() for b in fenced_blocks(page)
              if b.marker and is_shell(b)}  # fmt: skip
    orphans = []
    for page in pages():
        for number, line in enumerate(page.read_text().split("\n"), start=1):
            found = MARKER.match(line)
            if found and found["kind"] in KINDS and (page, number) not in marked:
                orphans.append(f"{page.relative_to(BASE_DIR)}:{number}")
    assert orphans == []


@pytest.mark.parametrize("block", _marked("not-tested"), ids=_ids(_marked("not-tested")))
def test_a_block_not_tested_says_why(block):
    assert len(block.marker[1].split()) >= 3, "say why in a few words"


@pytest.mark.parametrize("block", _marked("tested-by"), ids=_ids(_marked("tested-by")))
def test_a_block_tested_elsewhere_names_tests_that_hold_its_key_words(block):
    named = named_tests(block.marker[1])
    text = ""
    for path, test in named:
        assert path.is_file(), f"{block.name}: no test file {path.relative_to(BASE_DIR)}"
        content = path.read_text()
        if test:
            assert re.search(rf"def {re.escape(test)}\b", content), f"no {test} in {path.name}"
        text += content
    missing = sorted(word for word in key_words(block.text) if not mentions(text, word))
    assert missing == [], f"{block.name}: the named tests never mention {missing}"


def mentions(text: str, word: str) -> bool:
    """Whether a test's text names ``word``; an option may be named as call_command's
    keyword (``--max-games`` as ``max_games``)."""
    if word in text:
        return True
    keyword = word.removeprefix("--").replace("-", "_")
    return word.startswith("--") and re.search(rf"\b{keyword}\b", text) is not None


def _shadow_project(folder: Path) -> Path:
    """Return a folder that looks like the project (a link to each top-level entry) and
    holds nothing else, so that a block's files land there and not in the project."""
    root = folder / "project"
    root.mkdir()
    for entry in BASE_DIR.iterdir():
        if entry.name not in ("var", "artefacts", ".git"):
            (root / entry.name).symlink_to(entry)
    return root


def _environment(folder: Path) -> dict[str, str]:
    # No settings of this process (a test database, a shared broker): a scratch var dir.
    env = clean_environment(folder / "var")
    env["PATH"] = f"{BASE_DIR / '.venv' / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env.pop("CARDSERVER_REAL_SERVICES", None)
    return env


def _prepare(block: Block, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = _shadow_project(tmp_path)
    for name, text in page_files(block.page).items():
        (root / name).write_text(text)
    return root, _environment(tmp_path)


@pytest.mark.parametrize("block", _marked(None), ids=_ids(_marked(None)))
def test_a_runnable_block_runs(block, tmp_path):
    root, env = _prepare(block, tmp_path)
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script(block)], cwd=root, env=env,
        capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{block.name} exited {done.returncode}:\n{done.stderr[-3000:]}"


def script(block: Block) -> str:
    """Return what bash runs: the block, or a console transcript's commands alone."""
    return "\n".join(commands(block.text)) if block.text.lstrip().startswith("$ ") else block.text


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("block", _marked("server"), ids=_ids(_marked("server")))
def test_a_server_block_comes_up(block, tmp_path):
    root, env = _prepare(block, tmp_path)
    documented = block.marker[1]
    assert documented.isdigit(), f"{block.name}: <!-- server: PORT -->"
    port = free_port()
    # Another run of this suite may use the documented port: the block gets a free one.
    text = re.sub(rf"\b{documented}\b", str(port), script(block))
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", text], cwd=root, env=env, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + SERVER_TIMEOUT
        while not _listening(port) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _listening(port), f"{block.name}: nothing on port {port}:\n{log.read_text()[-3000:]}"
        assert process.poll() is None, f"{block.name} exited: {log.read_text()[-3000:]}"
    finally:
        stop_process_group(process, timeout=10)


def test_key_words_are_options_subcommands_modules_and_request_paths():
    text = (
        ".venv/bin/python manage.py tournament --game durak \\\n    --bots a,b --duplicate\n"
        "python -m benchmarks.api --db postgres   # --not-this\n"
        'curl -sS -X POST $API/matches/1/join/ -H "Authorization: Token $T"\n'
        "# cardkit --commented\n"
    )
    assert key_words(text) == {
        "tournament", "--game", "--bots", "--duplicate", "benchmarks.api", "--db",
        "matches", "join",
    }  # fmt: skip


def test_a_marker_belongs_to_the_block_on_the_next_line_only(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- not-tested: a reason given -->\n```sh\nfalse\n```\n\n"
                    "<!-- not-tested: too far away -->\n\n```console\n$ true\nout\n```\n")
    first, second = fenced_blocks(page)
    assert first.marker == ("not-tested", "a reason given")
    assert second.marker is None and is_shell(second)
    assert script(second) == "true"


def _documented_commands() -> list[tuple[str, str]]:
    """Return (where, command) of every command the README and docs show, in blocks
    (marked or not) and in code spans."""
    found = [(block.name, command) for block in BLOCKS for command in commands(block.text)]
    for page in pages():
        found += [(str(page.relative_to(BASE_DIR)), c) for c in inline_commands(page)]
    return found


# Run in one interpreter of its own, for every program at once: each program's --help
# text, or "" when it has none (a module that no longer exists prints nothing).
HELPS = """
import contextlib, importlib.util, io, json, runpy, sys
import django
django.setup()
from django.core.management import get_commands, load_command_class
def found(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False
helps = {}
for program in json.loads(sys.argv[1]):
    text = io.StringIO()
    if program[0] == "manage.py":
        app = get_commands().get(program[1])
        if app:
            text.write(load_command_class(app, program[1]).create_parser(
                "manage.py", program[1]).format_help())
    elif found(program[1]):
        sys.argv = [program[1], *program[2:], "--help"]
        with contextlib.redirect_stdout(text), contextlib.suppress(SystemExit):
            runpy.run_module(program[1], run_name="__main__", alter_sys=True)
    helps[" ".join(program)] = text.getvalue()
print(json.dumps(helps))
"""


def test_every_documented_option_is_one_its_command_takes(tmp_path):
    # The code's truth: whatever marks a block, and in the prose too, each long option
    # shown must be in its program's --help.
    used = {}
    for where, command in _documented_commands():
        parsed = program_and_options(command)
        ours = parsed and (parsed[0][0] == "manage.py" or (BASE_DIR / parsed[0][1]).is_dir()
                           or (BASE_DIR / parsed[0][1].split(".")[0]).is_dir())
        if ours:
            used.setdefault(parsed[0], []).append((where, parsed[1]))
    env = _environment(tmp_path) | {"DJANGO_SETTINGS_MODULE": "cardserver.settings"}
    done = subprocess.run(
        [str(BASE_DIR / ".venv" / "bin" / "python"), "-c", HELPS, json.dumps(list(used))],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    helps = json.loads(done.stdout.strip().rsplit("\n", 1)[-1])
    wrong = []
    for program, places in used.items():
        text = helps[" ".join(program)]
        if program[0] == "manage.py" and not text:
            wrong.append(f"{places[0][0]}: no command manage.py {program[1]}")
        for where, options in places if text else ():
            wrong += [f"{where}: {' '.join(program)} {option}" for option in options
                      if not re.search(rf"{re.escape(option)}\b", text)]  # fmt: skip
    assert sorted(set(wrong)) == []
