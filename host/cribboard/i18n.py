"""The languages people meet the host in: English (the source), Swedish, Norwegian bokmål and
Dutch, from GNU gettext catalogs (`locale/<lang>/LC_MESSAGES/cribboard.po`, compiled to `.mo`).

Every sentence a person reads is marked where it is written: `_("...")` for a sentence,
`n_("...", "...", n)` for one that changes with a number, and `N_("...")` for a sentence kept
in a table and translated where it is shown. Values go in by name, so a translator can move
them: `_("%(player)s pegs %(points)d", player=name, points=3)`. The page's JavaScript marks its
sentences the same way (bridge/static/i18n.js), and one catalog per language serves both
(`make catalogs` extracts them with Babel; see docs/translating.md).

The language is chosen once per command: `--lang`, else the environment as gettext reads it
(LANGUAGE, LC_ALL, LC_MESSAGES, LANG: the first one set, LANGUAGE may list several), else
English. The protocol, the API's JSON, the logs and the OpenAPI document stay English.
"""

from __future__ import annotations

import contextlib
import gettext
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

DOMAIN = "cribboard"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
"""Where the catalogs live: `<lang>/LC_MESSAGES/cribboard.po` and `.mo`, and the template."""

SOURCE_LANGUAGE = "en"
LANGUAGES: dict[str, str] = {
    "en": "English",
    "sv": "Svenska",
    "nb": "Norsk bokmål",
    "nl": "Nederlands",
}
"""The languages there are, each by its code and by its own name (the page's menu)."""

_ALIASES = {"no": "nb", "nb": "nb"}
"""Codes that mean one of LANGUAGES: `no` (Norwegian) is read as bokmål."""

LANGUAGE_ENV = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
"""The variables gettext reads, in its order."""

_current: gettext.NullTranslations = gettext.NullTranslations()
_language = SOURCE_LANGUAGE


def normalize(code: str) -> str | None:
    """The language a locale name or language tag means (`sv_SE.UTF-8`, `nb-NO`, `no`, `NL`),
    or None when it is none of LANGUAGES. `C` and `POSIX` mean English."""
    base = code.strip().split(".")[0].split("@")[0]
    if base in ("C", "POSIX"):
        return SOURCE_LANGUAGE
    primary = base.replace("-", "_").split("_")[0].lower()
    primary = _ALIASES.get(primary, primary)
    return primary if primary in LANGUAGES else None


def language_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The language the environment asks for, as gettext reads it: the first of LANGUAGE,
    LC_ALL, LC_MESSAGES, LANG that is set; LANGUAGE may list several (`nb:sv`), and the first
    known one is taken. English when none is known."""
    environ = os.environ if environ is None else environ
    for name in LANGUAGE_ENV:
        value = environ.get(name)
        if value:
            for code in value.split(":"):
                known = normalize(code) if code else None
                if known is not None:
                    return known
            return SOURCE_LANGUAGE
    return SOURCE_LANGUAGE


def choose_language(requested: str | None, environ: Mapping[str, str] | None = None) -> str:
    """`--lang` when given (ValueError when it is not one of LANGUAGES), else the
    environment's language."""
    if requested:
        known = normalize(requested)
        if known is None:
            raise ValueError(
                _("unknown language %(code)r: use %(codes)s", code=requested, codes=language_list())
            )
        return known
    return language_from_env(environ)


def language_list() -> str:
    """`en, sv, nb, nl`: the codes `--lang` takes."""
    return ", ".join(LANGUAGES)


def translations(language: str) -> gettext.NullTranslations:
    """The compiled catalog of `language` (no catalog for English: the source text)."""
    if language == SOURCE_LANGUAGE:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, localedir=LOCALE_DIR, languages=[language])


def use_language(language: str) -> None:
    """Speak `language` (one of LANGUAGES) from now on, in this process."""
    global _current, _language
    _current = translations(language)
    _language = language


@contextlib.contextmanager
def language(code: str) -> Iterator[None]:
    """Speak `code` inside the block, then the language before it again (for tests and for
    code that speaks for someone else)."""
    before = _language
    use_language(code)
    try:
        yield
    finally:
        use_language(before)


def _(message: str, /, **values: object) -> str:
    """`message` in the language in use, its `%(name)s` placeholders filled from `values`."""
    text = _current.gettext(message)
    return text % values if values else text


def n_(singular: str, plural: str, count: int, /, **values: object) -> str:
    """The singular or plural sentence for `count`, in the language in use (its plural rule),
    filled from `values` (`count` is one of them unless given otherwise)."""
    text = _current.ngettext(singular, plural, count)
    return text % {"count": count, **values}


def N_(message: str) -> str:  # noqa: N802 (gettext's name for it)
    """Marks a sentence for the catalog without translating it here: a table's entry,
    translated with `_` where it is shown."""
    return message


class Later:
    """A sentence with values, translated and filled each time it is shown (`str(later)`): for
    text made before the language is chosen, such as the command line's help."""

    def __init__(self, message: str, values: dict[str, object]) -> None:
        self.message = message
        self.values = values

    def __str__(self) -> str:
        values = {k: str(v) if isinstance(v, Later) else v for k, v in self.values.items()}
        return _(self.message, **values)


def L_(message: str, /, **values: object) -> Later:  # noqa: N802 (as N_)
    """Marks a sentence with values for the catalog, to be translated when shown."""
    return Later(message, values)
