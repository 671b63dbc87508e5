"""Runtime confirmation in the editor: the "Confirm with TorchDynamo" code lens and the
`graphmend.confirm` command, which runs sample inputs under dynamo in a worker process and marks
the diagnostics with what dynamo did. server.py adds them to the server (`FEATURE`)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..analysis import analyze
from ..analysis.source import SourceFile
from ..files import read_source
from ..findings import Finding
from ..runtime.compare import compare, files_to_compare
from ..runtime.runner import ConfirmError, RunOptions, run_sample
from ..runtime.samples import Sample, SampleError, configured_samples, find_sample, samples_for_file
from .confirm import CONFIRM, ConfirmRun, code_lenses, run_summary
from .documents import display_name, path_of
from .feature import Feature
from .session import GraphMendServer
from .workspace_commands import Progress

logger = logging.getLogger(__name__)


def code_lens(ls: GraphMendServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """"Confirm with TorchDynamo" on each compiled class or function that has a sample input."""
    uri = params.text_document.uri
    path, current = path_of(uri), ls.current_text(uri)
    if path is None or current is None:
        return []
    samples = samples_for_file(ls.config_for(path), path)
    return code_lenses(samples, current.text, ls.runtime, ls.workspace.position_codec, SourceFile(current.text).lines)


def _requested_samples(ls: GraphMendServer, args: tuple[Any, ...]) -> list[Sample]:
    """The samples a `graphmend.confirm` call asks for: `{"target": "path.py:Name"}` (or the bare
    string), `{"uri": ...}` (every sample defined in that file), or nothing: the samples of the open
    files, else every sample configured in the workspace folders."""
    folders = ls.folders()
    cwd = folders[0] if folders else Path.cwd()
    requested = [a for a in args if a not in (None, [], {})]
    if len(requested) == 1 and isinstance(requested[0], list):
        requested = requested[0]
    samples: list[Sample] = []
    for argument in requested:
        target = argument.get("target") if isinstance(argument, dict) else argument if isinstance(argument, str) else None
        uri = argument.get("uri") if isinstance(argument, dict) else None
        if isinstance(target, str):
            file = Path(target.rpartition(":")[0])
            file = file if file.is_absolute() else cwd / file
            samples.append(find_sample(target, ls.config_for(file), cwd))
        elif isinstance(uri, str) and path_of(uri) is not None:
            path = path_of(uri)
            samples.extend(samples_for_file(ls.config_for(path), path))  # type: ignore[arg-type]
        else:
            raise SampleError(f"graphmend.confirm takes {{'target': 'path.py:Name'}} or {{'uri': ...}}, got {argument!r}")
    if not requested:
        for uri in list(ls.workspace.text_documents):
            path = path_of(uri)
            if path is not None:
                samples.extend(samples_for_file(ls.config_for(path), path))
        if not samples:
            for folder in folders:
                samples.extend(configured_samples(ls.config_for(folder / "pyproject.toml")))
    unique: dict[str, Sample] = {}
    for sample in samples:
        unique.setdefault(sample.key(), sample)
    return list(unique.values())


def _findings_on_disk(ls: GraphMendServer, path: Path) -> tuple[str, list[Finding]] | None:
    """What the static analysis says of the file as dynamo ran it (the saved text)."""
    config = ls.config_for(path)
    source = read_source(path, config.max_file_bytes)
    if source.text is None:
        return None
    return source.text, analyze(source.text, str(path), config)


async def confirm(ls: GraphMendServer, *args: Any) -> dict[str, Any]:
    """Run each requested sample under TorchDynamo in the background (the user's interpreter, a
    worker process per run) and mark the diagnostics with what dynamo did."""
    try:
        samples = _requested_samples(ls, args)
    except (SampleError, ValueError) as exc:
        ls.show(f"GraphMend: {exc}", types.MessageType.Error)
        return {"runs": [], "error": str(exc)}
    if not samples:
        message = (
            'GraphMend: no sample input to confirm with. Add one to pyproject.toml: [tool.graphmend.samples] '
            '"models/net.py:Net" = "models/net.py:make_sample", where make_sample() returns (callable, args, kwargs).'
        )
        ls.show(message, types.MessageType.Info)
        return {"runs": [], "error": message}
    progress = Progress(ls, "GraphMend: confirm with TorchDynamo")
    await progress.begin()
    loop = asyncio.get_running_loop()
    options = RunOptions(python=ls.settings.confirm_python, timeout_s=float(ls.settings.confirm_timeout_s), device=ls.settings.confirm_device)
    answers: list[dict[str, Any]] = []
    for number, sample in enumerate(samples, 1):
        if progress.cancelled():
            answers.append({"target": sample.label, "error": "cancelled", "stage": "cancelled"})
            continue
        stop = ls.runtime.start(sample.key())
        if stop is None:
            answers.append({"target": sample.label, "error": "already running", "stage": "running"})
            continue
        progress.message(f"{sample.label} ({number}/{len(samples)})", int(100 * (number - 1) / len(samples)))
        _warn_unsaved(ls, sample.target.path)
        ls.runtime_changed()  # the lens says "running"
        run: ConfirmRun | None = None
        try:
            report = await _in_daemon_thread(run_sample, sample, options, lambda stop=stop: stop.is_set() or progress.cancelled())
            texts: dict[Path, str] = {}
            findings: dict[Path, list[Finding]] = {}
            for path in files_to_compare(report):
                on_disk = await loop.run_in_executor(ls.analysis_pool, _findings_on_disk, ls, path)
                if on_disk is not None:
                    texts[path.resolve()], findings[path.resolve()] = on_disk
            run = ConfirmRun(report, compare(report, findings), texts)
        except ConfirmError as exc:
            if exc.stage != "cancelled":
                ls.show(f"GraphMend: {exc}", types.MessageType.Error)
            if exc.detail:
                ls.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"GraphMend: {exc}\n{exc.detail}"))
            answers.append({"target": sample.label, "error": str(exc), "stage": exc.stage})
        except asyncio.CancelledError:  # the client cancelled the request: stop the worker too
            stop.set()
            progress.end("cancelled")
            raise
        except Exception as exc:
            logger.exception("confirmation of %s failed", sample.label)
            ls.show(f"GraphMend: confirmation of {sample.label} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)
            answers.append({"target": sample.label, "error": f"{type(exc).__name__}: {exc}", "stage": "internal"})
        finally:
            ls.runtime.finish(sample.key(), run)
            ls.runtime_changed()
        if run is not None:
            answers.append(run_summary(run))
            ls.show(f"GraphMend: {sample.label}: {run.describe()}; {run.comparison.summary()}.", types.MessageType.Info)
    progress.end(f"{sum(1 for a in answers if 'graphs' in a)} of {len(samples)} confirmed")
    return {"runs": answers}


def _in_daemon_thread(function: Callable[..., Any], *args: Any) -> asyncio.Future:
    """Run a blocking call in a daemon thread: unlike the executor's threads, it never keeps the
    server alive at exit while a user's model is still compiling (the worker is killed then)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not future.done():
            future.set_exception(error) if error is not None else future.set_result(result)

    def body() -> None:
        try:
            result = function(*args)
        except BaseException as exc:
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=body, name="graphmend-confirm", daemon=True).start()
    return future


def _warn_unsaved(ls: GraphMendServer, path: Path) -> None:
    for uri, document in list(ls.workspace.text_documents.items()):
        found = path_of(uri)
        if found is not None and found.resolve() == path:
            saved = read_source(path, ls.config_for(path).max_file_bytes).text  # as the analysis reads it
            if saved is not None and saved != document.source:
                ls.show(f"GraphMend: {display_name(uri)} has unsaved changes; TorchDynamo runs the saved file", types.MessageType.Warning)
            return


FEATURE = Feature(
    handlers=((types.TEXT_DOCUMENT_CODE_LENS, code_lens, types.CodeLensOptions(resolve_provider=False)),),
    commands=((CONFIRM, confirm),),
)
