"""Figure 7 of Su et al. (2016): running time of one DPLloyd run and one EUGkM run per dataset at
ε = `options.epsilon`, from the runs of Figure 1 (median wall-clock seconds: not byte-reproducible).

Aggregate: `aggregate_nicv` (items/common.py; it carries wall_mean_s and wall_median_s). Render:
bars per dataset of `options.panels`. Checks: §6.4's "DPLloyd runs faster than EUGkM".
"""

from __future__ import annotations

import numpy as np

from ...aggregate import Check, fmt
from ...itemkit import availability, dataset_name, name
from ...plotting import save_figure
from .common import aggregate_nicv, available, plain_bools, tight

__all__ = ["aggregate_nicv", "check_fig7", "render_fig7"]

DPLLOYD, EUGKM = "su2016.dplloyd", "su2016.eugkm"
BARS = (DPLLOYD, EUGKM)


def render_fig7(table, item, stem):
    import matplotlib.pyplot as plt  # after dpclust.plotting chose the Agg backend

    options = item["options"]
    eps = float(options["epsilon"])
    panels = options["panels"]
    t = table[(table["status"] == "ok") & np.isclose(table["epsilon"].astype(float), eps)
              & table["algorithm"].isin(BARS)]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    x = np.arange(len(panels))
    for i, alg in enumerate(BARS):
        vals = [t[(t["dataset"] == ds) & (t["algorithm"] == alg)]["wall_median_s"].mean() for ds in panels]
        ax.bar(x + (i - 0.5) * 0.38, [v if v == v else 0 for v in vals], width=0.38, label=name(item, alg),
               color=f"C{i}")
    for j, ds in enumerate(panels):
        if availability(table, ds)[0] != "ok":
            ax.text(j, 0.5, "data\nunavailable", ha="center", va="center", fontsize=7, color="0.3",
                    transform=ax.get_xaxis_transform())
    ax.set_xticks(x, [dataset_name(item, p) for p in panels])
    if (t["wall_median_s"] > 0).any():
        ax.set_yscale("log")
    ax.set_ylabel("seconds per run (log)")
    ax.set_title(f"Running time per run, ε = {eps:g}")
    ax.legend()
    tight(fig)
    save_figure(fig, stem)


@plain_bools
def check_fig7(table, item) -> list[Check]:
    options = item["options"]
    eps = float(options["epsilon"])
    n_dpl, n_eug = name(item, DPLLOYD), name(item, EUGKM)
    out = []
    for ds in available(table, options["panels"]):
        t = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        t = t[np.isclose(t["epsilon"].astype(float), eps)]
        a = t[t["algorithm"] == DPLLOYD]["wall_median_s"].mean()
        b = t[t["algorithm"] == EUGKM]["wall_median_s"].mean()
        out.append(Check(f"{dataset_name(item, ds)}: {n_dpl} runs faster than {n_eug} at ε = {eps:g} (§6.4)",
                         None if (a != a or b != b) else a < b, f"seconds per run: {n_dpl} {fmt(a)}, {n_eug} {fmt(b)}"))
    return out or [Check("Figure 7 claim", None, f"no run at ε = {eps:g}")]
