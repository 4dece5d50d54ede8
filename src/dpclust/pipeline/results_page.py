"""The results page: what a run found, generated from its own tables (never written by hand).

`write_results_page` reads `checks/summary.csv` (every check, `dpclust.pipeline.steps.summarize_checks`)
and, when the plan has them, the leaderboard's best-method table and the audit table, and writes
`<results_dir>/RESULTS.md`: the preset, the papers' claims tallied per paper, then each paper's claims
with their verdict, interval, rule and reason, the failing ones by root cause, the leaderboard's
winners per objective, the audit's verdicts, and our own checks apart.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpclust.fileio import write_text_atomic
from dpclust.pipeline.plotting import to_markdown
from dpclust.pipeline.steps import paper_tallies


def _interval(row) -> str:
    q, lo, hi = row.get("quantity"), row.get("ci_low"), row.get("ci_high")
    if q is None or pd.isna(q):
        return ""
    return f"{q:.4g}" + ("" if lo is None or pd.isna(lo) or hi is None or pd.isna(hi) else f" [{lo:.4g}, {hi:.4g}]")


def _claims_table(frame: pd.DataFrame) -> str:
    rows = pd.DataFrame({
        "item": frame["item"], "claim": frame["claim"], "result": frame["result"],
        "quantity [CI]": [_interval(r) for r in frame.to_dict("records")],
        "cells": frame["cells"].map(lambda c: "" if pd.isna(c) else str(int(c))),
        "rule": frame["rule"], "why": frame["why"], "sensitivity": frame["sensitivity"],
        **({"runs": frame["runs"]} if "runs" in frame else {}),
    })
    return to_markdown(rows)


def _replication(papers: pd.DataFrame) -> list[str]:
    """The claims decided in replication looks: the runs each used, why it stopped, and the run time the
    added looks of its item cost (docs/VERDICTS.md, "Replication")."""
    if "runs" not in papers:
        return []
    stopped = papers["stopped"].fillna("").astype(str)
    unreplicated = stopped.str.startswith("no replication declared")
    part = papers[stopped.ne("") & ~unreplicated]
    open_ = papers[unreplicated & papers["result"].eq("not decidable")]
    rest = [] if open_.empty else [
        f"{len(open_)} claims left not decidable by items without `replication`:", "",
        to_markdown(pd.DataFrame({"item": open_["item"], "claim": open_["claim"],
                                  "runs it would need": open_["stopped"].str.partition("; ")[2]})
                    .reset_index(drop=True)), ""]
    if part.empty:
        return (["## Claims left undecided", "", *rest]) if rest else []
    rows = pd.DataFrame({
        "item": part["item"], "claim": part["claim"], "result": part["result"], "runs": part["runs"],
        "stopped": part["stopped"],
        "added CPU-h (item)": part["added_cpu_s"].map(lambda s: "" if pd.isna(s) else f"{float(s) / 3600:.3g}"),
    })
    cpu = part.drop_duplicates(["paper", "item"])["added_cpu_s"].fillna(0).sum() / 3600
    return ["## Claims decided in replication looks", "",
            f"{len(part)} claims of {part[['paper', 'item']].drop_duplicates().shape[0]} items had more runs, "
            f"in looks with error spending; the added looks cost {cpu:.3g} CPU-h (priced by the "
            "committed price table, benchmarks/results/run_prices.tsv). The "
            "others used the paper's runs (1×).", "", to_markdown(rows.reset_index(drop=True)), "", *rest]


def _causes(papers: pd.DataFrame) -> list[str]:
    """The papers' claims that do not hold, by root cause: those whose reason names one ("cause: <tag>",
    `aggregate.cause_of`) together, each of the others a cause of its own."""
    failing = papers[papers["result"] == "does not hold"]
    if failing.empty:
        return []
    cause = failing["cause"] if "cause" in failing else pd.Series("", index=failing.index)
    cause = cause.fillna("").astype(str)
    own = cause.eq("")
    rows = [{"root cause": tag, "claims": len(part),
             "items": ", ".join(dict.fromkeys(f"{r.paper}/{r.item}" for r in part.itertuples()))}
            for tag, part in failing[~own].groupby(cause[~own], sort=True)]
    rows += [{"root cause": f"its own (see its reason): {r.claim}", "claims": 1, "items": f"{r.paper}/{r.item}"}
             for r in failing[own].itertuples()]
    return ["## Why claims do not hold", "",
            f"{len(failing)} of the papers' claims {'does' if len(failing) == 1 else 'do'} not hold, for "
            f"{len(rows)} root {'cause' if len(rows) == 1 else 'causes'} (a reason that "
            "starts \"cause: <tag>\" names a cause shared by every claim that carries the tag).", "",
            to_markdown(pd.DataFrame(rows)), ""]


def _leaderboard(best_csv: str) -> list[str]:
    best = pd.read_csv(best_csv)
    if best.empty or "best" not in best:
        return ["No leaderboard cell was run."]
    ok = best[best["best"].notna() & (best["best"].astype(str) != "")]
    out = []
    for objective, part in ok.groupby("objective", sort=True) if "objective" in ok else [("", ok)]:
        wins = part["best"].value_counts()
        separated = int((part["decided"] == "separated").sum()) if "decided" in part else 0
        out.append(f"* {objective or 'all'}: {len(part)} cells, {separated} with the best separated from the "
                   "runner-up; best: " + ", ".join(f"{name} {n}" for name, n in wins.items()))
    unavailable = int((best.get("status", pd.Series(dtype=str)) == "data_unavailable").sum())
    if unavailable:
        out.append(f"* {unavailable} cells say \"data unavailable\".")
    return out


def _audit(audit_csv: str) -> str:
    table = pd.read_csv(audit_csv)
    if table.empty:
        return "No audit job was run."
    rows = table[table["summary"].astype(bool)] if "summary" in table else table
    keep = [c for c in ("name", "guarantee", "design", "epsilon_claimed", "lower_bound", "halved_lower_bound",
                        "verdict") if c in rows]
    return to_markdown(rows[keep].reset_index(drop=True))


def write_results_page(summary_csv: str, out_md: str, preset: str, leaderboard_best_csv: str | None = None,
                       audit_csv: str | None = None, scope: list[str] | None = None) -> str:
    """Write the results page (see the module docstring) and return its text. `scope`: the papers or
    items the run was limited to (`configuration.run_scope`; none: the whole protocol)."""
    table = pd.read_csv(summary_csv)
    for col in ("claim", "result", "why", "cause", "rule", "kind", "sensitivity", "runs", "stopped"):
        table[col] = table.get(col, pd.Series("", index=table.index)).fillna("").astype(str)
    table["kind"] = table["kind"].where(table["kind"] != "", "paper")
    papers = table[table["kind"] == "paper"]
    lines = [f"# Results of the {preset} preset", "",
             "Generated by the pipeline from this run's tables (`checks/summary.csv`, the leaderboard, the "
             "audit); the rubric that decides each claim is docs/VERDICTS.md.", ""]
    if scope:
        lines += [f"This run was limited to {', '.join(scope)} (config `papers`, `items`): the claims of the "
                  "papers and items it did not run are not on this page.", ""]
    lines += ["## The papers' claims", "", to_markdown(paper_tallies(table)), ""]
    for paper, part in papers.groupby("paper", sort=True):
        lines += [f"### {paper}", "", _claims_table(part), ""]
    lines += _causes(papers)
    lines += _replication(papers)
    if leaderboard_best_csv and Path(leaderboard_best_csv).exists():
        lines += ["## The leaderboard", "", *_leaderboard(leaderboard_best_csv), ""]
    if audit_csv and Path(audit_csv).exists():
        lines += ["## The privacy audit", "", _audit(audit_csv), ""]
    ours = table[table["kind"] != "paper"]
    if not ours.empty:
        counts = ours.groupby(["kind", "result"]).size().rename("checks").reset_index()
        lines += ["## Our own checks (not the papers' claims)", "", to_markdown(counts), ""]
        failing = ours[ours["result"] != "holds"]
        if not failing.empty:
            lines += ["Those that do not hold or are undecided:", "", _claims_table(failing), ""]
    text = "\n".join(lines).rstrip() + "\n"
    write_text_atomic(text, out_md)
    return text
