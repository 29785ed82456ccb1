"""Charts of benchmark results: ``strata bench NAME --plot FILE`` (PNG, matplotlib from the dev extra).

Each chart is drawn from results as ``strata bench ... --json`` prints them (one JSON object per
benchmark), so ``--replot RESULTS`` draws the same chart again from a saved run without running
anything. ``draw(name, results, path)`` picks the chart: ``all`` (or several results) the ratio of
each benchmark to its same-run baseline beside its target; ``recall`` recall@10 per search mode and
BM25 per data file; ``quality`` precision and good memories per session per path; ``scale`` the
growth curves of :func:`strata_dev.bench.scale.plot`. Without matplotlib it draws nothing and says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The headline ratio of each benchmark's result (ours ÷ the same-run baseline) and its target.
RATIOS: dict[str, tuple[str, float, str]] = {
    "ingest": ("ratio", 0.5, "conversations/s ÷ SDK transactions"),
    "consolidate": ("ratio", 0.5, "items/s ÷ SDK transactions"),
    "project": ("ratio", 0.5, "events/s ÷ by-hand projection"),
    "doctor": ("ratio", 1.0, "wall time ÷ bare read (lower is better)"),
}


def load(path: str | Path) -> list[dict[str, Any]]:
    """The results saved from ``--json`` (one object a line) or ``--out`` (one indented object)."""
    text = Path(path).read_text(encoding="utf-8").strip()
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    return whole if isinstance(whole, list) else [whole]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _dig(value: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def ratio_of(result: dict[str, Any]) -> float | None:
    """The benchmark's headline ratio, where its result has one."""
    name = result.get("benchmark", "")
    key = RATIOS.get(name, ("ratio", 0.0, ""))[0]
    value = _dig(result, key)
    return float(value) if isinstance(value, int | float) else None


def summary(results: Sequence[dict[str, Any]], path: Path, title: str = "") -> str | None:
    """One bar per benchmark with a headline ratio, its target as a mark."""
    plt = _pyplot()
    rows: list[tuple[str, float]] = [(r["benchmark"], value) for r in results if r.get("benchmark") in RATIOS
                                     and (value := ratio_of(r)) is not None]
    if plt is None or not rows:
        return None
    fig, ax = plt.subplots(figsize=(10, 0.7 * len(rows) + 2.0))
    names = [f"{name}\n({RATIOS[name][2]})" for name, _ in rows]
    ax.barh(names, [v for _, v in rows], color="C0", label="ours ÷ same-run baseline")
    ax.scatter([RATIOS[name][1] for name, _ in rows], names, marker="|", s=600, color="C3", zorder=3,
               label="target")
    for index, (_, value) in enumerate(rows):
        ax.annotate(f"{value:.2f}", (value, index), xytext=(4, 0), textcoords="offset points", va="center")
    ax.invert_yaxis()
    ax.set_xlabel("ratio")
    quick = " (--quick)" if all(r.get("quick") for r in results) else ""
    ax.set_title(title or f"strata bench{quick}: ours ÷ the same run's baseline")
    ax.set_xlim(0, max(1.1, max(v for _, v in rows) * 1.15))
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    return _save(plt, fig, path)


def recall(result: dict[str, Any], path: Path) -> str | None:
    """Recall@10 of keyword, vector and hybrid search beside BM25 over the raw turns, per file."""
    plt = _pyplot()
    files = result.get("files") or []
    if plt is None or not files:
        return None
    modes = ("bm25", "keyword", "vector", "hybrid")
    fig, ax = plt.subplots(figsize=(max(6, 2.2 * len(files)), 4.5))
    width = 0.8 / len(modes)
    for index, mode in enumerate(modes):
        values = [_dig(f, f"all_questions.{mode}_recall@10") or 0.0 for f in files]
        xs = [i + (index - (len(modes) - 1) / 2) * width for i in range(len(files))]
        ax.bar(xs, values, width, label="BM25 over the raw turns" if mode == "bm25" else mode, color=f"C{index}")
    ax.set_xticks(range(len(files)), [f"{f.get('data')}\n({f.get('owners')} owners)" for f in files], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("recall@10, all questions")
    ax.set_title(f"strata bench recall ({result.get('embedder', '?')} embedder)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4)
    return _save(plt, fig, path)


def quality(result: dict[str, Any], path: Path) -> str | None:
    """Precision (good ÷ judged) and good memories per session, per path and judge."""
    plt = _pyplot()
    paths = {name: row for name, row in (result.get("paths") or {}).items() if "visible_memories" in row}
    if plt is None or not paths:
        return None
    bars: list[tuple[str, float | None, float | None]] = []
    for name, row in paths.items():
        bars.append((f"{name}\n(first blind)", row.get("precision"), row.get("good_per_session")))
        for judge, figures in sorted((row.get("by_judge") or {}).items()):
            bars.append((f"{name}\n{judge}", figures.get("precision"), figures.get("good_per_session")))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 0.45 * len(bars) + 2))
    labels = [b[0] for b in bars]
    left.barh(labels, [b[1] or 0.0 for b in bars], color="C0")
    left.axvline(0.7, color="C3", linestyle="--", label="target 0.7 (rules)")
    left.axvline(0.9, color="C2", linestyle="--", label="target 0.9 (model)")
    left.set_xlim(0, 1)
    left.set_title("precision: good ÷ judged")
    left.legend(fontsize=7)
    right.barh(labels, [b[2] or 0.0 for b in bars], color="C1")
    right.set_title("good memories per session")
    for ax in (left, right):
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(f"strata bench quality, {result.get('split')} split, {result.get('sessions')} sessions")
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> str:
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return str(path)


def draw(name: str, results: Sequence[dict[str, Any]], path: Path) -> str | None:
    """The chart for ``strata bench NAME`` over ``results`` (see the module docstring)."""
    if name != "all":  # one benchmark's chart, also from a saved `all` run
        results = [r for r in results if r.get("benchmark") in (name, None)] or list(results)
    if name == "all" or len(results) > 1:
        return summary(results, path)
    result = results[0] if results else {}
    if name == "recall":
        return recall(result, path)
    if name == "quality":
        return quality(result, path)
    if name == "scale":
        from strata_dev.bench import scale

        return scale.plot(result, path)
    return summary(results, path)
