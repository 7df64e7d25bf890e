"""The languages (issue 17): every catalog has every message of the template, none fuzzy, with
the English placeholders (names and types); the template holds every message the host's Python
and the page's JavaScript mark; the compiled .mo and the page's JSON say what the .po says; the
language is chosen by --lang (before or after the command) or the environment; `count` in
Dutch; `hall` and `remote` in the language chosen; a whole game at the scorekeeper in Swedish,
with no English sentence left."""

from __future__ import annotations

import builtins
import gettext
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from cribboard import i18n
from cribboard.api import BoardState
from cribboard.bridge.catalogs import catalog_json, languages_json
from cribboard.cli import main
from cribboard.i18n import LANGUAGES, LOCALE_DIR, choose_language, language, language_from_env
from cribboard.terminal import describe_state, draw_frame
from cribboard.virtual import VirtualBoard
from cribcore import render

ROOT = Path(__file__).resolve().parents[2]
TRANSLATED = [code for code in LANGUAGES if code != i18n.SOURCE_LANGUAGE]
KEYWORDS = {"_": None, "n_": (1, 2), "N_": None, "L_": None}
# A python-format placeholder: its name and its conversion (%(points)d, %(seconds).3f).
PLACEHOLDER = re.compile(r"%\((\w+)\)[-#0 +]*\d*(?:\.\d+)?([diouxXeEfFgGcrsa])")


def po(code: str) -> Catalog:
    with (LOCALE_DIR / code / "LC_MESSAGES" / "cribboard.po").open("rb") as file:
        return read_po(file, locale=code)


def template() -> Catalog:
    with (LOCALE_DIR / "cribboard.pot").open("rb") as file:
        return read_po(file)


def ids(catalog: Catalog) -> set[str | tuple[str, ...]]:
    return {_key(message) for message in catalog if message.id}


def _key(message: Message) -> str | tuple[str, ...]:
    return tuple(message.id) if isinstance(message.id, list | tuple) else message.id


def placeholders(text: str) -> list[tuple[str, str]]:
    return sorted(PLACEHOLDER.findall(text))


# --- the catalogs -------------------------------------------------------------------------------


def test_the_template_holds_every_marked_message_of_the_host_and_the_page() -> None:
    """`make catalogs` was run after the last marked sentence changed: extracting again from
    the sources (babel.cfg, the Makefile's keywords) finds exactly the template's messages."""
    method_map, options_map = parse_mapping_cfg((ROOT / "babel.cfg").open())
    found: set[str | tuple[str, ...]] = set()
    files: set[str] = set()
    for filename, _line, message, _comments, _context in extract_from_dir(
        ROOT, method_map, options_map, keywords=KEYWORDS
    ):
        files.add(filename)
        found.add(tuple(message) if isinstance(message, tuple) else message)
    assert "host/cribboard/bridge/static/app.js" in files  # the page is a source too
    assert "host/cribboard/play/scorekeeper.py" in files
    makefile = (ROOT / "Makefile").read_text()
    assert "-k _ -k n_:1,2 -k N_ -k L_" in makefile  # the keywords this test extracts with
    missing = found - ids(template())
    stale = ids(template()) - found
    assert not missing and not stale, f"run `make catalogs`: new {missing}, gone {stale}"


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_catalog_translates_every_message_with_the_same_placeholders(code: str) -> None:
    catalog = po(code)
    assert ids(catalog) == ids(template()), "run `make catalogs`"
    assert catalog.plural_forms == "nplurals=2; plural=(n != 1);"
    assert catalog.language_team and catalog.last_translator  # who made it
    for message in catalog:
        if not message.id:
            continue
        assert not message.fuzzy, f"{code}: fuzzy: {message.id!r}"
        if isinstance(message.id, list | tuple):
            singular, plural = message.id
            assert placeholders(singular) == placeholders(plural)
            forms = list(message.string)
            assert len(forms) == 2 and all(forms), f"{code}: untranslated: {message.id!r}"
            for form in forms:
                assert placeholders(form) == placeholders(singular), (code, message.id, form)
        else:
            assert message.string, f"{code}: untranslated: {message.id!r}"
            assert placeholders(message.string) == placeholders(message.id), (
                code,
                message.id,
                message.string,
            )
            if message.id.count("\n"):  # the key tables keep their lines, in 80 columns
                assert message.string.count("\n") == message.id.count("\n")
                assert all(len(line) <= 80 for line in message.string.splitlines()), (
                    code,
                    message.string,
                )


@pytest.mark.parametrize("code", TRANSLATED)
def test_the_catalogs_say_where_a_language_has_no_settled_word(code: str) -> None:
    notes = {_key(m): " ".join(m.user_comments) for m in po(code) if m.user_comments}
    for word in ("crib", "his heels", "nobs", "go", "muggins %(player)s %(points)d"):
        assert "seeds" in notes[word], (code, word)  # the source text named
    header = po(code).header_comment
    assert "Who:" in header and "How:" in header and "make catalogs" in header


# Words a native reader of each language trips over (issue 24), and what is said instead
# (docs/translating.md's table): (a pattern no translation may match, why).
MISREAD = {
    "sv": [
        (r"(%\(\w+\)s|blå|orange|lila)s (hand|krubba)\b", "a colour's genitive reads as a verb"),
        (r"\butspel\b", "bare utspel is the lead; the play is utspelet"),
        (r"\bi spelet\b", "the play is utspelet everywhere"),
        (r"\bq:? sluta\b", "q is avsluta everywhere else"),
    ],
    "nb": [
        (r"dealeren går videre", "the deal passes, not the dealer: dealerrollen går videre"),
        (r"[Tt]rekk om hvem som deler\b", "the seed's words: trekk kort om hvem som deler ut"),
    ],
    "nl": [
        (r"\bpint\b|\bpinnen\b(?! (van|die|langs|verplaatsen))", "pinnen reads as paying by card"),
        (r"\bwinst", "winst reads as profit: the win hole is the eindgat"),
        (r"Snijden voor de deal", "a heading, not a sentence"),
        (r"De telling telt", "says count twice"),
        (r"\b2e reis\b", "the second lap is the tweede reis, as in the other lines"),
        (
            r"\b[Nn]ieuw spel\b|\bspellen\b|\bin het spel\b",
            "a game is a partij, the play het uitspelen",
        ),
    ],
}


@pytest.mark.parametrize("code", sorted(MISREAD))
def test_the_words_read_as_native_players_read_them(code: str) -> None:
    for message in po(code):
        if not message.id:
            continue
        texts = message.string if isinstance(message.string, tuple) else (message.string,)
        for text in texts:
            for pattern, why in MISREAD[code]:
                assert not re.search(pattern, text), f"{code}: {text!r}: {why}"


@pytest.mark.parametrize("code", TRANSLATED)
def test_the_compiled_catalog_and_the_pages_json_agree_with_the_po(code: str) -> None:
    """The .mo files are committed: this fails when one was not compiled again (make
    catalogs) after its .po changed."""
    with (LOCALE_DIR / code / "LC_MESSAGES" / "cribboard.mo").open("rb") as file:
        compiled = gettext.GNUTranslations(file)
    served = catalog_json(code)
    assert served["plural"] == "(n != 1)"
    for message in po(code):
        if not message.id:
            continue
        if isinstance(message.id, list | tuple):
            singular, plural = message.id
            forms = list(message.string)
            assert compiled.ngettext(singular, plural, 1) == forms[0]
            assert compiled.ngettext(singular, plural, 2) == forms[1]
            assert served["plurals"][singular] == forms
        else:
            assert compiled.gettext(message.id) == message.string, message.id
            assert served["messages"][message.id] == message.string
    assert len(served["messages"]) + len(served["plurals"]) == len(ids(template()))


def test_the_page_is_offered_every_language() -> None:
    assert languages_json()["languages"] == LANGUAGES
    assert catalog_json("en")["messages"] == {}
    with pytest.raises(KeyError):
        catalog_json("de")


# --- choosing the language ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "sv_SE.UTF-8"}, "sv"),
        ({"LANG": "nb_NO.UTF-8"}, "nb"),
        ({"LANG": "no_NO"}, "nb"),
        ({"LC_MESSAGES": "nl_BE.UTF-8", "LANG": "sv_SE.UTF-8"}, "nl"),
        ({"LC_ALL": "nb", "LC_MESSAGES": "nl_NL", "LANG": "sv_SE"}, "nb"),
        ({"LANGUAGE": "de:no:sv", "LANG": "nl_NL"}, "nb"),  # the first known of the list
        ({"LANGUAGE": "de_DE", "LANG": "sv_SE"}, "en"),  # gettext reads the first set only
        ({"LANGUAGE": "", "LANG": "C.UTF-8"}, "en"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
    ],
)
def test_the_environment_chooses_as_gettext_does(environ: dict[str, str], expected: str) -> None:
    assert language_from_env(environ) == expected


def test_lang_beats_the_environment_and_unknown_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert choose_language("nb_NO", {"LANG": "sv_SE"}) == "nb"
    assert choose_language("no", {}) == "nb"
    assert choose_language(None, {"LANG": "nl_NL"}) == "nl"
    with pytest.raises(ValueError, match="unknown language 'de'"):
        choose_language("de", {})
    assert main(["--lang", "de", "count", "5H"]) == 2
    assert capsys.readouterr().err == "cribboard: unknown language 'de': use en, sv, nb, nl\n"


@pytest.fixture
def english_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in i18n.LANGUAGE_ENV:
        monkeypatch.delenv(name, raising=False)
    yield


def test_count_in_dutch(english_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["count", "--lang", "nl", "5H", "5S", "5C", "JD", "5D"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "hand 5H 5S 5C JD, startkaart 5D"
    assert sum(line.startswith("  vijftien      2  ") for line in out) == 8
    assert sum(line.startswith("  paar          2  ") for line in out) == 6
    assert "  his nobs      1  JD" in out
    assert out[-1] == "  totaal       29"
    assert not any(word in line for line in out for word in ("fifteen", "pair", "total"))
    # the language ends with the command: the next one speaks the environment's (English)
    assert main(["count", "5H", "5S", "5C", "JD", "5D"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "  total        29"


def test_lang_goes_before_or_after_the_command_and_the_environment_is_read(
    english_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--lang=sv", "count", "5H", "5S"]) == 1
    assert capsys.readouterr().err == (
        "cribboard: en hand har 4 kort, sedan startkortet: 5 kort, inte 2\n"
    )
    monkeypatch.setenv("LANG", "nb_NO.UTF-8")
    assert main(["count", "5H", "5S", "5C", "JD", "5D", "--crib"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("crib 5H 5S 5C JD, starter 5D\n  femten") and "totalt       29" in out
    assert main(["count", "XY", "--lang", "nl"]) == 1  # --lang beats the environment
    assert "ongeldige kaart 'XY'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # argparse's own usage message: in Norwegian help
        main(["--help"])
    assert usage.value.code == 0
    assert "språket som skal brukes: en, sv, nb, nl" in capsys.readouterr().out


def test_the_hall_and_the_remote_game_speak_the_language_chosen(
    english_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `hall` prints and its errors, and a broker address refused, in the language chosen
    (issue 25); the standings' columns are as wide as their translated headings."""
    hall = str(tmp_path / "hall")
    assert main(["--lang", "sv", "hall", "players", "add", "--dir", hall, "Ann", "Bob"]) == 0
    assert capsys.readouterr().out == "anmälde Ann, Bob (2 spelare)\n"
    assert main(["hall", "standings", "--dir", hall, "--lang", "nb"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "ingen runde spilt ennå"
    heading, row = out[1], out[2]
    assert heading.split() == ["#", "spiller", "poeng", "spilt", "vant", "skunker", "differanse"]
    assert len(row) == len(heading)  # each number ends under its heading
    assert main(["--lang", "nl", "hall", "round", "next", "--dir", hall]) == 1
    assert capsys.readouterr().err == (
        f"cribboard: er draait geen wedstrijdleider in {hall}: start hem met "
        f"`cribboard hall start --dir {hall}`\n"
    )
    assert main(["--lang", "nl", "remote", "--broker", "ftp://x", "--game", "g"]) == 2
    assert capsys.readouterr().err == (
        "cribboard: ongeldige broker-URL 'ftp://x': gebruik mqtt://HOST:PORT of mqtts://HOST:PORT\n"
    )


# --- the drawing --------------------------------------------------------------------------------


def _frame(players: int) -> bytes:
    rgb = bytearray(3 * 121)
    for player in range(players):
        r, g, b = render.FRONT_RGB[player]
        rgb[3 * (player * 30) : 3 * (player * 30) + 3] = bytes((r, g, b))
    return bytes(rgb)


@pytest.mark.parametrize("code", list(LANGUAGES))
def test_the_board_drawing_fits_80_columns_in_every_language(code: str) -> None:
    state = BoardState(
        rev=1,
        target=121,
        players=2,
        dealer=0,
        winner=None,
        result="playing",
        front=[12, 7, 0],
        back=[5, 3, 0],
        games=[1, 0, 0],
        pending=[0, 0, 0],
        undo=1,
        skunk_double=True,
    )
    for players in (2, 3):
        for color in (True, False):
            english = draw_frame(_frame(players), color, players).splitlines()
            with language(code):
                lines = draw_frame(_frame(players), color, players).splitlines()
            # the legend: 80 columns (three players in colour: no longer than the English)
            assert len(lines[-1]) <= max(80, len(english[-1])), (code, lines[-1])
            assert all(len(re.sub(r"\x1b\[[0-9;]*m", "", line)) <= 80 for line in lines[:-1])
    with language(code):
        text = describe_state(state)
    assert len(text.splitlines()) == 3
    if code == "sv":
        assert text.startswith(
            "parti till 121, två spelare\n  blå      12  (bakre   5)  partier 1  givare"
        )


# --- a whole game at the keeper in Swedish ------------------------------------------------------

SWEDISH_GAME = [
    "?",  # the keys, in Swedish: they stay the same letters
    "d o",  # orange won the cut and deals: blue is the pone
    "b2",
    "o",
    "b",
    "o3",  # the play
    "s JD",  # a jack turned: his heels for orange
    "c 5H 5S 5C 4D",  # blue's hand, with the starter set by s
    "4 2H 3H 4H 6D",  # orange claims 4, the hand has more: muggins
    "m",  # blue takes the points orange overlooked
    "12",  # orange's crib; the deal passes to blue
    "b29",
    "what",
    "b20",
    "u",  # undone
    "b20",  # blue reaches 61 first, orange is short of 31: a skunk
    "12",  # the game is over
    "q",
]


def english_fragments() -> set[str]:
    """The words of each English message between its placeholders (its phrases, and its words
    of four letters or more), unless the Swedish translation keeps them (his heels, muggins,
    orange) or the word is Swedish too (hand, given, skunk)."""
    swedish = {_key(m): m.string for m in po("sv") if m.id}
    vocabulary = " ".join(
        " ".join(text) if isinstance(text, list | tuple) else text for text in swedish.values()
    )
    fragments = set()
    for message in template():
        if not message.id:
            continue
        texts = list(message.id) if isinstance(message.id, list | tuple) else [message.id]
        kept = swedish[_key(message)]
        kept_text = " ".join(kept) if isinstance(kept, list | tuple) else kept
        for text in texts:
            for line in text.splitlines():
                for piece in PLACEHOLDER.split(line):
                    piece = piece.strip(" :;,.()[]?!·")
                    if len(piece.split()) >= 2 and len(piece) >= 8 and piece not in kept_text:
                        fragments.add(piece)
                    for word in re.findall(r"[A-Za-z']{4,}", piece):
                        if not re.search(rf"\b{word}\b", vocabulary):
                            fragments.add(word)
    return fragments


def test_a_whole_game_at_the_keeper_in_swedish(
    english_env: None,
    module_vboard: VirtualBoard,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    typed = iter(SWEDISH_GAME)
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(typed))
    status = main(["--port", module_vboard.port, "keep", "--new", "--target", "61", "--lang", "sv"])
    assert status == 0
    out = capsys.readouterr().out
    assert "nytt parti till 61." in out, out
    for expected in (
        "spelar på brädet på",
        "Lyft om given: ",
        "his heels: 2 till givaren",  # the help: the same keys, the player's words
        "muggins: ta poängen som motspelaren missade",
        "orange ger, blå räknar först",
        "utspelet: b2 / o2 peggar 2 (bokstaven ensam: 1)",
        "blå peggar 2",
        "orange peggar 1",
        "startkort JD",
        "his heels: orange peggar 2",
        "handen för blå 5H 5S 5C 4D + JD: femton 8, par 6 = 14",  # never "blås" (blow)
        "handen för orange 2H 3H 4H 6D + JD: femton 4, följd på tre 3 = 7",
        "MUGGINS! handen för orange har 7, inte 4: 3 missade. m: blå tar dem",
        "muggins: blå tar 3",
        "krubban för orange: 12",
        "given går till blå",
        "'what'? spelarna är b/o; ? visar tangenterna",
        "ångrat: blå 20",
        "BLÅ VINNER med skunk! n: nytt parti  u: ångra  q: avsluta",
        "partiet är slut: n startar ett nytt, u tar tillbaka det senaste",
        "parti till 61, två spelare",
        "främre, bakre pegg",
    ):
        assert expected in out, expected
    left = sorted(
        fragment
        for fragment in english_fragments()
        if re.search(rf"(?<![\w']){re.escape(fragment)}(?![\w'])", out)
    )
    assert not left, f"English left in the Swedish game: {left}"
