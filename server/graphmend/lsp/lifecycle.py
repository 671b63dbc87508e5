"""The session's life: `initialize` (capabilities, settings, pull or push), `initialized` (the
pyproject.toml watcher, the client's settings), settings and configuration changes, `shutdown`."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from lsprotocol import types

from ..runtime.runner import kill_all
from .convert import SOURCE
from .feature import Feature
from .session import GraphMendServer
from .sync import pull_diagnostics

logger = logging.getLogger(__name__)


def initialize(ls: GraphMendServer, params: types.InitializeParams) -> None:
    ls.start(params)
    if ls.pull:
        # Registered here, before pygls computes the capabilities: only a pull client is told
        # the server answers pulls, so no client ever gets diagnostics both ways.
        ls.feature(
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=ls.settings.cross_file, workspace_diagnostics=False),
        )(pull_diagnostics)


async def initialized(ls: GraphMendServer, params: types.InitializedParams) -> None:
    ls.show_pending_problems()
    if ls.support.watched_files_registration:
        watcher = types.FileSystemWatcher(glob_pattern="**/pyproject.toml")
        registration = types.Registration(
            id=str(uuid.uuid4()),
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except Exception:
            logger.info("the client did not accept the pyproject.toml watcher")
    if ls.support.configuration:
        await _pull_configuration(ls)


async def _pull_configuration(ls: GraphMendServer) -> None:
    try:
        answer = await ls.workspace_configuration_async(types.ConfigurationParams(items=[types.ConfigurationItem(section="graphmend")]))
    except Exception:
        return
    if answer and isinstance(answer[0], dict):
        ls.apply_settings(answer[0])


async def did_change_configuration(ls: GraphMendServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and settings:
        ls.apply_settings(settings)
    elif ls.support.configuration:
        await _pull_configuration(ls)


def did_change_watched_files(ls: GraphMendServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.refresh_all()


def shutdown(ls: GraphMendServer, params: Any) -> None:
    ls.runtime.stop_all()  # no worker outlives the server
    kill_all()


FEATURE = Feature(
    handlers=(
        (types.INITIALIZE, initialize, None),
        (types.INITIALIZED, initialized, None),
        (types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration, None),
        (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, did_change_watched_files, None),
        (types.SHUTDOWN, shutdown, None),
    )
)
