"""The page's translations, from the same compiled catalogs the host speaks from
(`cribboard/locale/<lang>/LC_MESSAGES/cribboard.mo`): GET /i18n/languages.json lists the
languages, GET /i18n/<lang>.json is one language's messages as JSON for bridge/static/i18n.js.
The page is one of the catalog's sources (`make catalogs` extracts its JavaScript too), so a
language's JSON carries every message of the catalog; the page looks up the ones it marks."""

from __future__ import annotations

import gettext
from typing import Any

from cribboard.i18n import DOMAIN, LANGUAGES, LOCALE_DIR, SOURCE_LANGUAGE


def languages_json() -> dict[str, Any]:
    """The languages the page offers: code and own name, and the source language."""
    return {"source": SOURCE_LANGUAGE, "languages": dict(LANGUAGES)}


def _plural_expr(translations: gettext.GNUTranslations) -> str:
    """The C expression of the catalog's Plural-Forms header (`nplurals=2; plural=(n != 1);`)."""
    for part in translations.info().get("plural-forms", "").split(";"):
        name, _, value = part.partition("=")
        if name.strip() == "plural" and value.strip():
            return value.strip()
    return "(n != 1)"  # gettext's own default: English's rule


def catalog_json(language: str) -> dict[str, Any]:
    """One language's messages: `messages` maps a sentence to its translation, `plurals` a
    singular sentence to its forms, and `plural` is the language's rule (a C expression in `n`
    giving the form's index, as gettext's Plural-Forms). English has no messages: the page's
    own text is English. KeyError for a language there is not."""
    if language not in LANGUAGES:
        raise KeyError(language)
    if language == SOURCE_LANGUAGE:
        return {"language": language, "plural": "(n != 1)", "messages": {}, "plurals": {}}
    path = LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.mo"
    with path.open("rb") as file:
        translations = gettext.GNUTranslations(file)
    # The standard library's reader has no public way to list a catalog's messages; its parsed
    # table (`_catalog`, unchanged since Python 2) maps a sentence to its translation, and a
    # plural's (singular, index) to each form. Untranslated sentences are not in a .mo at all.
    table: dict[str | tuple[str, int], str] = getattr(translations, "_catalog")  # noqa: B009
    messages: dict[str, str] = {}
    forms: dict[str, dict[int, str]] = {}
    for key, text in table.items():
        if isinstance(key, tuple):
            forms.setdefault(key[0], {})[key[1]] = text
        elif key:  # "" is the header
            messages[key] = text
    plurals = {
        singular: [by_index[i] for i in sorted(by_index)]
        for singular, by_index in forms.items()
        if all(by_index.values())
    }
    return {
        "language": language,
        "plural": _plural_expr(translations),
        "messages": messages,
        "plurals": plurals,
    }
