"""The rules implementations of the ports that have a model implementation too: the extractor
(``extractor/``), the router (``router.py``), and the reading of a declared attribute from the
owner's own typed words (``slot_words.py``); beside them, the reading of a search question
(``query_words.py``) and the secret detector (``sensitivity.py``). The English they read lives
here, never in the domain.
Nothing is imported here until asked for: the extractor's patterns cost every importer about 50 ms
of CPU and the router's some forty compiled patterns, which a function that only checks for secrets
would pay without ever extracting or routing (``from core.adapters.rules.extractor import
RuleExtractor`` where it runs).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .router import RuleRouter


def __getattr__(name: str) -> object:
    if name == "RuleRouter":
        from .router import RuleRouter

        return RuleRouter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RuleRouter"]
