"""Charts of the dashboard as PNG, drawn with matplotlib on the server (no JavaScript, no CDN).

Legible without colour: markers and hatching distinguish series, every point carries its value,
and the page shows the same numbers as a table.
"""

import io

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
HATCHES = ["", "//", "..", "xx", "\\\\", "++", "--", "oo"]


def png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    pyplot.close(figure)
    return buffer.getvalue()


def by_round(series: list[dict]) -> bytes:
    """Krippendorff's alpha per round, one line per dimension/variant, each point labelled."""
    figure, axes = pyplot.subplots(figsize=(7, 3.6))
    for n, s in enumerate(series):
        points = [(r["round"], r["alpha"]) for r in s["rounds"] if r["alpha"] is not None]
        if not points:
            continue
        xs, ys = zip(*points, strict=True)
        axes.plot(
            xs,
            ys,
            marker=MARKERS[n % len(MARKERS)],
            color="black",
            linestyle=["-", "--", ":"][n % 3],
            label=f"{s['dimension']} ({s['variant']})",
        )
        for x, y in points:
            axes.annotate(f"{y:.2f}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    axes.set_ylabel("Krippendorff's alpha")
    axes.set_ylim(-0.1, 1.05)
    axes.grid(axis="y", linewidth=0.3)
    axes.legend(fontsize=8, frameon=False)
    return png(figure)


def labels(distribution: dict) -> bytes:
    """Label counts of one dimension/variant as hatched bars with their counts on top."""
    counts = distribution["counts"]
    figure, axes = pyplot.subplots(figsize=(6, 3))
    bars = axes.bar([c["label"] for c in counts], [c["count"] for c in counts], color="white", edgecolor="black")
    for n, bar in enumerate(bars):
        bar.set_hatch(HATCHES[n % len(HATCHES)])
    axes.bar_label(bars, fontsize=8)
    axes.set_ylabel("labels")
    axes.set_title(f"{distribution['dimension']} ({distribution['variant']})", fontsize=10)
    return png(figure)
