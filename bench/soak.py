"""Does `graphmend lsp` stay flat over a long session? Prints numbers; asserts nothing.

    .venv/bin/python bench/soak.py [--minutes 30] [--files 3] [--check-every 500]

Starts the real server over stdio (push diagnostics, versioned edits) on a copy of a few model files
(the transformers modeling file closest to 3,000 lines and the examples), then types into them in
turn for the given time: each keystroke is an incremental `didChange`, and the clock stops when the
diagnostics for that version arrive. Every `--check-every` edits it runs "check whole workspace".
Every 10 s it reads the server's resident memory (VmRSS, from /proc). At the end: the memory
timeline (growth after the first minute's warm-up), latency p50/p99, and every error the server
showed or logged. Confirmation runs are not interleaved (they need a sample and run torch).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_latency import ROOT, keystroke, model_file, start, stop


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


async def soak(minutes: float, n_files: int, check_every: int) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="graphmend-soak-"))
    sources = [model_file(), *sorted((ROOT / "examples").glob("*.py"))][:n_files]
    paths = []
    for number, source in enumerate(sources):
        target = workspace / f"file{number}_{source.name}"
        shutil.copy(source, target)
        paths.append(target)
    client, state = await start(False, workspace)
    errors: list[str] = state["errors"]  # the server's error popups
    pid = client._server.pid  # type: ignore[attr-defined,union-attr]
    published: dict[str, dict[int, float]] = state["by_uri"]
    for path in paths:
        published.setdefault(path.as_uri(), {})

    texts = {p.as_uri(): p.read_text(encoding="utf-8") for p in paths}
    versions = dict.fromkeys(texts, 1)
    for uri, text in texts.items():
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    started = time.monotonic()
    memory: list[tuple[float, float]] = [(0.0, rss_mb(pid))]
    latencies: list[float] = []
    edits = 0
    uris = list(texts)
    while time.monotonic() - started < minutes * 60:
        uri = uris[edits % len(uris)]
        versions[uri] += 1
        version = versions[uri]
        if version - 2 >= 200:  # start a fresh comment line every 200 characters: keystroke() types at column version-2
            texts[uri] += "#" + "x" * 198 + "\n"
            versions[uri] = version = 2
            client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
            published[uri].clear()
            client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=texts[uri])))
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[keystroke(texts[uri], version)]
            )
        )
        deadline = sent + 10
        while version not in published[uri] and time.perf_counter() < deadline:
            await asyncio.sleep(0.002)
        if version in published[uri]:
            latencies.append(published[uri][version] - sent)
        else:
            errors.append(f"no diagnostics for {uri} version {version} within 10 s")
        edits += 1
        if edits % check_every == 0:
            await client.workspace_execute_command_async(types.ExecuteCommandParams(command="graphmend.checkWorkspace", arguments=[]))
        elapsed = time.monotonic() - started
        if elapsed - memory[-1][0] >= 10:
            memory.append((elapsed, rss_mb(pid)))
    await stop(client)
    shutil.rmtree(workspace, ignore_errors=True)

    warm = next((m for t, m in memory if t >= 60), memory[-1][1])
    print(f"{edits} edits over {minutes:g} min across {len(paths)} files ({', '.join(p.name for p in paths)})")
    print("RSS (MB) every ~10 s: " + " ".join(f"{m:.0f}" for _, m in memory))
    print(f"RSS after warm-up (1 min) {warm:.1f} MB, at the end {memory[-1][1]:.1f} MB: growth {memory[-1][1] - warm:+.1f} MB")
    if latencies:
        print(
            f"edit -> diagnostics: p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
            f"max {max(latencies) * 1000:.1f} ms (n={len(latencies)}; includes the debounce)"
        )
    print(f"errors: {len(errors)}" + "".join(f"\n  {e}" for e in errors[:10]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--check-every", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(soak(args.minutes, args.files, args.check_every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
