"""Figure and table rendering helpers shared by every paper's `items.py`.

Renderers read tidy tables only. Output is deterministic: fixed fonts/sizes, no timestamps in
PDF/PNG metadata, so the same table gives the same bytes.
"""

from __future__ import annotations

import functools
import html as _html
import math
import textwrap
from pathlib import Path

import pandas as pd

from dpclust.pipeline import style

#: Metadata that keeps output files byte-identical across runs.
PDF_METADATA = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": "dpclust"}
PNG_METADATA = {"Software": "dpclust"}


@functools.cache
def pyplot():
    """matplotlib.pyplot on the Agg backend with the house style (`style.RC_PARAMS`): what every
    figure is drawn with. Imported on first use, so that the steps that draw nothing (aggregate,
    check) do not pay for it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(style.RC_PARAMS)
    return plt


def style_for(name: str, index: int) -> dict:
    """Stable marker and colour of the `index`-th method of a figure."""
    return {"marker": style.MARKERS[index % len(style.MARKERS)], "color": f"C{index % 10}"}


def panel_grid(n_panels: int, ncols: int = 3, panel_size=style.PANEL_SIZE, sharey: bool = False):
    """A figure with `n_panels` axes laid out `ncols` wide; unused axes are removed."""
    ncols = max(1, min(ncols, n_panels))
    nrows = max(1, math.ceil(n_panels / ncols))
    fig, axes = pyplot().subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
                             squeeze=False, sharey=sharey, layout="constrained")
    flat = list(axes.ravel())
    for ax in flat[n_panels:]:
        ax.remove()
    return fig, flat[:n_panels]


def legend_entries(axes) -> tuple[list, list]:
    """(handles, labels) of every panel's legend entries, each label once, in panel order: one figure
    legend for panels that share their lines."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    return handles, labels


def legend_below(fig, handles: list, labels: list, ncol: int, fontsize: float = style.LEGEND_FONTSIZE,
                 title_lines: int = 0) -> None:
    """A figure legend under the panels, `ncol` wide, with the figure made taller by the legend's rows
    (and `title_lines` of a suptitle) so that a long legend never squeezes the panels: with one row of
    panels and 40 entries the legend would otherwise take most of the height."""
    rows = math.ceil(len(labels) / max(1, ncol))
    width, height = fig.get_size_inches()
    line = 1.6 * fontsize / 72                 # one legend row (text plus spacing), inches
    fig.set_size_inches(width, height + rows * line + title_lines * 1.6 * 10 / 72)
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=fontsize, frameon=False)


#: What a panel or cell without results says, by the record's status (one home: figures, the
#: leaderboard's tables and notes). `refused` is a documented limit of the algorithm (`api.Refused`,
#: e.g. EUGkM's grid above its memory guard), never missing data.
STATUS_TEXT = {"data_unavailable": "data unavailable", "no_reference": "no non-private reference",
               "refused": "refused", "absent": "not run in this preset", "no_runs": "no runs"}


def panel_status(rows: pd.DataFrame) -> tuple[str, str]:
    """(status, reason) of a panel with nothing to draw: its first row that is not ok (a dataset that
    cannot be had makes every row of its panel `data_unavailable`; an algorithm's refusal is its own
    row's), or ('no_runs', '')."""
    bad = rows[rows["status"] != "ok"] if "status" in rows else rows.iloc[:0]
    if bad.empty:
        return "no_runs", ""
    reason = bad["reason"].iloc[0] if "reason" in bad else ""
    return str(bad["status"].iloc[0]), "" if pd.isna(reason) else str(reason)


def status_note(table: pd.DataFrame, item: dict, sep: str = ": ") -> str:
    """One line naming what has no results, by status: "data unavailable: Skin; refused: PGkM on MNIST"
    (the datasets whose data could not be had; the algorithms that refused a dataset), or ""."""
    from dpclust.pipeline.itemkit import dataset_name, name

    bad = table[table["status"] != "ok"] if "status" in table else table.iloc[:0]
    parts = []
    for status in dict.fromkeys(bad["status"]):
        rows = bad[bad["status"] == status]
        if status == "refused" and "algorithm" in rows:
            what = [f"{name(item, a)} on {dataset_name(item, d)}"
                    for d, a in dict.fromkeys(zip(rows["dataset"], rows["algorithm"]))]
        else:
            what = [dataset_name(item, d) for d in sorted(set(rows["dataset"]))]
        parts.append(STATUS_TEXT.get(status, str(status)) + sep + ", ".join(what))
    return "; ".join(parts)


def note_missing(ax, rows: pd.DataFrame, item: dict) -> None:
    """On a drawn panel, name in small grey text the algorithms its rows have no results of, by
    status ("refused: EUGkM"), so that a missing line is never silent."""
    from dpclust.pipeline.itemkit import name

    bad = rows[rows["status"] != "ok"] if "status" in rows else rows.iloc[:0]
    parts = [STATUS_TEXT.get(s, str(s)) + ": "
             + ", ".join(dict.fromkeys(name(item, a) for a in bad.loc[bad["status"] == s, "algorithm"]))
             for s in dict.fromkeys(bad["status"])]
    if parts:
        ax.text(0.02, 0.02, "; ".join(parts), transform=ax.transAxes, fontsize=6.5, color="0.3", va="bottom")


def mark_unavailable(ax, title: str, reason: str = "", status: str = "data_unavailable") -> None:
    """Draw a panel without results in one short line: "data unavailable" (why, in three words) or
    "refused" (the algorithm's own limit, shortened); the full reason is in the table and the log.
    No data is ever substituted."""
    from dpclust.pipeline.itemkit import short_reason

    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
    if status == "ok":                  # a panel whose runs have nothing to draw
        status = "no_runs"
    if status == "refused":
        why = textwrap.fill(textwrap.shorten(str(reason), 64, placeholder=" …"), 32) if reason else ""
    elif status == "data_unavailable":
        why = short_reason(reason) if reason else ""
    else:
        why = ""
    text = STATUS_TEXT.get(status, str(status)) + (f"\n({why})" if why else "")
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=8, color="0.3")
    for spine in ax.spines.values():
        spine.set_linestyle(":")


unavailable_panel = mark_unavailable


def mean_sd_line(ax, x, mean, sd=None, label: str | None = None, band: bool = False, **style) -> None:
    """A line of means with the spread the table carries: ± sd error bars (or a band)."""
    import numpy as np

    x, mean = np.asarray(x, dtype=float), np.asarray(mean, dtype=float)
    sd = None if sd is None else np.nan_to_num(np.asarray(sd, dtype=float), nan=0.0)
    if sd is None or not np.any(sd > 0):
        ax.plot(x, mean, label=label, **style)
        return
    if band:
        line, = ax.plot(x, mean, label=label, **style)
        ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15, linewidth=0)
    else:
        ax.errorbar(x, mean, yerr=sd, label=label, capsize=2, elinewidth=0.8, **style)


def _wrap(text: str, width: int) -> str:

    return "\n".join(textwrap.wrap(text, width)[:4])


def save_figure(fig, stem: str | Path) -> None:
    """Write `stem.png` and `stem.pdf` deterministically and close the figure."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), metadata=PNG_METADATA, bbox_inches="tight")
    fig.savefig(stem.with_suffix(".pdf"), metadata=PDF_METADATA, bbox_inches="tight")
    pyplot().close(fig)


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no tabulate dependency)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def sortable_table_script() -> str:
    """A few lines of JavaScript that sort every `table.sortable` by the clicked column."""
    return """<script>
document.querySelectorAll('table.sortable').forEach(function (t) {
  t.querySelectorAll('th').forEach(function (th, i) {
    th.addEventListener('click', function () {
      var rows = Array.from(t.querySelectorAll('tr')).slice(1), asc = th.dataset.asc !== '1';
      rows.sort(function (a, b) {
        var x = a.children[i].innerText, y = b.children[i].innerText, nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      th.dataset.asc = asc ? '1' : '0';
      rows.forEach(function (r) { t.appendChild(r); });
    });
  });
});
</script>"""


def html_table(df: pd.DataFrame, title: str = "", note: str = "") -> str:
    """A readable, sortable HTML table (for the report)."""
    head = "".join(f"<th>{_html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{_html.escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            "<style>body{font-family:sans-serif;font-size:13px} table{border-collapse:collapse} "
            "td,th{border:1px solid #bbb;padding:3px 6px} th{cursor:pointer;background:#eee}</style></head><body>"
            + (f"<h3>{_html.escape(title)}</h3>" if title else "")
            + f"<table class='sortable'><tr>{head}</tr>{body}</table>"
            + (f"<p>{_html.escape(note)}</p>" if note else "") + sortable_table_script() + "</body></html>\n")


def write_table(df: pd.DataFrame, stem: str | Path, title: str = "", note: str = "") -> None:
    """Render a table as `stem.md`, `stem.png` and `stem.pdf`."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    md = (f"**{title}**\n\n" if title else "") + to_markdown(df) + (f"\n{note}\n" if note else "")
    stem.with_suffix(".md").write_text(md, encoding="utf-8")
    stem.with_suffix(".html").write_text(html_table(df, title, note), encoding="utf-8")
    n_rows = max(len(df), 1)
    width = min(max(2.0, 1.3 * len(df.columns)), 16)
    fig, ax = pyplot().subplots(figsize=(width, 0.45 + 0.28 * (n_rows + 1) + (0.3 if note else 0)))
    ax.axis("off")
    cells = [[_cell(v) for v in row] for row in df.itertuples(index=False)] or [["" for _ in df.columns]]
    tab = ax.table(cellText=cells, colLabels=[str(c) for c in df.columns], loc="center", cellLoc="center")
    tab.auto_set_font_size(False)
    tab.set_fontsize(7)
    tab.auto_set_column_width(list(range(len(df.columns))))
    if title:
        ax.set_title(title, fontsize=9)
    if note:
        fig.text(0.01, 0.01, _wrap(note, 160), fontsize=6, va="bottom")
    save_figure(fig, stem)
