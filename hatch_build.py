"""The package's README as a package index shows it: README.md with its relative links made
absolute, so its pictures and documents open from the index's page as they do in the repository.
The repository's address is the one pyproject.toml's [project.urls] name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

REPOSITORY = "https://github.com/cribboard/cribboard"
BRANCH = "main"

# A Markdown link or picture whose target has no scheme: ](target) with an optional title.
_LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>(?![a-z][a-z0-9+.-]*:)[^)\s]+)\)")


def absolute_links(markdown: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """`markdown` with every relative link pointing into the repository: pictures at their raw
    bytes, documents at their page, a heading (#anchor) at the repository's README."""

    def rewrite(match: re.Match[str]) -> str:
        target = match["target"]
        if target.startswith("#"):
            url = f"{repository}{target}"
        elif match["bang"]:
            raw = repository.replace("https://github.com/", "https://raw.githubusercontent.com/")
            url = f"{raw}/{branch}/{target}"
        else:
            url = f"{repository}/blob/{branch}/{target}"
        return f"{match['bang']}[{match['text']}]({url})"

    return _LINK.sub(rewrite, markdown)


class CustomMetadataHook(MetadataHookInterface):
    """Sets the dynamic `readme`: README.md, links absolute."""

    def update(self, metadata: dict[str, Any]) -> None:
        text = (Path(self.root) / "README.md").read_text(encoding="utf-8")
        metadata["readme"] = {"content-type": "text/markdown", "text": absolute_links(text)}
