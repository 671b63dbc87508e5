"""What the editor asks about a place in a document: code actions (quick fixes, fix-all, "why no
fix"), the resolve of the fix-all edit, and hover. Each reads the analysis stored for the
document's current version (never re-analyses) and builds its answer off the event loop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

from lsprotocol import types

from .actions import FIX_ALL_KIND, code_actions, fix_all_action
from .documents import path_of
from .feature import Feature
from .hover import hover as hover_at
from .session import GraphMendServer

logger = logging.getLogger(__name__)
T = TypeVar("T")

# How long the editor waits for fixes to be planned before it gets an answer without them. Planning
# is bounded (nested planning stops at rewrite/nesting.py's depth), but one slow or runaway plan
# must not hold the lightbulb or the hover for good: the work goes on in its thread and its result
# is kept for the document's version, so the next request finds it.
PLANNING_SECONDS = 20.0
FIX_ALL_SECONDS = 120.0  # the whole file fixed, once, when the user picks fix-all


async def within(ls: GraphMendServer, seconds: float, default: T, what: str, work: Callable[[], T]) -> T:
    """`work()` on the analysis pool, or `default` (logged) where it takes more than `seconds`."""
    future = asyncio.get_running_loop().run_in_executor(ls.analysis_pool, work)
    try:
        return await asyncio.wait_for(asyncio.shield(future), seconds)
    except TimeoutError:
        logger.warning("%s took longer than %.0f s; answered without it", what, seconds)
        return default


async def code_action(ls: GraphMendServer, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
    uri = params.text_document.uri
    analysis = await ls.analysis_for(uri)
    if analysis is None:
        return []
    path = path_of(uri)
    return await within(
        ls,
        PLANNING_SECONDS,
        [],
        f"planning the quick fixes of {uri}",
        lambda: code_actions(
            analysis,
            params.range.start.line + 1,
            params.range.end.line + 1,
            params.context.only,
            ls.workspace.position_codec,
            level=ls.settings.quick_fix_level,
            disabled_support=ls.support.disabled_code_actions,
            resolve_support=ls.support.resolve_edit,
            docs_url=ls.settings.docs_url,
            path=str(path or uri),
        ),
    )


async def hover(ls: GraphMendServer, params: types.HoverParams) -> types.Hover | None:
    """The finding under the cursor, explained: why, the fix or why none, dynamo's break ids and
    what the last confirmation run saw there."""
    uri = params.text_document.uri
    analysis = await ls.analysis_for(uri)
    if analysis is None:
        return None
    path = path_of(uri)
    confirmed = []
    if path is not None and ls.runtime.runs:
        for run in ls.runtime.for_text(path, analysis.text):
            confirmed.extend(run.comparison.for_path(path)[0])
    return await within(
        ls,
        PLANNING_SECONDS,
        None,
        f"the hover of {uri}",
        lambda: hover_at(
            analysis,
            params.position,
            ls.workspace.position_codec,
            level=ls.settings.quick_fix_level,
            docs_url=ls.settings.docs_url,
            confirmed=confirmed,
        ),
    )


async def resolve_code_action(ls: GraphMendServer, action: types.CodeAction) -> types.CodeAction:
    """Fill in the fix-all edit offered in the lightbulb, for the version it was offered on."""
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    if not data.get("fixAll") or not isinstance(uri, str):
        return action
    analysis = await ls.analysis_for(uri)
    if analysis is None or analysis.version != data.get("version"):
        return action  # the document changed since: no edit rather than a wrong one
    path = path_of(uri)
    codec = ls.workspace.position_codec
    resolved = await within(ls, FIX_ALL_SECONDS, None, f"fixing all of {uri}", lambda: fix_all_action(analysis, codec, str(path or uri)))
    if resolved is not None:
        action.edit = resolved.edit
        action.title = resolved.title
    return action


FEATURE = Feature(
    handlers=(
        (
            types.TEXT_DOCUMENT_CODE_ACTION,
            code_action,
            types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True),
        ),
        (types.TEXT_DOCUMENT_HOVER, hover, None),
        (types.CODE_ACTION_RESOLVE, resolve_code_action, None),
    )
)
