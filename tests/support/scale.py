"""How big the size-bound tests run.

`make test` runs them at a size that still crosses every page boundary they are about (several
pages of the cascade and replacement cursors, thousands of export lines), so the suite stays within
its CI budget; `make scale` (``STRATA_TEST_SCALE=full``) runs the same tests at the sizes the issues
state (600-item conversations, a 10,000-memory export) and prints the memory figures they report.
"""

from __future__ import annotations

import os

FULL = os.environ.get("STRATA_TEST_SCALE", "").lower() == "full"

# Items seeded into one conversation for the reprocess / cascade tests (pages of 100 each).
CONVERSATION_ITEMS = 600 if FULL else 250
# Memories in the streamed-export test.
EXPORT_MEMORIES = 10_000 if FULL else 2_000
