"""Turn a bench/models run (JSON) into the markdown table and the PNG chart in bench/results/."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from corpus import FIX_COMMAND, FIXED


def _sites(record: dict[str, Any] | None) -> int | None:
    if not record or not record.get("ok"):
        return None
    return len(record.get("breaks", []))


def _ratio(speed: dict[str, Any] | None, variant: str, key: str) -> str:
    """original / variant time (>1: the fixed code is faster); "fails" when inductor could not
    compile or run the variant."""
    if not speed or not speed.get("original", {}).get("ok") or variant not in speed:
        return "-"  # not timed (or timed before the fixers changed)
    if not speed.get(variant, {}).get("ok"):
        return "fails"
    return f"{speed['original'][key] / speed[variant][key]:.2f}x"


def _probed(breaking: list[dict[str, Any]]) -> list[str]:
    """The fixed variants this run probed (an older run has no `costly`)."""
    return [v for v in FIXED if any(v in r for r in breaking)]


def _after(row: dict[str, Any], variant: str) -> int:
    sites = _sites(row.get(variant))
    return len(row["original"]["breaks"]) if sites is None else sites


def secondary_sites(row: dict[str, Any]) -> set[str]:
    """Break sites without a finding that are seen to follow other breaks: no fix was aimed at them
    (fixes rewrite findings), yet in every fixed variant that ran the site is reported exactly when
    some other site of the model still is, and at least one variant removed all the others and with
    them this one (the variants that set no process-wide dynamo flag). transformers' output-capturing wrappers are such sites ("Missing tp_iternext" in
    `check_model_inputs`, a frame dynamo skips when a break inside the forward it wraps cannot be
    resumed there): no finding belongs on that line, the one at the break it follows covers it."""
    # not the unsafe variant: a process-wide flag it sets (capture_scalar_outputs) removes breaks
    # no finding was aimed at, which says nothing about what they follow
    runs = [row[v]["breaks"] for v in FIXED if v != "unsafe" and (row.get(v) or {}).get("ok") and not row[v].get("error")]
    found: set[str] = set()
    missed = set(row["static"]["missed"])
    for site in {(b["path"], b["line"]) for b in row["original"]["breaks"] if f"{b['path']}:{b['line']}" in missed}:
        present = [any((b["path"], b["line"]) == site for b in breaks) for breaks in runs]
        others = [any((b["path"], b["line"]) != site for b in breaks) for breaks in runs]
        if runs and present == others and not all(others):
            found.add(f"{site[0]}:{site[1]}")
    return found


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ran = [r for r in rows if r["original"].get("ok") and not r["original"].get("error")]
    breaking = [r for r in ran if r["original"]["breaks"]]
    before = sum(len(r["original"]["breaks"]) for r in breaking)
    probed = _probed(breaking)
    # a variant that failed to run removed nothing: its model keeps the original's count
    after = {v: sum(_after(r, v) for r in breaking) for v in probed}
    failed = {v: [r["model"] for r in breaking if _sites(r.get(v)) is None] for v in probed}
    changed = {v: [r["model"] for r in breaking if str(r.get(f"{v}_equal", "")).startswith("DIFFERENT")] for v in probed}
    # "missing": the original's outputs were not on disk to compare with (a re-fix on another machine)
    uncompared = {v: [r["model"] for r in breaking if r.get(f"{v}_equal") == "missing"] for v in probed}
    sites = sum(r["static"]["sites"] for r in breaking)
    predicted = sum(r["static"]["predicted"] for r in breaking)
    secondary = sum(len(secondary_sites(r)) for r in breaking)
    ran_findings = sum(r["static"]["findings_ran"] for r in breaking)
    confirmed = sum(r["static"]["findings_confirmed"] for r in breaking)
    reasons = Counter(str(r["original"].get("error", ""))[:60] for r in rows if r not in ran)
    return {
        "types": len(rows), "ran": len(ran), "breaking": len(breaking), "before": before, "after": after,
        "failed": failed, "changed": changed, "uncompared": uncompared, "sites": sites, "predicted": predicted,
        "secondary": secondary,
        "findings_ran": ran_findings, "findings_confirmed": confirmed, "not_run": reasons,
    }


def write_reports(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows, version = data["rows"], data["transformers"]
    t = totals(rows)
    breaking = [r for r in rows if r["original"].get("ok") and not r["original"].get("error") and r["original"]["breaks"]]
    lines = [
        f"# transformers {version}: graph breaks before and after `graphmend fix`",
        "",
        f"{t['types']} model types; {t['ran']} built small and ran; **{t['breaking']} break** under TorchDynamo."
        + ("" if data.get("complete", True) else " **Incomplete run**: the model types after the last listed were not reached."),
        "",
        "| | break sites | removed |",
        "|---|---|---|",
        f"| before | {t['before']} | |",
    ]
    probed = _probed(breaking)
    for variant in probed:
        removed = t["before"] - t["after"][variant]
        share = f"{100 * removed / t['before']:.0f}%" if t["before"] else "-"
        lines.append(f"| after `{FIX_COMMAND[variant]}` | {t['after'][variant]} | {removed} ({share}) |")
    recall = f"{t['predicted']}/{t['sites']} ({100 * t['predicted'] / t['sites']:.0f}%)" if t["sites"] else "-"
    primary = t["sites"] - t["secondary"]
    if t["secondary"] and primary:
        recall += (
            f"; {t['predicted']}/{primary} ({100 * t['predicted'] / primary:.0f}%) of the sites that do not follow another break "
            f"({t['secondary']} sites without a finding are reported by dynamo exactly while another break of the model stands, "
            "and went with those in a fixed variant: `secondary_sites` in bench/models/report.py)"
        )
    precision = f"{t['findings_confirmed']}/{t['findings_ran']} ({100 * t['findings_confirmed'] / t['findings_ran']:.0f}%)" if t["findings_ran"] else "-"
    lines += [
        "",
        f"Static recall (break sites a finding covers): {recall}. Precision (findings on lines the forward pass ran "
        f"where dynamo broke): {precision}.",
        "Variants that did not run (counted as not fixed): " + ", ".join(f"{v} {t['failed'][v] or 'none'}" for v in probed) + ".",
        "Changed outputs: " + ", ".join(f"{v} {len(t['changed'][v])} {t['changed'][v] or ''}" for v in probed)
        + "".join(f"; {v} not compared (original outputs missing): {len(t['uncompared'][v])}" for v in probed if t["uncompared"][v])
        + ".",
        "",
        "Speed columns: original time / fixed time (cold: first call with compile, fresh inductor caches; steady: median of "
        "20 calls), inductor on CPU with one thread. The safe variant of these models has no fix applied, so its column "
        "shows this machine's noise.",
        "",
        f"| model | graphs | sites before → {' → '.join(probed)} | recall | "
        + " | ".join(f"{v} output" for v in probed) + " | "
        + " | ".join(f"cold ({v}) | steady ({v})" for v in probed) + " |",
        "|---|---|---|---|" + "---|" * (3 * len(probed)),
    ]
    for r in breaking:
        static = r["static"]
        speed = r.get("speed")
        lines.append(
            f"| {r['model']} | {r['original']['graphs']} | {' → '.join(str(_sites(r.get(v))) for v in ('original', *probed))} "
            f"| {static['predicted']}/{static['sites']} | " + " | ".join(str(r.get(f"{v}_equal")) for v in probed) + " | "
            + " | ".join(f"{_ratio(speed, v, 'cold_s')} | {_ratio(speed, v, 'steady_s')}" for v in probed) + " |"
        )
    for variant, label in (("original", "before fixing"), *((v, f"left after `{FIX_COMMAND[v]}`") for v in probed)):
        kinds = Counter(b.get("summary", "?") for r in breaking if (r.get(variant) or {}).get("ok") for b in r[variant].get("breaks", []))
        if kinds:
            lines += ["", f"Break sites {label}, by dynamo's reason:", ""]
            lines += [f"- {count} × {reason}" for reason, count in kinds.most_common()]
    failures = [f"{r['model']} ({v}): {' '.join(str(r['speed'][v].get('error')).split())[:160]}" for r in breaking if r.get("speed") for v in FIXED if v in r["speed"] and not r["speed"][v].get("ok")]
    if failures:
        lines += ["", "Inductor could not compile or run (speed probe, `torch.compile` default backend):", ""] + [f"- {f}" for f in failures]
    missed = [
        f"{r['model']}: {', '.join(m + (' (follows another break)' if m in secondary_sites(r) else '') for m in r['static']['missed'])}"
        for r in breaking
        if r["static"]["missed"]
    ]
    if missed:
        lines += ["", "Break sites no static finding covers:", ""] + [f"- {m}" for m in missed]
    lines += ["", "Model types that did not build or run small (count by reason):", ""]
    lines += [f"- {count} × {reason or '(no reason)'}" for reason, count in t["not_run"].most_common(15)]
    markdown = path.with_suffix(".md")
    markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    chart = _chart(breaking, path.with_suffix(".png"), version)
    return f"wrote {markdown}" + (f" and {chart}" if chart else " (no chart: matplotlib is not installed)")


def _chart(breaking: list[dict[str, Any]], out: Path, version: str) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [r["model"] for r in breaking]
    series = {v: [_sites(r.get(v)) or 0 for r in breaking] for v in ("original", *_probed(breaking))}
    figure, axis = plt.subplots(figsize=(max(6, 0.45 * len(names) + 2), 4))
    width = 0.27
    for offset, (variant, values) in zip((-width, 0, width), series.items()):
        axis.bar([i + offset for i in range(len(names))], values, width, label=variant)
    axis.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=8)
    axis.set_ylabel("graph-break sites")
    axis.set_title(f"transformers {version}: break sites before and after graphmend fix")
    axis.legend()
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out


if __name__ == "__main__":  # re-render reports from runs already made: report.py RESULTS.json ...
    import sys

    for argument in sys.argv[1:]:
        print(write_reports(Path(argument)))
