"""The `audit` items: the privacy audit as a result (table, figure, checks).

`aggregate_audit` reads the audit records (one per algorithm and neighbouring design, written by
`python -m dpclust.pipeline audit`, `dpclust.pipeline.audit_job`) into one row per (algorithm, design) and, for an
algorithm audited on J > 1 designs, one more row for the maximum over its designs: each design's
bound re-evaluated at confidence 1 − (1 − c)/J on the same samples and split (Bonferroni), so the
maximum holds at the family-wise confidence c. Every row carries its verdict (`verdict`):

* DP-labelled algorithms (ε-DP, (ε, δ)-DP) and algorithms whose guarantee is undeclared (listed
  as "unknown (undeclared)", never as DP): "violation" (lower bound > claimed ε), "no violation
  found (power shown)" (the halved-noise audit exceeds the claimed ε, the plain one does not),
  "no power" (neither: this attack cannot tell; never a pass);
* variants labelled "not DP as published": "not DP as published: violation shown" or
  "not DP as published: no violation found";
* the variant of an N-public algorithm run with N read from each neighbour (`n_from_data`,
  outside its guarantee): "outside the guarantee: leak shown" or "... no leak found". Its rows
  are listed as their own algorithm ("<name>, N from the data") and never count as a privacy bug.

The `power` variant (the algorithm at settings chosen for the attack's power, e.g. one iteration:
the fewest compositions) is within the guarantee, which must hold at every setting: its verdicts are
those of a DP-labelled algorithm, and it is listed as its own algorithm ("<name>, at iterations = 1"),
so the audit at the paper's settings keeps its own verdict beside it.

The floating-point design (`design` = "reachability", variant "floating_point": Mironov 2012,
`dpclust.audit.floating_point.release_audit`, declared under the item's `table: floating_point:`) has one
row per algorithm, listed as its own algorithm ("<name>, floating point"): the bound of its event fixed in
advance with the current mechanisms (`lower_bound`), the same event on the same runs with every release
made as before the grid (`halved_lower_bound`: the power control, "today's violations"), the counts on
D and D′ of both, the self-check on D and the rounding control. Its verdicts are a DP-labelled
algorithm's, power shown only when the legacy bound exceeds the claimed ε and both controls pass. The
positive controls, the legacy raw-float Laplace and Gaussian samplers on their own, come first: "positive
control: violation shown" (their claim: the design has power) or "... no violation found" (a failed claim). An
audited algorithm declared "not applicable: <why>" gets a row with that reason as its verdict, no bound
and no claim.

The claimed ε is what the algorithm's runs reported spending (the budget, or Lu & Shen's
bottom-up total under their cap), δ likewise.

`render_audit_table` writes the table (`stem.md`, `.png`, `.pdf`, and a sortable `stem.html`);
`render_audit_figure` draws, per algorithm, the lower bound and the halved-noise bound against the
claimed ε in the verdict's colour; `check_audit` states "no DP-labelled algorithm shows a violation"
as one claim per algorithm (a violation is a privacy bug: a failing claim with the evidence),
"the non-DP variants' violations are shown" and "reading N from the data leaks".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from dpclust.fileio import write_text_atomic
from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.audit_job import evaluate
from dpclust.pipeline.audit_labels import (
    CONTROL_KIND,
    FLOATING_POINT,
    FLOATING_POINT_DESIGN,
    N_FROM_DATA,
    N_FROM_DATA_SOURCE,
    NOT_APPLICABLE,
    PUBLIC_N_FIXED,
)
from dpclust.pipeline.audit_labels import POWER as POWER_VARIANT
from dpclust.pipeline.itemkit import NOT_DP, name

UNDECLARED = "unknown (undeclared)"
VIOLATION = "violation"
POWER = "no violation found (power shown)"
NO_POWER = "no power"
NOT_DP_SHOWN = f"{NOT_DP}: violation shown"
NOT_DP_NOT_SHOWN = f"{NOT_DP}: no violation found"
OUTSIDE_SHOWN = "outside the guarantee: leak shown"
OUTSIDE_NOT_SHOWN = "outside the guarantee: no leak found"
OUTSIDE = (OUTSIDE_SHOWN, OUTSIDE_NOT_SHOWN)
#: Verdicts of the floating-point design's positive controls (the legacy raw-float Laplace and Gaussian samplers).
CONTROL_SHOWN = "positive control: violation shown"
CONTROL_NOT_SHOWN = "positive control: no violation found"
CONTROL = (CONTROL_SHOWN, CONTROL_NOT_SHOWN)
VERDICT_COLOURS = {VIOLATION: "#b3261e", POWER: "#1b7f3b", NO_POWER: "#8a8a8a", NOT_DP_SHOWN: "#6a1b9a",
                   NOT_DP_NOT_SHOWN: "#d08400", OUTSIDE_SHOWN: "#1565c0", OUTSIDE_NOT_SHOWN: "#90caf9",
                   CONTROL_SHOWN: "#00838f", CONTROL_NOT_SHOWN: "#4e342e"}
#: Appended to the name of the `n_from_data` variant (dpclust.pipeline.audit_labels).
N_FROM_DATA_NAME = ", N from the data"
#: Appended to the name of an algorithm's floating-point design row.
FLOATING_POINT_NAME = ", floating point"

COLUMNS = ["algorithm", "name", "guarantee", "relation", "relation_source", "epsilon_budget", "epsilon_claimed",
           "delta_claimed", "design", "design_title", "statistic", "n_D", "n_Dp", "k", "samples", "confidence",
           "lower_bound", "halved_lower_bound", "p_D", "p_Dp", "event", "threshold", "halved_noise_calls",
           "verdict", "summary", "note", "wall_time_s",
           # the floating-point design (`design` = reachability): the event's counts with the current mechanisms
           # and with the legacy ones (whose bound is `halved_lower_bound`: the positive control), the
           # self-check on D and the rounding control
           "events_D", "events_Dp", "legacy_events_D", "legacy_events_Dp", "self_check", "rounding_control"]


def guarantee_label(guarantee: Mapping | None) -> str:
    """The guarantee kind of a record, "unknown (undeclared)" when the algorithm declares none."""
    return UNDECLARED if not guarantee else str(guarantee.get("kind") or UNDECLARED)


def from_data_variant(relation_source: str) -> bool:
    """True for a record of the `n_from_data` variant (N read from each neighbour, outside the guarantee)."""
    return N_FROM_DATA_SOURCE in str(relation_source)


def variant_of(rec: Mapping) -> str:
    """"" for an audit at the algorithm's settings, N_FROM_DATA or POWER_VARIANT for a variant's record."""
    if from_data_variant(rec.get("relation_source", "")):
        return N_FROM_DATA
    return str((rec.get("variant") or {}).get("name") or "")


def power_suffix(rec: Mapping) -> str:
    """", at iterations = 1": the settings of a `power` variant's record, appended to its name (a
    nested setting by its dotted name: ", at gupt.range_fraction = 0.01")."""
    def pairs(settings: Mapping, prefix: str = ""):
        for key, value in settings.items():
            if isinstance(value, Mapping):
                yield from pairs(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key} = {value:g}" if isinstance(value, float) else f"{prefix}{key} = {value}"

    return ", at " + ", ".join(pairs((rec.get("variant") or {}).get("settings") or {}))


def verdict(guarantee: str, lower: float, halved: float, claimed: float, outside: bool = False) -> str:
    """The verdict of an audit (see module docstring): lower and halved are the lower bounds of the
    plain and the halved-noise audit, claimed the ε the algorithm claims; `outside` for a run outside
    the guarantee's relation (the `n_from_data` variant)."""
    violation = lower > claimed
    if outside:
        return OUTSIDE_SHOWN if violation else OUTSIDE_NOT_SHOWN
    if guarantee == NOT_DP:
        return NOT_DP_SHOWN if violation else NOT_DP_NOT_SHOWN
    if violation:
        return VIOLATION
    return POWER if halved > claimed else NO_POWER


def _row(rec: Mapping, item: Mapping) -> dict:
    g = guarantee_label(rec.get("guarantee"))
    plain, halved = rec["plain"], rec["halved"]
    claimed = float(rec["epsilon_claimed"])
    kind = variant_of(rec)
    outside = kind == N_FROM_DATA
    suffix = N_FROM_DATA_NAME if outside else (power_suffix(rec) if kind == POWER_VARIANT else "")
    return {
        "algorithm": rec["algorithm"],
        "name": f"{name(item, rec['algorithm'])} ({rec['algorithm'].split('.')[0]})" + suffix,
        "guarantee": g,
        **_design_fields(rec, claimed),
        "lower_bound": plain["epsilon_lower_bound"], "halved_lower_bound": halved["epsilon_lower_bound"],
        "p_D": plain["p_D"], "p_Dp": plain["p_Dp"], "event": f"stat {plain['event']} t ({plain['direction']})",
        "threshold": plain["threshold"], "halved_noise_calls": halved.get("noise_calls"),
        "verdict": verdict(g, plain["epsilon_lower_bound"], halved["epsilon_lower_bound"], claimed, outside),
        "summary": False, "note": rec.get("note", ""),
        "wall_time_s": float(plain.get("wall_time_s", 0.0)) + float(halved.get("wall_time_s", 0.0)),
    }


def _design_fields(rec: Mapping, claimed: float) -> dict:
    """The columns every audit row takes from its record (and the claimed ε), in the table's order."""
    return {"relation": rec["relation"], "relation_source": rec.get("relation_source", ""),
            "epsilon_budget": rec["epsilon_budget"], "epsilon_claimed": claimed,
            "delta_claimed": float(rec["delta_claimed"]),
            "design": rec["design"], "design_title": rec["design_title"], "statistic": rec["statistic"],
            "n_D": rec["n_D"], "n_Dp": rec["n_Dp"], "k": rec["k"], "samples": rec["samples"],
            "confidence": rec["confidence"]}


def floating_point_verdict(guarantee: str, lower: float, legacy: float, claimed: float, self_check: bool,
                           rounding_control: bool) -> str:
    """The verdict of a floating-point design row: as `verdict`, with the legacy floats' bound as the power
    control, which counts only with the self-check and the rounding control passed; the positive control
    (the legacy sampler itself) shows its violation or not."""
    if guarantee == CONTROL_KIND:
        return CONTROL_SHOWN if lower > claimed else CONTROL_NOT_SHOWN
    if guarantee == NOT_DP:
        return NOT_DP_SHOWN if lower > claimed else NOT_DP_NOT_SHOWN
    if lower > claimed:
        return VIOLATION
    return POWER if (legacy > claimed and self_check and rounding_control) else NO_POWER


def _floating_point_row(rec: Mapping, item: Mapping) -> dict:
    """The row of a floating-point design record (dpclust.pipeline.audit_job.run_floating_point_audit)."""
    g = CONTROL_KIND if rec.get("control") else guarantee_label(rec.get("guarantee"))
    plain, legacy = rec["plain"], rec["legacy"]
    claimed = float(rec["epsilon_claimed"])
    settings = (rec.get("variant") or {}).get("settings") or {}
    label = rec.get("name") if rec.get("control") and rec.get("name") else (
        f"{name(item, rec['algorithm'])} ({rec['algorithm'].split('.')[0]})" + FLOATING_POINT_NAME
        + (power_suffix(rec) if settings else ""))
    self_check, rounding = bool(rec["self_check"]["ok"]), bool(rec["rounding_control"]["ok"])
    return {
        "algorithm": rec["algorithm"], "name": label, "guarantee": g,
        **_design_fields(rec, claimed),
        "lower_bound": plain["epsilon_lower_bound"], "halved_lower_bound": legacy["epsilon_lower_bound"],
        "p_D": plain["p_D"], "p_Dp": plain["p_Dp"],
        "event": f"fixed event: {rec['statistic_description']}",
        "threshold": float("nan"), "halved_noise_calls": legacy.get("releases"),
        "verdict": floating_point_verdict(g, plain["epsilon_lower_bound"], legacy["epsilon_lower_bound"], claimed,
                                          self_check, rounding),
        "summary": True, "note": rec.get("note", ""), "wall_time_s": float(rec.get("cpu_time_s", 0.0)),
        "events_D": plain["events_D"], "events_Dp": plain["events_Dp"],
        "legacy_events_D": legacy["events_D"], "legacy_events_Dp": legacy["events_Dp"],
        "self_check": self_check, "rounding_control": rounding,
    }


def floating_point_declared(item: Mapping) -> dict:
    """The item's floating-point declaration (`table: floating_point: algorithms:`), {} when none."""
    return dict((((item.get("table") or {}).get(FLOATING_POINT) or {}).get("algorithms")) or {})


def _not_applicable_row(algorithm: str, why: str, recs: list[Mapping], item: Mapping) -> dict:
    """The row of an algorithm the floating-point design does not apply to: its reason as the verdict."""
    rec = recs[0]
    nan = float("nan")
    row = {col: nan for col in COLUMNS}
    row.update(algorithm=algorithm, name=f"{name(item, algorithm)} ({algorithm.split('.')[0]})" + FLOATING_POINT_NAME,
               guarantee=guarantee_label(rec.get("guarantee")), relation=rec["relation"],
               relation_source=rec.get("relation_source", ""), epsilon_budget=rec["epsilon_budget"],
               epsilon_claimed=nan, delta_claimed=0.0, design=FLOATING_POINT_DESIGN,
               design_title="floating point: reachability of the released bits", statistic="event", n_D=0, n_Dp=0,
               k=nan, samples=0, confidence=rec["confidence"], event="", verdict=why, summary=True, note="",
               wall_time_s=0.0, halved_noise_calls=None, self_check=None, rounding_control=None)
    return row


def not_applicable(verdict_text) -> bool:
    """True for a row of an algorithm the floating-point design does not apply to."""
    return str(verdict_text).startswith(NOT_APPLICABLE)


def _max_row(recs: list[Mapping], item: Mapping) -> dict:
    """The maximum over an algorithm's J designs, each bound re-evaluated at confidence
    1 − (1 − c)/J on its stored samples (same split), so the maximum holds at confidence c. The
    plain and the halved-noise maxima are taken separately."""
    J = len(recs)
    conf = min(float(r["confidence"]) for r in recs)
    level = 1.0 - (1.0 - conf) / J
    plain, halved = [], []
    for rec in recs:
        delta, seed = float(rec["delta_claimed"]), int(rec["seed"])
        plain.append(evaluate(rec["plain"]["samples_D"], rec["plain"]["samples_Dp"], delta, level, seed))
        halved.append(evaluate(rec["halved"]["samples_D"], rec["halved"]["samples_Dp"], delta, level, seed))
    best = int(np.argmax([b.epsilon_lower_bound for b in plain]))
    top, rec = plain[best], recs[best]
    claimed = max(float(r["epsilon_claimed"]) for r in recs)
    row = _row(rec, item)
    row.update(design="max", design_title=f"max over {J} designs (each at {100 * level:.3g} %)", confidence=conf,
               lower_bound=top.epsilon_lower_bound, halved_lower_bound=max(b.epsilon_lower_bound for b in halved),
               epsilon_claimed=claimed, delta_claimed=max(float(r["delta_claimed"]) for r in recs),
               p_D=top.p_D, p_Dp=top.p_Dp, event=f"stat {top.event} t ({top.direction}) on {rec['design']}",
               threshold=top.threshold, summary=True, samples=int(min(r["samples"] for r in recs)),
               wall_time_s=float(sum(_row(r, item)["wall_time_s"] for r in recs)))
    row["verdict"] = verdict(row["guarantee"], row["lower_bound"], row["halved_lower_bound"], claimed,
                             from_data_variant(row["relation_source"]))
    return row


def aggregate_audit(records: Iterable[Mapping], item: Mapping, ctx=None) -> pd.DataFrame:
    """One row per (algorithm, design) audit and one `summary` row per algorithm (the only design's
    row itself, or the Bonferroni maximum over several): see module docstring. The `n_from_data`
    and `power` variants of an algorithm count as algorithms of their own, listed after it."""
    by_alg: dict[tuple[str, str], list[Mapping]] = {}
    for rec in records:
        if rec.get("kind") != "audit":
            continue
        by_alg.setdefault((rec["algorithm"], variant_of(rec)), []).append(rec)
    # the floating-point design: an algorithm declared "not applicable: <why>" gets its row (with that
    # reason as its verdict) when it is audited at all; the positive control comes first
    audited = {alg: recs for (alg, kind), recs in by_alg.items() if kind == ""}
    declared = floating_point_declared(item)
    pending = {(alg, FLOATING_POINT): why for alg, why in declared.items()
               if isinstance(why, str) and alg in audited and (alg, FLOATING_POINT) not in by_alg}
    order = sorted(set(by_alg) | set(pending), key=lambda key: (not any(r.get("control") for r in by_alg.get(key, [])),
                                                                   key))
    rows = []
    for alg in order:
        if alg in pending:
            rows.append(_not_applicable_row(alg[0], pending[alg], audited[alg[0]], item))
            continue
        recs = sorted(by_alg[alg], key=lambda r: r["design"])
        if alg[1] == FLOATING_POINT:
            rows += [_floating_point_row(r, item) for r in recs]
            continue
        design_rows = [_row(r, item) for r in recs]
        if len(recs) == 1:
            design_rows[0]["summary"] = True
            rows += design_rows
        else:
            rows += design_rows + [_max_row(recs, item)]
    return pd.DataFrame(rows, columns=COLUMNS)


# ---------------------------------------------------------------------------------------------
# render
# ---------------------------------------------------------------------------------------------
def _eps(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.3g}"


def _public_n_note(source: str) -> str:
    """How the audit treated a public N (audits/plan.py): held fixed on both neighbours, or (the
    `n_from_data` variant) read from each neighbour."""
    if from_data_variant(source):
        return ", N read from each dataset: outside the guarantee"
    return ", public N held fixed" if PUBLIC_N_FIXED in str(source) else ""


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table as shown: algorithm, guarantee and relation, claimed ε (δ), design, lower bound,
    halved-noise lower bound, samples, verdict."""
    out = pd.DataFrame({
        "algorithm": table["name"],
        "guarantee (relation)": table["guarantee"] + " (" + table["relation"]
                                + table["relation_source"].map(_public_n_note) + ")",
        "claimed (reported) ε (δ)": [f"{_eps(e)}" + (f" ({d:.0e})" if d > 0 else "") for e, d in
                          zip(table["epsilon_claimed"], table["delta_claimed"])],
        "design": table["design_title"],
        "|D|/|D'|, k": [f"{int(a)}/{int(b)}, {int(k)}" if a == a and b == b and int(b) else ""
                         for a, b, k in zip(table["n_D"], table["n_Dp"], table["k"])],
        "ε lower bound": [_eps(v) for v in table["lower_bound"]],
        "halved-noise bound (floating point: legacy floats)": [_eps(v) for v in table["halved_lower_bound"]],
        "events on D / D′ (legacy)": [_events(r) for r in table.itertuples(index=False)],
        "confidence": [f"{100 * c:.3g} %" if n == n and n else "" for c, n in zip(table["confidence"],
                                                                                   table["samples"])],
        "samples per side": [int(v) if v == v and v else "" for v in table["samples"]],
        "verdict": table["verdict"],
    })
    return out


def _events(r) -> str:
    """A floating-point row's event counts: "current D / D′ (legacy D / D′) of n", with the self-check
    and the rounding control when one fails; "" for the threshold designs."""
    if r.design != FLOATING_POINT_DESIGN or not_applicable(r.verdict):
        return ""
    text = (f"{int(r.events_D)} / {int(r.events_Dp)} ({int(r.legacy_events_D)} / {int(r.legacy_events_Dp)}) "
            f"of {int(r.samples)}")
    if not r.self_check:
        text += ", self-check failed"
    if not r.rounding_control:
        text += ", rounding control failed"
    return text


def _note(table: pd.DataFrame) -> str:
    notes = sorted({f"{n}: {t}" for n, t in zip(table["name"], table["note"]) if isinstance(t, str) and t})
    base = ("Lower bounds: Clopper–Pearson at the stated confidence (event chosen on one half of the samples, "
            "evaluated on the other). Claimed ε: what the runs reported spending. Halved-noise bound: the same "
            "audit with every noise scale halved (the attack's power). 'no power' is not a pass. Floating point "
            "(Mironov 2012): an event fixed in advance on the released bits (a coordinate inside the box that no "
            "Laplace release can produce from D's value), on all samples (Clopper–Pearson, both directions); "
            "its power control is the same event on the same runs with every release as before the grid (legacy "
            "floats); events on D are the self-check, and outputs rounded to a data-independent grid never fire "
            "(rounding control).")
    return base + (" Notes: " + "; ".join(notes) if notes else "")


def render_audit_table(table: pd.DataFrame, item: Mapping, stem: str) -> None:
    from dpclust.pipeline.plotting import html_table, write_table

    shown = display_table(table)
    title = item.get("title", "Privacy audit")
    write_table(shown, stem, title=title, note=_note(table))
    write_text_atomic(html_table(shown, title=title, note=_note(table)), f"{stem}.html")


def _figure_guarantee(r) -> str:
    if r.verdict in CONTROL:
        return "positive control, not DP in floating point"
    if r.verdict in OUTSIDE:
        return f"outside its {r.guarantee} guarantee"
    return "undeclared" if r.guarantee == UNDECLARED else r.guarantee


def render_audit_figure(table: pd.DataFrame, item: Mapping, stem: str) -> None:
    import textwrap

    from matplotlib.lines import Line2D

    from dpclust.pipeline.plotting import pyplot, save_figure

    plt = pyplot()

    rows = table[table["summary"].astype(bool) & ~table["verdict"].map(not_applicable)].reset_index(drop=True) \
        if len(table) else table
    # a long label (a power variant's settings) is wrapped, so that it does not squeeze the axis
    # ("setting = value" is kept on one line: no-break spaces around "=")
    labels = [textwrap.fill(f"{r.name} [{_figure_guarantee(r)}]".replace(" = ", "\u00a0=\u00a0"), 80)
              for r in rows.itertuples()]
    # the labels take ≈ 0.055 in a character at 7 pt: keep ≈ 4.5 in for the axis beside them
    width = max(7.5, 4.5 + 0.055 * max((len(line) for label in labels for line in label.splitlines()), default=0))
    # each row is as tall as its label (≈ 0.12 in a line at 7 pt; one unit is 0.32 in)
    heights = np.array([max(1.0, 0.38 * (label.count("\n") + 1)) for label in labels] or [1.0])
    units = float(heights.sum())
    fig, ax = plt.subplots(figsize=(width, 0.9 + 0.32 * units), layout="constrained")
    if len(rows) == 0:
        ax.text(0.5, 0.5, "no audit planned under this preset", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        save_figure(fig, stem)
        return
    y = units - (np.cumsum(heights) - heights / 2)        # row centres, the first at the top
    for yi, r in zip(y, rows.itertuples(index=False)):
        colour = VERDICT_COLOURS.get(r.verdict, "black")
        ax.plot([0, max(r.lower_bound, r.halved_lower_bound)], [yi, yi], color="0.85", lw=1, zorder=1)
        ax.scatter([r.halved_lower_bound], [yi], marker="o", facecolors="none", edgecolors=colour, s=36, zorder=3)
        ax.scatter([r.lower_bound], [yi], marker="o", color=colour, s=36, zorder=4)
        ax.scatter([r.epsilon_claimed], [yi], marker="|", color="black", s=160, linewidths=2, zorder=5)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xscale("symlog", linthresh=0.5, linscale=0.6)
    top = float(np.nanmax(rows[["lower_bound", "halved_lower_bound", "epsilon_claimed"]].to_numpy(dtype=float)))
    ax.set_xlim(0, max(1.0, top) * 1.25)
    ticks = [t for t in (0, 0.25, 0.5, 1, 2, 4, 8, 16, 32) if t <= max(1.0, top) * 1.25]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_xlabel("ε (symlog scale): lower bound (filled), halved-noise or, floating point, legacy-floats bound "
                  "(open), claimed ε (|)")
    ax.grid(axis="x", color="0.9")
    used = [v for v in VERDICT_COLOURS if v in set(rows["verdict"])]
    handles = [Line2D([], [], marker="o", ls="", color=VERDICT_COLOURS[v], label=v) for v in used]
    handles.append(Line2D([], [], marker="|", ls="", color="black", markersize=10, label="claimed ε"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.6 / units - 0.04), ncol=3, fontsize=7,
              frameon=False)
    conf = rows["confidence"].min()
    ax.set_title(f"{item.get('title', 'Privacy audit')} ({100 * conf:.3g} % confidence)")
    save_figure(fig, stem)


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def _evidence(r) -> str:
    return (f"ε ≥ {fmt(r.lower_bound, 3)} at {100 * r.confidence:.3g} % vs claimed {fmt(r.epsilon_claimed, 3)} "
            f"(design {r.design_title}; event {r.statistic} {r.event[5:]} with t = {fmt(r.threshold, 4)}; "
            f"P_D = {fmt(r.p_D, 3)}, "
            f"P_D' = {fmt(r.p_Dp, 3)}; {r.samples} samples per side; halved-noise bound "
            f"{fmt(r.halved_lower_bound, 3)})")


def _floating_point_evidence(r) -> str:
    return (f"ε ≥ {fmt(r.lower_bound, 3)} at {100 * r.confidence:.3g} % vs claimed {fmt(r.epsilon_claimed, 3)} "
            f"(design {r.design_title}; {r.event}; events on D {int(r.events_D)}, on D' {int(r.events_Dp)} of "
            f"{r.samples}; the same runs with legacy floats: {int(r.legacy_events_D)} and {int(r.legacy_events_Dp)}, "
            f"ε ≥ {fmt(r.halved_lower_bound, 3)}; self-check on D {'passed' if r.self_check else 'FAILED'}; "
            f"rounding control {'passed' if r.rounding_control else 'FAILED'})")


def check_audit(table: pd.DataFrame, item: Mapping) -> list[Check]:
    """One claim per audited algorithm: DP-labelled (and undeclared) ones show no violation; the
    non-DP variants' violations are shown; the `n_from_data` variants (N read from each neighbour)
    show the leak that makes N a public input of their guarantee. The floating-point design: its
    positive control (the legacy raw-float Laplace sampler) shows its violation; the algorithms it
    covers are DP-labelled rows like the others; those it does not apply to make no claim."""
    rows = table[table["summary"].astype(bool)] if len(table) else table
    checks: list[Check] = []
    not_dp = []
    for r in rows.itertuples(index=False):
        if not_applicable(r.verdict):
            continue
        floating = r.design == FLOATING_POINT_DESIGN
        if r.verdict in CONTROL:
            shown = r.verdict == CONTROL_SHOWN
            checks.append(Check(
                f"The floating-point design has power: {r.name} shows its violation", shown,
                _floating_point_evidence(r), quantity=float(r.lower_bound),
                threshold=f"lower bound > claimed ε = {fmt(r.epsilon_claimed, 3)}",
                why="" if shown else ("the design's event did not separate the legacy sampler's outputs on D and D': "
                                      "it cannot show a floating-point leak (more samples or another event needed)")))
            continue
        if r.verdict in OUTSIDE:
            shown = r.verdict == OUTSIDE_SHOWN
            checks.append(Check(
                f"Reading N from the data leaks (why the guarantee needs N public): {r.name}", shown, _evidence(r),
                quantity=float(r.lower_bound), threshold=f"lower bound > claimed ε = {fmt(r.epsilon_claimed, 3)}",
                why="" if shown else ("the attack did not exceed the claimed ε with N read from each neighbour: "
                                      "this design or sample size does not show the leak")))
            continue
        if r.guarantee == NOT_DP:
            not_dp.append(r)
            continue
        label = "guarantee undeclared" if r.guarantee == UNDECLARED else r.guarantee
        violation = r.verdict == VIOLATION
        # a violation fails the claim; an attack without power decides nothing (never a pass)
        holds = False if violation else (True if r.verdict == POWER else None)
        checks.append(Check(
            f"No DP-labelled algorithm shows a violation: {r.name} ({label}, {r.relation})", holds,
            (_floating_point_evidence(r) if floating else _evidence(r)) + f"; verdict: {r.verdict}",
            quantity=float(r.lower_bound),
            threshold=f"lower bound ≤ claimed ε = {fmt(r.epsilon_claimed, 3)}, with power",
            why=("privacy bug: the empirical lower bound exceeds the ε the algorithm claims (error probability ≤ "
                 f"{fmt(1 - r.confidence, 2)})") if violation else "", undecided=holds is None))
    if not not_dp:
        checks.append(Check("The non-DP variants' violations are shown", None,
                            "no audited algorithm is labelled 'not DP as published' in this configuration"))
    for r in not_dp:
        # a violation not shown is no evidence either way: not decidable (no power), as for DP ones
        shown = True if r.verdict == NOT_DP_SHOWN else None
        checks.append(Check(
            f"The non-DP variants' violations are shown: {r.name} ({r.relation})", shown,
            (_floating_point_evidence(r) if r.design == FLOATING_POINT_DESIGN else _evidence(r))
            + ("" if shown else "; not decidable (no power): the attack did not exceed the "
                                "reported ε, more samples or a stronger design needed"),
            quantity=float(r.lower_bound), threshold=f"lower bound > reported ε = {fmt(r.epsilon_claimed, 3)}",
            undecided=shown is None))
    return checks
