"""Source text quoted inside a message: one line, and cut where a reader sees that it was cut.

Reasons and titles quote the code they are about (the mask `target != ignore` is ...). Long
expressions used to be sliced at a fixed width, which left a message ending mid-name
(`loop_attr[edge_index[0][inv_ma`), a quote a reader takes for the real code. Here the text is put
on one line, cut at the last token boundary before the width, and marked with an ellipsis.
"""

from __future__ import annotations

ELLIPSIS = "…"


def excerpt(text: str, limit: int = 40) -> str:
    """`text` on one line, at most `limit` characters; a cut one ends at a token boundary and `…`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    boundary = max((i for i, ch in enumerate(cut) if not (ch.isalnum() or ch == "_")), default=-1)
    if boundary >= (limit * 2) // 3:  # back off to the boundary only when little is lost
        cut = cut[: boundary + 1] if cut[boundary] in ")]}" else cut[:boundary]
    return cut.rstrip() + ELLIPSIS
