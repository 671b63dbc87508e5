"""Code quoted in a reason is cut where a reader can see it was cut, never mid-name."""

from __future__ import annotations

import pytest
from graphmend.quoting import ELLIPSIS, excerpt


def test_short_text_is_quoted_whole_on_one_line() -> None:
    assert excerpt("mask.sum()", 40) == "mask.sum()"
    assert excerpt("a.b(c)\n    .d()", 40) == "a.b(c) .d()"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("loop_attr[edge_index[0][inv_mask]] = edge_attr[inv_mask]", "loop_attr[edge_index[0]" + ELLIPSIS),
        ("nn.functional.ctc_loss(log_probs, flattened_targets)", "nn.functional.ctc_loss" + ELLIPSIS),
    ],
)
def test_long_text_is_cut_at_a_token_boundary(text: str, expected: str) -> None:
    assert excerpt(text, 30) == expected


def test_one_long_name_is_cut_inside_it_and_marked() -> None:
    quoted = excerpt("x" * 60, 30)
    assert len(quoted) == 30 and quoted.endswith(ELLIPSIS)


def test_a_decline_reason_quotes_a_long_index_without_cutting_a_name() -> None:
    from graphmend.rewrite import fix_source

    source = (
        "import torch\n\n\n@torch.compile\ndef f(loop_attr, edge_attr, edge_index, inv_mask):\n"
        "    loop_attr[edge_index[0][inv_mask]] = edge_attr[inv_mask]\n    return loop_attr\n"
    )
    reasons = [d.reason for d in fix_source(source, "case.py").declined]
    quoted = [part for reason in reasons for part in reason.split("`")[1::2]]
    assert quoted, reasons
    assert all(not part.endswith("inv_ma") for part in quoted), reasons
