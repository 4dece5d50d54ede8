"""Rendering the leaderboard items to files: tables as Markdown, sortable HTML and rank maps; the
figure with labelled guarantees and "data unavailable" panels; the best-method matrix."""
from __future__ import annotations

import pytest

from dpclust.pipeline.items.leaderboard import best, figure, table

from .helpers import board_records, spec


@pytest.fixture(scope="module")
def board():
    return table.aggregate(board_records(), spec("table", "aggregate"), None)


def test_table_renders_markdown_sortable_html_and_rank_maps(board, tmp_path):
    table.render(board, spec("table", "render"), tmp_path / "table")
    for ext in (".md", ".html", ".png", ".pdf"):
        assert (tmp_path / f"table{ext}").stat().st_size > 0, ext
    html = (tmp_path / "table.html").read_text()
    assert "<table class='sortable'>" in html and "addEventListener('click'" in html
    assert "Posterior" in html and "DPLloyd" in html and "HST k-median" in html   # display names
    md = (tmp_path / "table.md").read_text()
    assert "not DP as published" in md and "unknown" in md and "Data unavailable: Gowalla" in md
    lines = [line for line in md.splitlines() if "| Balcan et al. |" in line and "| 1 |" in line]
    assert lines, "Balcan et al. ranks 1 at ε = 1 on S1"


def test_figure_labels_every_method_without_a_dp_guarantee(board, tmp_path, monkeypatch):
    captured = {}

    def keep(fig, stem):
        captured["fig"] = fig

    monkeypatch.setattr(figure, "save_figure", keep)
    figure.render(board, spec("figure", "render"), tmp_path / "figure")
    fig = captured["fig"]
    legend = fig.legends[0]
    labels = [t.get_text() for t in legend.get_texts()]
    assert "Posterior [not DP]" in labels and "Prior [guarantee unknown]" in labels
    assert "DPLloyd" in labels and "Balcan et al." in labels                  # DP methods: no tag
    assert "k-means++ + Lloyd [non-private] (mean)" in labels
    styles = dict(zip(labels, (h.get_linestyle() for h in legend.legend_handles)))
    assert styles["Posterior [not DP]"] == "--" and styles["Prior [guarantee unknown]"] == ":"
    assert styles["DPLloyd"] == "-"
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any(t.startswith("data unavailable") for t in texts)               # the Gowalla panel
    titles = [ax.get_title() for ax in fig.axes]
    assert "S1, k = 5 (k-means)" in titles and "S1, k = 5 (k-median)" in titles


def test_figure_and_best_write_their_files(board, tmp_path):
    figure.render(board, spec("figure", "render"), tmp_path / "figure")
    assert (tmp_path / "figure.png").stat().st_size > 0 and (tmp_path / "figure.pdf").exists()
    b = best.aggregate(board_records(), spec("best", "aggregate"), None)
    best.render(b, spec("best", "render"), tmp_path / "best")
    for ext in (".md", ".html", ".png", ".pdf"):
        assert (tmp_path / f"best{ext}").stat().st_size > 0, ext
    md = (tmp_path / "best.md").read_text()
    assert "| Balcan et al. |" in md and "separated" in md and "overlapping" in md and "data unavailable" in md
    assert "Posterior (not DP as published, not ranked) has a lower mean" in md


def test_everything_unavailable_still_renders_every_item(tmp_path):
    """Offline without a mirror: every cell says "data unavailable"; nothing crashes, nothing is ranked."""
    from .helpers import DPLLOYD, HST, KMEANSPP, record

    recs = [record("iris", DPLLOYD, 3, 1.0, "kmeans", guarantee="eps", status="data_unavailable"),
            record("iris", HST, 3, 1.0, "kmedian", guarantee="eps", status="data_unavailable"),
            record("iris", KMEANSPP, 3, None, "reference_kmeans", guarantee="nonprivate", status="data_unavailable")]
    t = table.aggregate(recs, spec("table", "aggregate"), None)
    assert set(t["status"]) == {"data_unavailable"} and t["rank"].isna().all()
    table.render(t, spec("table", "render"), tmp_path / "table")
    figure.render(t, spec("figure", "render"), tmp_path / "figure")
    b = best.aggregate(recs, spec("best", "aggregate"), None)
    assert set(b["status"]) == {"data_unavailable"}
    best.render(b, spec("best", "render"), tmp_path / "best")
    for stem in ("table", "figure", "best"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 0
    [check] = table.checks(t, spec("table", "checks"))
    assert check.holds is None


def test_a_long_legend_under_one_row_of_panels_leaves_the_panels_their_height():
    """One dataset on the board: one row of four panels above a legend of 40 methods. The legend
    makes the figure taller instead of squeezing the panels (it took most of their height)."""
    import matplotlib.pyplot as plt

    from dpclust.pipeline.plotting import legend_below, panel_grid

    fig, axes = panel_grid(4, ncols=4, panel_size=(3.4, 2.7))
    lines = [axes[0].plot([0, 1], [i, i + 1], label=f"method {i}")[0] for i in range(40)]
    legend_below(fig, lines, [line.get_label() for line in lines], ncol=4, title_lines=2)
    fig.suptitle("title\nnote")
    fig.canvas.draw()
    height = fig.get_size_inches()[1]
    for ax in axes:
        assert ax.get_position().height * height > 1.5, "panel squeezed by the legend"
    plt.close(fig)


def test_a_narrow_log_panel_labels_at_least_three_y_ticks(board, tmp_path, monkeypatch):
    """Costs within 1–1.7× of the best (Skin's k-median panels at full scale) showed two labelled y
    ticks (1, 2); the figure labels at least three in every panel, and keeps 1, 2, 5 on a wide one."""
    captured = {}
    monkeypatch.setattr(figure, "save_figure", lambda fig, stem: captured.setdefault("fig", fig))
    narrow = board.copy()
    ok = narrow["status"] == "ok"
    narrow.loc[ok, ["mean", "ci_low", "ci_high"]] = 1.0 + (narrow.loc[ok, ["mean", "ci_low", "ci_high"]] % 0.7)
    figure.render(narrow, spec("figure", "render"), tmp_path / "figure")
    fig = captured["fig"]
    fig.canvas.draw()
    drawn = [ax for ax in fig.axes if ax.lines]
    assert drawn
    for ax in drawn:
        lo, hi = ax.get_ylim()
        labelled = [t for t in ax.yaxis.get_majorticklocs() if lo <= t <= hi]
        assert len(labelled) >= 3, (ax.get_title(), labelled)
    assert figure.log_tick_subs(0.5, 50.0) == (1.0, 2.0, 5.0)
