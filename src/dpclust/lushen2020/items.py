"""Items of Lu & Shen (arXiv 2002.01043): Tables 1–2 and Figures 7–10 (aggregate/render/checks).

* Table 1: notation, static (from the item config).
* Table 2: computed from the processed datasets beside the printed values.
* Figure 7: mean cost / mean cost of Lloyd from the same initial centroids (paired by seed), log
  scale, against the per-atom-step budget ε_step = epsilon / atom_steps (see the config header);
  the table stores ratio and gap = ratio − 1.
* Figure 8: share of Algorithm 1 runs whose pre-noise output matches Lloyd's (`info.match`).
* Figures 9/10: iteration ratio Algorithm 1 / Lloyd (same initial centroids, `info`), and the
  average-iterations tables (b) beside the paper's numbers.
Checks implement the paper's claims; a claim that fails in our runs is reported as failing.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..aggregate import Check, fmt
from ..plotting import mark_unavailable, panel_grid, save_figure, style_for, write_table

POSTERIOR, PRIOR, LLOYD = "lushen2020.posterior", "lushen2020.prior", "lushen2020.lloyd"
ALG1 = (POSTERIOR, PRIOR)
BASELINES = ("lushen2020.su", "lushen2020.privgene", "lushen2020.gupt", "lushen2020.dwork", "lushen2020.blum")
NAMES = {POSTERIOR: "Posterior", PRIOR: "Prior", "lushen2020.su": "SU", "lushen2020.privgene": "PrivGene",
         "lushen2020.gupt": "GUPT", "lushen2020.dwork": "DWORK", "lushen2020.blum": "BLUM", LLOYD: "LLOYD"}
ORDER = list(NAMES)
DATASET_NAMES = {"iris": "Iris", "house": "House", "s1": "S1", "birch2_12k": "Birch2", "image": "Image",
                 "lifesci": "Lifesci"}
INFO_KEYS = ("match", "lloyd_iterations", "lloyd_steps", "lloyd_cost", "prenoise_ratio", "sampling_iterations",
             "epsilon_step", "epsilon_0", "epsilon_reference", "forced_stop")


def _atom_steps(settings: dict) -> float | None:
    if "atom_steps" in settings:
        return float(settings["atom_steps"])
    ref = settings.get("reference") or {}
    return float(ref["atom_steps"]) if "atom_steps" in ref else None


def runs_table(records: list[dict]) -> pd.DataFrame:
    """One row per run (status rows for unavailable datasets), with ε_step and the info we use."""
    rows = []
    for rec in records:
        base = {"dataset": rec["dataset"], "algorithm": rec["algorithm"], "k": rec["k"],
                "epsilon": rec.get("epsilon"), "status": rec.get("status", "ok"), "reason": rec.get("reason", "")}
        steps = _atom_steps(rec.get("settings") or {})
        base["eps_step"] = (rec["epsilon"] / steps) if (rec.get("epsilon") is not None and steps) else np.nan
        if base["status"] != "ok":
            rows.append(base)
            continue
        for run in rec["runs"]:
            row = dict(base, seed=run["seed"], cost=run["cost_kmeans"], iterations=run.get("iterations"),
                       epsilon_spent=run["epsilon_spent"])
            info = run.get("info") or {}
            for key in INFO_KEYS:
                row[key] = info.get(key)
            rows.append(row)
    df = pd.DataFrame(rows)
    for col in ("seed", "cost", "iterations", "epsilon_spent", *INFO_KEYS):
        if col not in df:
            df[col] = np.nan
    df["eps_step"] = df["eps_step"].round(10)
    return df


def _unavailable(df: pd.DataFrame) -> dict:
    bad = df[df["status"] != "ok"]
    return {d: str(r) for d, r in zip(bad["dataset"], bad["reason"])}


def _dataset_order(datasets) -> list:
    known = list(DATASET_NAMES)
    return sorted(set(datasets), key=lambda d: (known.index(d) if d in known else len(known), d))


# ---------------------------------------------------------------------------------------------
# Table 1 (static) and Table 2 (datasets)
# ---------------------------------------------------------------------------------------------
def aggregate_table1(records, item, ctx=None) -> pd.DataFrame:
    return pd.DataFrame([{"notation": a, "description": b} for a, b in item["static"]])


def render_table1(table, item, stem) -> None:
    write_table(table, stem, title=item["title"])


def aggregate_table2(records, item, ctx) -> pd.DataFrame:
    from ..data import DatasetUnavailable, load_processed

    rows = []
    for name in item["datasets"]:
        paper = item["options"]["paper"][name]
        row = {"dataset": DATASET_NAMES.get(name, name), "name": name, "paper_records": paper[0],
               "paper_dims": paper[1], "paper_k": paper[2], "k": item["options"]["k"][name]}
        try:
            data = load_processed(ctx.dataset_path(name))
            row.update(records=int(data.X.shape[0]), dims=int(data.X.shape[1]), status="ok", reason="")
        except (DatasetUnavailable, FileNotFoundError, KeyError, OSError) as exc:
            row.update(records=np.nan, dims=np.nan, status="data_unavailable", reason=str(exc))
        rows.append(row)
    return pd.DataFrame(rows)


def render_table2(table, item, stem) -> None:
    out = []
    for r in table.itertuples(index=False):
        ok = r.status == "ok"
        out.append({"Dataset": r.dataset,
                    "#Records": fmt(r.records) if ok else "data unavailable",
                    "#Dims": fmt(r.dims) if ok else "",
                    "#Clusters (k)": int(r.k),
                    "paper #Records": int(r.paper_records), "paper #Dims": int(r.paper_dims),
                    "paper #Clusters": int(r.paper_k)})
    write_table(pd.DataFrame(out), stem, title=item["title"],
                note="Rows computed from data/processed; 'paper' columns are Lu & Shen's Table 2.")


def check_table2(table, item) -> list[Check]:
    ok = table[table["status"] == "ok"]
    if ok.empty:
        return [Check("processed datasets have the sizes of Table 2", None, "no dataset available")]
    bad = [f"{r.dataset}: {int(r.records)}×{int(r.dims)} vs {r.paper_records}×{r.paper_dims}"
           for r in ok.itertuples() if (r.records, r.dims) != (r.paper_records, r.paper_dims)]
    missing = sorted(table.loc[table["status"] != "ok", "dataset"])
    return [Check("processed datasets have the #records and #dims of Table 2", not bad,
                  ("; ".join(bad) or "all available datasets match") +
                  (f"; unavailable: {', '.join(missing)}" if missing else ""))]


# ---------------------------------------------------------------------------------------------
# Figure 7
# ---------------------------------------------------------------------------------------------
def aggregate_fig7(records, item, ctx=None) -> pd.DataFrame:
    df = runs_table(records)
    cols = ["dataset", "k", "algorithm", "epsilon", "eps_step", "n", "cost_mean", "cost_std", "lloyd_cost_mean",
            "ratio", "gap", "eps_spent_mean", "eps_spent_min", "eps_spent_max", "status", "reason"]
    out = []
    for dataset, reason in _unavailable(df).items():
        out.append({"dataset": dataset, "status": "data_unavailable", "reason": reason})
    ok = df[df["status"] == "ok"]
    lloyd = ok[ok["algorithm"] == LLOYD][["dataset", "k", "seed", "cost"]].rename(columns={"cost": "lloyd_run_cost"})
    priv = ok[ok["algorithm"] != LLOYD].merge(lloyd, on=["dataset", "k", "seed"], how="left")
    for (dataset, k, alg, eps), cell in priv.groupby(["dataset", "k", "algorithm", "epsilon"], sort=True):
        lc = cell["lloyd_run_cost"]
        lmean = float(lc.mean()) if lc.notna().all() else np.nan
        cmean = float(cell["cost"].mean())
        ratio = cmean / lmean if lmean and not math.isnan(lmean) else np.nan
        out.append({"dataset": dataset, "k": k, "algorithm": alg, "epsilon": eps,
                    "eps_step": float(cell["eps_step"].iloc[0]), "n": len(cell), "cost_mean": cmean,
                    "cost_std": float(cell["cost"].std(ddof=1)) if len(cell) > 1 else np.nan,
                    "lloyd_cost_mean": lmean, "ratio": ratio, "gap": ratio - 1.0,
                    "eps_spent_mean": float(cell["epsilon_spent"].mean()),
                    "eps_spent_min": float(cell["epsilon_spent"].min()),
                    "eps_spent_max": float(cell["epsilon_spent"].max()), "status": "ok", "reason": ""})
    return pd.DataFrame(out, columns=cols)


def render_fig7(table, item, stem) -> None:
    datasets = _dataset_order(table["dataset"])
    fig, axes = panel_grid(max(len(datasets), 1), ncols=3, panel_size=(3.6, 2.8))
    for ax, dataset in zip(axes, datasets):
        cell = table[table["dataset"] == dataset]
        title = DATASET_NAMES.get(dataset, dataset)
        if (cell["status"] != "ok").all():
            mark_unavailable(ax, title, str(cell["reason"].iloc[0]))
            continue
        for i, alg in enumerate(a for a in ORDER if a in set(cell["algorithm"])):
            r = cell[cell["algorithm"] == alg].sort_values("eps_step")
            ax.plot(r["eps_step"], r["ratio"], label=NAMES[alg], ms=4, **style_for(alg, i))
        ax.axhline(1.0, color="0.6", lw=0.8, ls="--")
        ax.set_yscale("log")
        ax.set_title(f"{title} (k={int(cell['k'].dropna().iloc[0])})")
        ax.set_xlabel("per-step ε")
        ax.set_ylabel("cost / Lloyd's cost")
    handles, labels = [], []
    for ax in axes:
        h, lab = ax.get_legend_handles_labels()
        if h:
            handles, labels = h, lab
            break
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.07))
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def check_fig7(table, item) -> list[Check]:
    ok = table[table["status"] == "ok"]
    checks = []
    if ok.empty:
        return [Check("Algorithm 1 beats every private baseline", None, "no available dataset")]
    for alg in ALG1:
        worse = []
        n_cells = 0
        for (dataset, eps), cell in ok.groupby(["dataset", "eps_step"]):
            mine = cell[cell["algorithm"] == alg]["ratio"]
            others = cell[cell["algorithm"].isin(BASELINES)]
            if mine.empty or others.empty:
                continue
            n_cells += 1
            for r in others.itertuples():
                if not float(mine.iloc[0]) < r.ratio:
                    worse.append(f"{dataset} ε={fmt(eps)}: {NAMES[r.algorithm]} {fmt(r.ratio)} ≤ {fmt(float(mine.iloc[0]))}")
        checks.append(Check(f"{NAMES[alg]} has a lower normalised cost than every private baseline on every "
                            "available dataset and ε (§7.2)", (not worse) if n_cells else None,
                            f"{len(worse)} violations in {n_cells} cells" + (": " + "; ".join(worse[:6]) if worse else "")))
    for alg in ALG1:
        grows, detail, evaluable = True, [], False
        for dataset, cell in ok.groupby("dataset"):
            eps = sorted(cell["eps_step"].dropna().unique())
            if len(eps) < 2:
                continue
            gaps = []
            for e in (eps[0], eps[-1]):
                c = cell[cell["eps_step"] == e]
                mine = c[c["algorithm"] == alg]["ratio"]
                best = c[c["algorithm"].isin(BASELINES)]["ratio"].min()
                if mine.empty or not np.isfinite(best):
                    break
                gaps.append(math.log10(best / float(mine.iloc[0])))
            if len(gaps) == 2:
                evaluable = True
                grows &= gaps[1] > gaps[0]
                detail.append(f"{dataset}: {gaps[0]:.3f}→{gaps[1]:.3f}")
        checks.append(Check(f"the gap (log10 best-baseline ratio / {NAMES[alg]} ratio) grows from the smallest to "
                            "the largest ε on every available dataset (§7.2)", grows if evaluable else None,
                            "; ".join(detail)))
    alg1 = ok[ok["algorithm"].isin(ALG1)]
    base = ok[ok["algorithm"].isin(BASELINES)]
    if not alg1.empty:
        over = base[base["eps_spent_max"] > base["epsilon"] + 1e-9]
        checks.append(Check("every run spent at most its cap; Algorithm 1's totals are ε₀ + Î·ε_step (≤ cap)",
                            over.empty, f"Alg. 1 mean total {fmt(float(alg1['eps_spent_mean'].mean()))} "
                            f"(range {fmt(float(alg1['eps_spent_min'].min()))}–{fmt(float(alg1['eps_spent_max'].max()))})"))
    return checks


# ---------------------------------------------------------------------------------------------
# Figure 8
# ---------------------------------------------------------------------------------------------
def aggregate_fig8(records, item, ctx=None) -> pd.DataFrame:
    df = runs_table([r for r in records if r["algorithm"] in ALG1])
    out = [{"dataset": d, "status": "data_unavailable", "reason": r} for d, r in _unavailable(df).items()]
    ok = df[df["status"] == "ok"]
    for (dataset, alg, eps), cell in ok.groupby(["dataset", "algorithm", "eps_step"]):
        out.append({"dataset": dataset, "algorithm": alg, "eps_step": eps, "n": len(cell),
                    "match_rate": float(cell["match"].astype(float).mean()),
                    "prenoise_ratio_mean": float(cell["prenoise_ratio"].astype(float).mean()),
                    "status": "ok", "reason": ""})
    for (dataset, alg), cell in ok.groupby(["dataset", "algorithm"]):
        out.append({"dataset": dataset, "algorithm": alg, "eps_step": np.nan, "n": len(cell),
                    "match_rate": float(cell["match"].astype(float).mean()),
                    "prenoise_ratio_mean": float(cell["prenoise_ratio"].astype(float).mean()),
                    "status": "ok", "reason": "all ε"})
    return pd.DataFrame(out, columns=["dataset", "algorithm", "eps_step", "n", "match_rate",
                                      "prenoise_ratio_mean", "status", "reason"])


def render_fig8(table, item, stem) -> None:
    fig, axes = panel_grid(2, ncols=2, panel_size=(4.2, 3.0), sharey=True)
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    unavailable = sorted(table.loc[table["status"] != "ok", "dataset"].unique())
    for ax, alg, label in zip(axes, ALG1, ["(a) Posterior (past knowledge)", "(b) Prior (past and future knowledge)"]):
        for i, dataset in enumerate(_dataset_order(ok["dataset"])):
            r = ok[(ok["dataset"] == dataset) & (ok["algorithm"] == alg)].sort_values("eps_step")
            ax.plot(r["eps_step"], 100 * r["match_rate"], label=DATASET_NAMES.get(dataset, dataset), ms=4,
                    **style_for(dataset, i))
        ax.set_ylim(0, 105)
        ax.set_title(label)
        ax.set_xlabel("per-step ε")
        ax.set_ylabel("matches Lloyd (%)")
        if unavailable:
            ax.text(0.02, 0.02, "data unavailable: " + ", ".join(DATASET_NAMES.get(d, d) for d in unavailable),
                    transform=ax.transAxes, fontsize=7, color="0.3")
    axes[0].legend(loc="best", fontsize=7)
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def check_fig8(table, item) -> list[Check]:
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    if ok.empty:
        return [Check("Prior matches Lloyd in ≥ 84% of runs", None, "no available dataset")]
    floor = float(item["options"]["prior_min_match"])
    prior = ok[ok["algorithm"] == PRIOR]
    low = prior[prior["match_rate"] < floor]
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()]
    per_dataset = "; ".join(f"{r.dataset}: {r.match_rate:.2f}" for r in overall[overall["algorithm"] == PRIOR].itertuples())
    checks = [Check(f"Prior matches Lloyd's output in ≥ {floor:.0%} of runs in every (dataset, ε) cell (§7.2)",
                    low.empty if not prior.empty else None,
                    f"per dataset over all ε: {per_dataset}; min {fmt(float(prior['match_rate'].min()))} over {len(prior)} cells" +
                    ("; below: " + "; ".join(f"{r.dataset} ε={fmt(r.eps_step)}: {r.match_rate:.2f}" for r in low.itertuples())
                     if not low.empty else ""))]
    piv = overall.pivot_table(index="dataset", columns="algorithm", values="match_rate")
    if set(ALG1) <= set(piv.columns) and len(piv):
        better = piv[PRIOR] > piv[POSTERIOR]
        checks.append(Check("Prior matches Lloyd more often than Posterior on every available dataset (§7.2, Thm 3)",
                            bool(better.all()),
                            "; ".join(f"{d}: prior {piv.loc[d, PRIOR]:.2f} vs posterior {piv.loc[d, POSTERIOR]:.2f}"
                                      for d in piv.index)))
        checks.append(Check("Posterior matches Lloyd in no more than 80% of runs (§7.2)",
                            bool((piv[POSTERIOR] <= 0.80).all()),
                            "; ".join(f"{d}: {piv.loc[d, POSTERIOR]:.2f}" for d in piv.index)))
    return checks


# ---------------------------------------------------------------------------------------------
# Figures 9 and 10
# ---------------------------------------------------------------------------------------------
def aggregate_iterations(records, item, ctx=None) -> pd.DataFrame:
    alg = item["options"]["strategy"]
    df = runs_table([r for r in records if r["algorithm"] == alg])
    out = [{"dataset": d, "status": "data_unavailable", "reason": r} for d, r in _unavailable(df).items()]
    ok = df[df["status"] == "ok"].copy()
    ok["ratio"] = ok["iterations"].astype(float) / ok["lloyd_iterations"].astype(float)
    paper = item["options"]["paper_table"]
    for (dataset, eps), cell in ok.groupby(["dataset", "eps_step"]):
        out.append({"dataset": dataset, "eps_step": eps, "n": len(cell),
                    "iterations_mean": float(cell["iterations"].mean()),
                    "lloyd_iterations_mean": float(cell["lloyd_iterations"].astype(float).mean()),
                    "ratio_mean": float(cell["ratio"].mean()), "status": "ok", "reason": ""})
    for dataset, cell in ok.groupby("dataset"):
        it, ll = float(cell["iterations"].mean()), float(cell["lloyd_iterations"].astype(float).mean())
        out.append({"dataset": dataset, "eps_step": np.nan, "n": len(cell), "iterations_mean": it,
                    "lloyd_steps_mean": float(cell["lloyd_steps"].astype(float).mean()),
                    "lloyd_iterations_mean": ll, "ratio_mean": float(cell["ratio"].mean()),
                    "ratio_of_means": it / ll, "status": "ok", "reason": "all ε",
                    "paper_algorithm": paper["algorithm"].get(dataset), "paper_lloyd": paper["lloyd"].get(dataset),
                    "paper_ratio": paper["ratio"].get(dataset)})
    return pd.DataFrame(out, columns=["dataset", "eps_step", "n", "iterations_mean", "lloyd_steps_mean", "lloyd_iterations_mean",
                                      "ratio_mean", "ratio_of_means", "paper_algorithm", "paper_lloyd",
                                      "paper_ratio", "status", "reason"])


def _table_b(table, item) -> tuple[list[str], list[list[str]]]:
    name = NAMES[item["options"]["strategy"]]
    paper = item["options"]["paper_table"]
    datasets = [d for d in DATASET_NAMES if d in paper["lloyd"]]
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()].set_index("dataset")
    header = [""] + [DATASET_NAMES[d] for d in datasets]
    rows = []
    spec = [(f"{name} (ours)", "iterations_mean", None), ("LLOYD (ours)", "lloyd_iterations_mean", None),
            ("Ratio (ours)", "ratio_of_means", None)]
    if item["options"]["strategy"] == PRIOR:
        spec.append((f"{name} Lloyd steps incl. look-ahead (ours)", "lloyd_steps_mean", None))
    for label, col, key in spec + [(f"{name} (paper)", None, "algorithm"),
                            ("LLOYD (paper)", None, "lloyd"), ("Ratio (paper)", None, "ratio")]:
        cells = [label]
        for d in datasets:
            if key is not None:
                cells.append(f"{paper[key][d]:g}")
            elif d in overall.index:
                cells.append(f"{overall.loc[d, col]:.2f}")
            else:
                cells.append("n/a")
        rows.append(cells)
    return header, rows


def render_iterations(table, item, stem) -> None:
    import matplotlib.pyplot as plt

    fig, (ax, axt) = plt.subplots(1, 2, figsize=(11.5, 3.4), gridspec_kw={"width_ratios": [1.0, 1.5]})
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    for i, dataset in enumerate(_dataset_order(ok["dataset"])):
        r = ok[ok["dataset"] == dataset].sort_values("eps_step")
        ax.plot(r["eps_step"], r["ratio_mean"], label=DATASET_NAMES.get(dataset, dataset), ms=4, **style_for(dataset, i))
    ax.axhline(1.0, color="0.6", lw=0.8, ls="--")
    ax.axhline(float(item["options"]["max_ratio"]), color="C3", lw=0.8, ls=":", label="bound (×2)")
    ax.set_xlabel("per-step ε")
    ax.set_ylabel(f"iterations {NAMES[item['options']['strategy']]} / LLOYD")
    ax.set_title("(a) Iteration ratio")
    ax.legend(fontsize=7)
    unavailable = sorted(table.loc[table["status"] != "ok", "dataset"].unique())
    if unavailable:
        ax.text(0.02, 0.02, "data unavailable: " + ", ".join(DATASET_NAMES.get(d, d) for d in unavailable),
                transform=ax.transAxes, fontsize=7, color="0.3")
    header, rows = _table_b(table, item)
    axt.axis("off")
    tab = axt.table(cellText=rows, colLabels=header, loc="center", cellLoc="center")
    tab.auto_set_font_size(False)
    tab.set_fontsize(8)
    tab.scale(1.0, 1.4)
    tab.auto_set_column_width(list(range(len(header))))
    axt.set_title("(b) Average iterations to convergence (ours vs the paper)")
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def check_iterations(table, item) -> list[Check]:
    opts = item["options"]
    name = NAMES[opts["strategy"]]
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()]
    if overall.empty:
        return [Check(f"{name} needs at most ×{opts['max_ratio']:g} Lloyd's iterations", None, "no available dataset")]
    bound = float(opts["max_ratio"])
    cells = table[(table["status"] == "ok") & table["eps_step"].notna()]
    checks = [Check(f"{name} needs at most {bound:g}× Lloyd's iterations on average, on every available dataset "
                    "(Thm 2 / Thm 4)", bool((overall["ratio_mean"] <= bound).all()),
                    "; ".join(f"{r.dataset}: {r.ratio_mean:.2f}" for r in overall.itertuples()) +
                    f"; worst (dataset, ε) cell {fmt(float(cells['ratio_mean'].max()))}")]
    tol = float(opts["lloyd_tolerance"])
    diffs, close = [], True
    for r in overall.itertuples():
        if r.paper_lloyd is None or (isinstance(r.paper_lloyd, float) and math.isnan(r.paper_lloyd)):
            continue
        rel = (r.lloyd_iterations_mean - r.paper_lloyd) / r.paper_lloyd
        close &= abs(rel) <= tol
        diffs.append(f"{r.dataset}: ours {r.lloyd_iterations_mean:.2f} vs paper {r.paper_lloyd:g} ({rel:+.0%})")
    checks.append(Check(f"our Lloyd iteration counts are within ±{tol:.0%} of the paper's Fig. "
                        f"{'9' if opts['strategy'] == POSTERIOR else '10'}(b)", close if diffs else None, "; ".join(diffs)))
    diffs = []
    for r in overall.itertuples():
        if r.paper_ratio is not None and not (isinstance(r.paper_ratio, float) and math.isnan(r.paper_ratio)):
            diffs.append(f"{r.dataset}: ours {r.ratio_of_means:.2f} vs paper {r.paper_ratio:g}")
    side = [(r.ratio_of_means > 1) == (r.paper_ratio > 1) for r in overall.itertuples()
            if r.paper_ratio is not None and not (isinstance(r.paper_ratio, float) and math.isnan(r.paper_ratio))]
    checks.append(Check(f"{name} iterations vs Lloyd fall on the same side of 1 as the paper's ratio",
                        all(side) if side else None, "; ".join(diffs)))
    if opts["strategy"] == PRIOR and overall["lloyd_steps_mean"].notna().all():
        steps = overall["lloyd_steps_mean"] / overall["lloyd_iterations_mean"]
        checks.append(Check("counting Prior's look-ahead Lloyd step as an iteration, Prior needs more than "
                            f"Lloyd's iterations and at most {bound:g}× (paper's ratios 1.22–1.40)",
                            bool(((steps > 1) & (steps <= bound)).all()),
                            "; ".join(f"{d}: {v:.2f}" for d, v in zip(overall["dataset"], steps))))
    return checks
