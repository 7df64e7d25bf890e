"""The guides, and the recipes of docs/contributing.md, held to the code: a step a recipe names,
missed, fails here.

- Every relative link of the repository's documents leads to a file that exists, and a link to
  a heading of a Markdown document to a heading (or an `id`) it has.
- The README links every document of docs/ and the maker's guide: a reader finds each by name
  from the front door.
- Each command list of the guides (a table after `<!-- commands: cribboard [GROUP] -->`) names
  exactly the command rows of the command line, and every group has one.
- Each verb of the protocol's table has its handler in the firmware, in the table's order, its
  row and section in docs/protocol.md, its sessions in the vectors and its rule in the model; the
  host's journal knows the verbs whose changes the board saves.
- No document keeps a copy of the test suite's own figures (passes, skips, how long it took):
  they change with every run, and pytest prints them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import vectors

import protocol_model
from cribboard import journal
from cribboard.cli import COMMANDS
from cribboard.cmdline.rows import Command, OneOf
from cribcore import protocol
from cribfw import replies, verbs

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = tuple(
    path
    for pattern in ("*.md", "docs/*.md", "hardware/*.md", "firmware/**/*.md", "host/**/*.md")
    for path in sorted(ROOT.glob(pattern))
    if "node_modules" not in path.parts
)
"""The repository's documents (the tests' own tools' packages left out)."""
PROSE = tuple(p for p in DOCUMENTS if p.parent in (ROOT, ROOT / "docs", ROOT / "hardware"))
"""The documents a person reads as prose: the README, the changelog, the guides, the maker's."""
PROTOCOL = ROOT / "docs" / "protocol.md"


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


# --- the text of a document, outside its code ---------------------------------------------------


def outside_code(text: str) -> Iterator[tuple[int, str]]:
    """The lines of a Markdown text outside fenced code blocks, numbered, inline code taken out."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, re.sub(r"`[^`]*`", "", line)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text as shown, in lower case, without punctuation
    but hyphens and underscores, each space a hyphen."""
    shown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    shown = shown.replace("`", "").replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", shown).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors a Markdown document has: its headings' (a repeated one numbered, as GitHub
    does) and the `id`s of its HTML."""
    text = path.read_text(encoding="utf-8")
    found: set[str] = set(re.findall(r'\bid="([^"]+)"', text))
    seen: dict[str, int] = {}
    fence = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fence = None if fence else stripped[:3]
            continue
        if fence is None and (heading := re.match(r"#{1,6} (.+)", line)):
            anchor = slug(heading.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def links(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in outside_code(path.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # a scheme: not ours to check
                yield number, target


def test_every_link_leads_to_a_file_and_a_heading_that_exist() -> None:
    broken = []
    for doc in DOCUMENTS:
        for number, target in links(doc):
            file, _, anchor = target.partition("#")
            where = (doc.parent / file).resolve() if file else doc
            if not where.exists():
                broken.append(f"{name(doc)}:{number}: {target}: no such file")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{name(doc)}:{number}: {target}: no such heading")
    assert not broken, "\n".join(broken)


def test_the_link_check_sees_a_broken_link(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(
        "# A guide: `one` word\n\n## Again\n\n## Again\n\n```\n# not a heading\n```\n"
        "[a](#a-guide-one-word) [b](#again-1) [c](#not-a-heading) `[d](nowhere.md)`\n"
    )
    assert anchors(doc) == {"a-guide-one-word", "again", "again-1"}
    assert [target for _, target in links(doc)] == [
        "#a-guide-one-word",
        "#again-1",
        "#not-a-heading",
    ]


def test_the_readme_links_every_guide_and_reference() -> None:
    readme = ROOT / "README.md"
    linked = {(ROOT / target.partition("#")[0]).resolve() for _, target in links(readme)}
    documents = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "hardware" / "README.md"]
    unlinked = [name(doc) for doc in documents if doc.resolve() not in linked]
    assert not unlinked, (
        f"README.md: no link to {unlinked} (its map of the guides, or the references)"
    )


# --- the command lists ---------------------------------------------------------------------------

COMMANDS_MARK = re.compile(r"<!-- commands: cribboard((?: [a-z-]+)*) -->")


def documented_lists() -> dict[str, list[tuple[str, str]]]:
    """Each command list of the README and the guides, by the group it lists ('' for the
    top): the commands its table names (as typed after `cribboard`), with where each is."""
    found: dict[str, list[tuple[str, str]]] = {}
    for doc in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))):
        lines = doc.read_text(encoding="utf-8").split("\n")
        for number, line in enumerate(lines):
            mark = COMMANDS_MARK.fullmatch(line.strip())
            if mark is None:
                continue
            group = mark.group(1).strip()
            assert group not in found, f"{name(doc)}:{number + 1}: a second list of {group!r}"
            rows = found[group] = []
            for row in lines[number + 3 :]:  # the mark, the table's heading and its rule
                if not row.startswith("|"):
                    break
                command = re.match(r"\| `([^`]+)` \|", row)
                assert command, f"{name(doc)}: {row!r} names no command in its first cell"
                rows.append((command.group(1), f"{name(doc)}:{number + 1}"))
    return found


def rows_of(group: str) -> list[str]:
    """The commands a group's list must name: the top's every command; a group's every command
    that runs, however deep (`hall held`, `hall held accept`)."""
    if not group:
        return [command.name for command in COMMANDS]
    (top,) = [command for command in COMMANDS if command.name == group.split()[0]]

    def runnable(command: Command, path: str) -> Iterator[str]:
        for sub in command.commands:
            if sub.run is not None:
                yield f"{path} {sub.name}"
            yield from runnable(sub, f"{path} {sub.name}")

    return list(runnable(top, top.name))


def test_every_command_is_in_its_guides_list_and_the_lists_name_no_other() -> None:
    lists = documented_lists()
    groups = [command.name for command in COMMANDS if command.commands]
    assert sorted(lists) == sorted(["", *groups]), "a group of commands without its list"
    for group, documented in lists.items():
        names = [command for command, _ in documented]
        where = documented[0][1] if documented else group
        expected = rows_of(group)
        assert sorted(names) == sorted(expected), (
            f"{where}: the list of `cribboard {group}`".replace("  ", " ")
            + f" lacks {sorted(set(expected) - set(names))},"
            f" names what is not a command: {sorted(set(names) - set(expected))}"
        )
        assert len(names) == len(set(names)), f"{where}: a command listed twice"


def old_spellings() -> Iterator[tuple[str, re.Pattern[str]]]:
    """The command line's old spellings (hidden aliases for one release), each with a pattern
    that finds it typed: `cribboard sim`, `hall serve` (a group's command: its group before
    it), `--mqtt`."""

    def typed(words: str) -> tuple[str, re.Pattern[str]]:
        return words, re.compile(rf"{re.escape(words)}(?![\w-])")

    def walk(
        commands: tuple[Command, ...], path: tuple[str, ...]
    ) -> Iterator[tuple[str, re.Pattern[str]]]:
        for command in commands:
            for old in command.old_names:
                yield typed(" ".join(path + (old,)) if path else f"cribboard {old}")
            for item in command.arguments():
                for one in item.args if isinstance(item, OneOf) else (item,):
                    yield from (typed(old) for old in one.old_names)
            yield from walk(command.commands, (*path, command.name))

    return walk(COMMANDS, ())


def test_no_document_uses_an_old_spelling_of_the_command_line() -> None:
    """The guides show only the new spellings; docs/architecture.md's table of old spellings
    alone names the old ones."""
    found = [
        f"{name(doc)}:{number}: {spelling}"
        for doc in DOCUMENTS
        if doc != ROOT / "docs" / "architecture.md"
        for number, line in enumerate(doc.read_text(encoding="utf-8").split("\n"), 1)
        for spelling, pattern in old_spellings()
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


# --- the protocol's verbs ------------------------------------------------------------------------

VERBS = [verb.decode() for verb in protocol.VERBS]
HANDLER_NAMES = {"st": "state", "set": "set_pegs"}
"""A handler is named as its verb, but where that would be a builtin's name or a short wire word."""


def test_every_verb_has_its_handler_in_the_tables_order() -> None:
    handlers = [handler.__name__ for handler in verbs.HANDLERS]
    assert handlers == [HANDLER_NAMES.get(verb, verb) for verb in VERBS], (
        "cribfw/verbs.py's HANDLERS must follow cribcore.protocol's VERB_TABLE, one a verb"
    )


def section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def test_every_verb_has_its_row_and_its_section_in_the_document() -> None:
    verbs_section = section(PROTOCOL.read_text(encoding="utf-8"), "4. Verbs")
    table = verbs_section[verbs_section.index("\n| verb |") :].split("\n\n")[0]
    rows = re.findall(r"^\| `([a-z]+)` \|", table, re.MULTILINE)
    assert rows == VERBS, "docs/protocol.md section 4's table: the verbs of VERB_TABLE, in order"
    described = [
        verb
        for heading in re.findall(r"^### (.+)$", verbs_section, re.MULTILINE)
        for verb in heading.split(":")[0].split(", ")
    ]
    assert sorted(described) == sorted(VERBS), "section 4: a `### verb` subsection for each verb"


def request_verbs(data: bytes) -> Iterator[str]:
    """The verbs of the request lines in `data`: each line's first word after the id (`#7`) and
    the condition (`@55`)."""
    for line in data.split(b"\n"):
        words = line.decode("ascii", "replace").split()
        while words and words[0][0] in "#@":
            words.pop(0)
        if words:
            yield words[0]


def test_every_verb_is_in_the_vectors_and_the_model() -> None:
    sessions = [data for data, _ in vectors.VECTORS + vectors.RULES + vectors.MATCH]
    sessions += [data for _, data in vectors.ENCODE_VECTORS]  # (a verb whose reply varies)
    sent = {verb for data in sessions for verb in request_verbs(data)}
    missing = sorted(set(VERBS) - sent)
    assert not missing, f"tests/core/vectors.py: no request of {missing}"
    kinds = {
        protocol.K_READ: "read",
        protocol.K_SET: "setting",
        protocol.K_CHANGE: "change",
        protocol.K_LINK: "link",
    }
    assert protocol_model.VERBS == {
        verb: (fewest, most, kinds[kind]) for verb, fewest, most, kind in protocol.VERB_TABLE
    }, "tests/protocol_model.py's VERBS: each verb of VERB_TABLE, its arguments and kind"


def test_the_hosts_journal_knows_the_verbs_whose_changes_the_board_saves() -> None:
    saved = {VERBS[v] for v in range(len(VERBS)) if replies._SAVES >> v & 1}
    assert saved == journal.CHANGING_VERBS


# --- figures that change with every run ----------------------------------------------------------

RUN_FIGURES = re.compile(r"\b\d[\d,]* (?:passed|skipped)\b|\b\d+ min \d+ s\b")


def stale_figures(text: str) -> list[str]:
    return [line.strip() for _, line in outside_code(text) if RUN_FIGURES.search(line)]


@pytest.mark.parametrize("doc", PROSE, ids=name)
def test_no_document_keeps_the_suites_own_figures(doc: Path) -> None:
    assert not stale_figures(doc.read_text(encoding="utf-8")), (
        f"{name(doc)}: the suite's passes, skips and time change with every run: say what the "
        "tests show, not how many or how long"
    )


def test_the_figures_check_sees_a_copy() -> None:
    assert stale_figures("`make test` took 7 min 0 s: 1,082 passed, 6 skipped.\n")
    assert not stale_figures("Every change passes its tests; 5 min is the aim.\n")
