"""The rules implementations of the ports that have a model implementation too: the extractor
(``extractor/``), the router (``router.py``), and the reading of a declared attribute from the
owner's own typed words (``slot_words.py``); beside them, the reading of a search question
(``query_words.py``), the secret detector (``sensitivity.py``) and the content words of a statement
(``similarity.py``). The English they read lives here, never in the domain. Nothing loads before it
is asked for: the extractor's patterns cost every importer about 50 ms of CPU, the router's 12 ms,
which a function that only checks for secrets would pay for nothing.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .router import RuleRouter


def __getattr__(name: str) -> object:
    if name != "RuleRouter":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .router import RuleRouter

    return RuleRouter


__all__ = ["RuleRouter"]
