"""The order of the passages in a read prompt.

The paper fixes which passages a read sees, not their order. By default they are shown in retrieval rank ("rank"),
as recorded runs were made. "cache" shows first the passages the previous read of the run already showed, in the
order it showed them, then the new ones in rank order: the prompt then starts with what the model server has just
read (the reader prompt puts the documents right after the fixed instructions), so its prompt cache skips that part
instead of reading it again. The sync and gist reads of one iteration share most of their passages, and later
iterations repeat earlier ones. What each order saves, and what it does to recall, is measured by
bench/llm_agent_subset.py (docs/results.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

ReadOrder = Literal["rank", "cache"]


def read_order(passages: Sequence[int], read_before: Sequence[int], order: ReadOrder) -> list[int]:
    """The passages to read, in the order of `order`; `read_before` is what the previous read showed, in its order.
    The same passages either way."""
    if order == "rank" or not read_before:
        return list(passages)
    wanted = set(passages)
    front = [p for p in dict.fromkeys(read_before) if p in wanted]
    shown = set(front)
    return front + [p for p in dict.fromkeys(passages) if p not in shown]
