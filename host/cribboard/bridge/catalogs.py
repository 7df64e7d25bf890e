"""The page's translations, from the same compiled catalogs the host speaks from
(`cribboard/locale/<lang>/LC_MESSAGES/cribboard.mo`): GET /i18n/languages.json lists the
languages, GET /i18n/<lang>.json is one language's messages as JSON for bridge/static/i18n.js.
The page is one of the catalog's sources (`make catalogs` extracts its JavaScript too), so a
language's JSON carries every message of the catalog; the page looks up the ones it marks."""

from __future__ import annotations

from typing import Any

from babel.messages.mofile import read_mo

from cribboard.i18n import DOMAIN, LANGUAGES, LOCALE_DIR, SOURCE_LANGUAGE


def languages_json() -> dict[str, Any]:
    """The languages the page offers: code and own name, and the source language."""
    return {"source": SOURCE_LANGUAGE, "languages": dict(LANGUAGES)}


def catalog_json(language: str) -> dict[str, Any]:
    """One language's messages: `messages` maps a sentence to its translation, `plurals` a
    singular sentence to its forms, and `plural` is the language's rule (a C expression in `n`
    giving the form's index, as gettext's Plural-Forms). English has no messages: the page's
    own text is English. KeyError for a language there is not."""
    if language not in LANGUAGES:
        raise KeyError(language)
    messages: dict[str, str] = {}
    plurals: dict[str, list[str]] = {}
    if language == SOURCE_LANGUAGE:
        return {"language": language, "plural": "(n != 1)", "messages": {}, "plurals": {}}
    path = LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.mo"
    with path.open("rb") as file:
        catalog = read_mo(file)
    for message in catalog:
        if not message.id or not message.string:
            continue  # the header, or a sentence not translated yet (the page shows it in English)
        if isinstance(message.id, tuple | list):
            forms = list(message.string)
            if all(forms):
                plurals[message.id[0]] = forms
        else:
            assert isinstance(message.string, str)
            messages[message.id] = message.string
    return {
        "language": language,
        "plural": catalog.plural_expr,
        "messages": messages,
        "plurals": plurals,
    }
