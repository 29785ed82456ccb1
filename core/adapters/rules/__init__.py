"""The rules implementations of the ports that have a model implementation too: the extractor
(``extractor/``), the router (``router.py``), and the reading of a declared attribute from the
owner's own typed words (``slot_words.py``); beside them, the reading of a search question
(``query_words.py``). The English they read lives here, never in the domain.
The extractor is not imported here: its patterns cost every importer about 50 ms of CPU, which the
api's routes would pay without ever extracting (``from core.adapters.rules.extractor import
RuleExtractor`` where it runs).
"""

from .router import RuleRouter

__all__ = ["RuleRouter"]
