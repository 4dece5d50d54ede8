"""Item-level steps: aggregate run records into a table, render it, check the paper's claims.

Each step receives its *step spec* (`dpclust.pipeline.run_plan.ItemTarget.step_spec`): exactly the item
settings it reads, planned by the workflow and passed to the job as a param. No step reads
`config/`. The Snakemake rules call these through `workflow/scripts/*.py`; `run_item_locally`
runs one item's whole chain in-process (data, runs, table, figure, checks) for development and
tests.

A step function is looked up by the name given in the item's config (`aggregate:`, `render:`,
`checks:`) in the item's module, and called as::

    aggregate(records, item, ctx) -> DataFrame     # ctx.dataset_path(name): processed files
    render(table, item, stem)                       # writes stem.png / stem.pdf (tables: + .md)
    checks(table, item) -> list[Check]

where `item` is the step spec (a dict: `options`, `title`, `caption`, `names`, ...).
"""

from __future__ import annotations

import contextlib
import html
import importlib
import json
import sys
import traceback
from pathlib import Path

import pandas as pd

from dpclust.api import DPClustError
from dpclust.fileio import write_csv_atomic, write_text_atomic
from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import CHECK_KINDS, PAPER_KINDS, Context, checks_frame
from dpclust.pipeline.cells import tidy
from dpclust.pipeline.integrity import load_records
from dpclust.pipeline.sensitivity import alternative_records, alternatives, declarations, label_checks, own_rows


def run_logged(log_path, label: str, step):
    """Run `step()` for a Snakemake job: its output and any traceback go to the job's log; a failure
    is one line on stderr naming the step, the error and the log (then exit status 1)."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            with contextlib.redirect_stdout(log):
                result = step()
        except Exception as exc:  # one clear line; the whole traceback is in the log
            traceback.print_exc(file=log)
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            print(f"dpclust: {label} failed: {type(exc).__name__}: {first} (traceback in {log_path})", file=sys.stderr)
            raise SystemExit(1) from None
    return result


def step_function(spec: dict, step: str, default=None):
    """The item module's function `step` (aggregate, render, checks: `dpclust.pipeline.item_modules`),
    or `default` when the module does not define it."""
    return getattr(importlib.import_module(spec["module"]), step, default)


def aggregate_item(spec: dict, record_paths, dataset_paths: dict, out_csv) -> pd.DataFrame:
    records = load_records(record_paths)
    func = step_function(spec, "aggregate", tidy)
    table = func(records, spec, Context(dataset_paths=dict(dataset_paths),
                                         dataset_entries=spec.get("dataset_entries") or {}))
    if not isinstance(table, pd.DataFrame):
        raise DPClustError(f"aggregate of {spec.get('paper')}/{spec.get('item')} returned "
                           f"{type(table).__name__}, not a DataFrame")
    write_csv_atomic(table, out_csv)
    return table


def read_table(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=True)


def caption_text(cfg: dict) -> str:
    return f"**{cfg['title']}** ({cfg['reproduces']}). {cfg['caption']}"


def render_item(spec: dict, table_csv, stem) -> None:
    """Render `stem.png`/`stem.pdf` (+ `stem.md`: the table for tables, caption and link for figures)."""
    func = step_function(spec, "render")
    if func is None:
        raise DPClustError(f"item {spec.get('paper')}/{spec.get('item')} has no `render` function")
    stem = Path(stem)
    table = own_rows(read_table(table_csv), spec.get("sensitivity"))   # variant runs are not drawn
    func(table, spec, str(stem))
    if spec.get("kind", "figure") == "figure":
        write_text_atomic(f"![{spec['title']}]({stem.name}.png)\n\n{caption_text(spec)}\n\nData: "
                          f"`{Path(table_csv).as_posix()}`\n", stem.with_suffix(".md"))
    if not stem.with_suffix(".html").exists():
        # the report's readable, sortable table: a table item's rows, or the data behind a figure
        from dpclust.pipeline.plotting import html_table

        what = "Table" if spec.get("kind") == "table" else "Data behind the figure"
        write_text_atomic(html_table(table, f"{what}: {spec.get('title', '')}", caption_text(spec)),
                          stem.with_suffix(".html"))


def refused_cells(table: pd.DataFrame, spec: dict) -> list[str]:
    """The cells of an item's table that an algorithm refused (`api.Refused`), as "algorithm on dataset"
    (display names)."""
    from dpclust.pipeline.itemkit import dataset_name, name

    if "status" not in table:
        return []
    bad = table[table["status"] == "refused"]
    algs = bad["algorithm"] if "algorithm" in bad else [None] * len(bad)
    return list(dict.fromkeys(f"{name(spec, a)} on {dataset_name(spec, d)}" if isinstance(a, str)
                              else dataset_name(spec, d) for a, d in zip(algs, bad["dataset"])))


def withhold_while_refused(checks: list, table: pd.DataFrame, spec: dict) -> list:
    """A paper's claim is about every cell of its protocol: while some of the item's cells were refused,
    a claim that holds on the others is reported not evaluable, naming them (a failure stays one).
    Check functions that rank refused cells themselves (the leaderboard's) set `handles_refused`."""
    refused = refused_cells(table, spec)
    if not refused:
        return checks
    note = ("not evaluable: cells refused by their algorithm (" + ", ".join(refused[:6])
            + (", …" if len(refused) > 6 else "") + ")")
    for check in checks:
        if check.holds is True:
            check.holds = None
            check.detail = f"{note}; on the other cells: {check.detail}" if check.detail else note
    return checks


def check_item(spec: dict, table_csv, stem, settled: dict | None = None,
               stopped: dict[str, str] | None = None) -> pd.DataFrame:
    """Decide the item's claims on its table (at the spec's `alpha`: a replication look's level, else
    the rubric's α; `settled`: the cells earlier looks settled, claim → key → cell; `stopped`: the
    claims and sensitivity alternatives earlier looks stopped, with their results, which the labels
    quote) and write them as
    stem.csv / .md / .html, the states of the paper claims' cells as stem.cells.json, and the paper
    claims at the sensitivity's alternatives that have runs of their own as stem.alternatives.json
    (what the replication decision settles and replicates: `dpclust.pipeline.replication`)."""
    with verdicts.using_alpha(spec.get("alpha", verdicts.ALPHA)):
        return _check_item(spec, table_csv, stem, settled, stopped)


def _check_item(spec: dict, table_csv, stem, settled: dict | None, stopped: dict[str, str] | None) -> pd.DataFrame:
    func = step_function(spec, "checks")
    full = read_table(table_csv)
    sensitivity = spec.get("sensitivity")
    table = own_rows(full, sensitivity)
    with verdicts.settled(settled):   # the item's own claims only, never the sensitivity's alternatives
        checks = list(func(table, spec))
    if not getattr(func, "handles_refused", False):
        checks = withhold_while_refused(checks, table, spec)
    at_alternatives: dict[str, dict] = {}
    segments: dict[str, list] = {}
    for decl in declarations(sensitivity):   # each verdict says how it fares at the alternatives
        declared, others, scope = alternatives(func, full, table, spec, decl, checks, settled)
        at_alternatives.update(alternative_records(decl, checks, declared, others, scope))
        checks = label_checks(checks, others, decl, declared, scope, stopped, segments)
    kind = PAPER_KINDS.get(spec.get("paper", ""))
    if kind:  # the pseudo-papers' checks are about our own machinery, never the papers' claims
        for c in checks:
            c.kind = kind
    frame = checks_frame(checks)
    cell_states = {c.claim: c.cell_states for c in checks if c.kind == "paper" and c.cell_states}
    stem = Path(stem)
    write_csv_atomic(frame, stem.with_suffix(".csv"))
    write_text_atomic(json.dumps(cell_states, indent=1, sort_keys=True, allow_nan=True) + "\n",
                      stem.with_suffix(".cells.json"))
    labels = {c.claim: segments[c.claim] for c in checks if c.kind == "paper" and c.claim in segments}
    write_text_atomic(json.dumps({"alternatives": at_alternatives, "labels": labels}, indent=1, sort_keys=True,
                                 allow_nan=True, default=str) + "\n", stem.with_suffix(".alternatives.json"))
    from dpclust.pipeline.plotting import to_markdown

    title = (f"Claims of {spec.get('reproduces') or spec.get('paper', '') + '/' + spec.get('item', '')}, "
             "checked on our runs")
    if "alpha" in spec:     # a replicated item: these runs are one look; later looks may decide open claims
        title += (f" of one replication look (one-sided α = {spec['alpha']:.3g} per look); the final verdicts, "
                  "after every look, are in checks/summary.csv and the results page")
    write_text_atomic(f"**{title}**\n\n" + to_markdown(frame), stem.with_suffix(".md"))
    write_text_atomic(checks_html(frame, title), stem.with_suffix(".html"))
    return frame


RESULT_COLOURS = {"holds": "#1b7f3b", "does not hold": "#b3261e", "not decidable": "#9a6700",
                  "not evaluable": "#6b6b6b"}


def _interval_text(row) -> str:
    q, lo, hi = (getattr(row, k, None) for k in ("quantity", "ci_low", "ci_high"))
    if q is None or (isinstance(q, float) and q != q):
        return ""
    text = f"{q:.4g}"
    if lo is not None and hi is not None and lo == lo and hi == hi:
        text += f" [{lo:.4g}, {hi:.4g}]"
    return text


def _cell(v) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else html.escape(str(v))


def _checks_table(frame: pd.DataFrame, title: str) -> str:
    """The checks as a titled sortable HTML table (click a column header to sort)."""
    rows = "".join(
        f"<tr><td>{_cell(r.claim)}</td>"
        f"<td style='color:{RESULT_COLOURS.get(r.result, '#000')};font-weight:bold'>{_cell(r.result)}</td>"
        f"<td>{_cell(_interval_text(r))}</td><td>{_cell(getattr(r, 'threshold', ''))}</td>"
        f"<td>{_cell(getattr(r, 'rule', ''))}</td>"
        f"<td>{_cell(r.detail)}</td><td>{_cell(getattr(r, 'why', ''))}</td>"
        f"<td>{_cell(getattr(r, 'sensitivity', ''))}</td></tr>"
        for r in frame.itertuples(index=False)
    )
    return (f"<h3>{html.escape(title)}</h3><table class='sortable'>"
            "<tr><th>claim</th><th>result</th><th>quantity [CI]</th><th>holds if</th><th>rule (cells)</th>"
            f"<th>detail</th><th>why (if it does not hold)</th><th>sensitivity</th></tr>{rows}</table>")


def _page(title: str, body: str) -> str:
    from dpclust.pipeline.plotting import sortable_table_script

    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;font-size:13px} table{border-collapse:collapse} "
            "td,th{border:1px solid #bbb;padding:3px 6px;vertical-align:top} th{cursor:pointer;background:#eee}"
            f"</style></head><body>{body}{sortable_table_script()}</body></html>\n")


def checks_html(frame: pd.DataFrame, title: str) -> str:
    """The claim checks as a page with one sortable HTML table."""
    return _page(title, _checks_table(frame, title))


def summarize_checks(check_csvs, out_stem, adjust=None) -> pd.DataFrame:
    """One table of every check of every item (paper, item, kind, claim, result, quantity and
    interval, threshold, detail, why, cells, rule), written as `out_stem.{csv,md,html}`.
    `adjust(table) -> table` runs before writing: the workflow passes the replication's
    (`dpclust.pipeline.replication.apply`: each replicated claim takes the verdict of the look that
    decided it, and every paper claim says how many runs it used and why it stopped).

    The pages open on the papers' claims, tallied per paper (`kind` "paper" only); our own checks
    (bookkeeping, the baselines' sanity checks, the privacy audit, the leaderboard) follow in tables
    of their own and never count in the papers' tallies (`paper_tallies`).
    """
    from dpclust.pipeline.aggregate import CHECK_COLUMNS, cause_of

    frames = []
    for path in sorted(map(str, check_csvs)):
        frame = pd.read_csv(path).reindex(columns=CHECK_COLUMNS)
        for col in ("claim", "result", "threshold", "detail", "why", "kind", "rule", "sensitivity"):
            frame[col] = frame[col].astype(object).fillna("").astype(str)   # an all-empty column reads as float
        frame["kind"] = frame["kind"].where(frame["kind"] != "", "paper")
        parts = Path(path).with_suffix("").parts
        frame.insert(0, "item", parts[-1])
        frame.insert(0, "paper", parts[-2])
        frames.append(frame)
    table = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame(columns=["paper", "item", *CHECK_COLUMNS]))
    if adjust is not None:
        table = adjust(table)
    # after `adjust`: a replication look may have replaced the reason
    table.insert(table.columns.get_loc("why") + 1, "cause", table["why"].fillna("").astype(str).map(cause_of))
    stem = Path(out_stem)
    write_csv_atomic(table, stem.with_suffix(".csv"))
    from dpclust.pipeline.plotting import to_markdown

    tallies = paper_tallies(table)
    papers = table[table["kind"] == "paper"]
    ours = table[table["kind"] != "paper"]
    title = _tally_text(papers, "The papers' claims")
    md = [f"**{title}**", "", to_markdown(tallies), "", to_markdown(papers)]
    body = [f"<h3>{html.escape(title)}</h3>", _tallies_table(tallies),
            _checks_table(_labelled(papers), "Every claim of the papers")]
    for kind in [k for k in CHECK_KINDS if k != "paper"]:
        part = ours[ours["kind"] == kind]
        if part.empty:
            continue
        sub = _tally_text(part, f"Our own checks ({kind}; not the papers' claims)")
        md += ["", f"**{sub}**", "", to_markdown(part)]
        body.append(_checks_table(_labelled(part), sub))
    write_text_atomic("\n".join(md) + "\n", stem.with_suffix(".md"))
    write_text_atomic(_page(title, "\n".join(body)), stem.with_suffix(".html"))
    return table


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=["paper", "item"]).assign(
        claim=frame["paper"] + " / " + frame["item"] + ": " + frame["claim"])


def _tallies_table(tallies: pd.DataFrame) -> str:
    head = "".join(f"<th>{_cell(c)}</th>" for c in tallies.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in tallies.itertuples(index=False))
    return f"<table><tr>{head}</tr>{rows}</table>"


def _tally_text(frame: pd.DataFrame, what: str) -> str:
    counts = frame["result"].value_counts().to_dict() if len(frame) else {}
    return f"{what}: {len(frame)} checks" + ("; " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
                                             if counts else "")


def paper_tallies(table: pd.DataFrame) -> pd.DataFrame:
    """Per paper: how many of its own claims hold, do not hold, are not decidable or not evaluable
    (checks of kind "paper" only)."""
    papers = table[table["kind"] == "paper"] if "kind" in table else table
    results = list(RESULT_COLOURS)
    rows = []
    for paper, part in papers.groupby("paper", sort=True):
        counts = part["result"].value_counts()
        rows.append({"paper": paper, "claims": len(part), **{r: int(counts.get(r, 0)) for r in results}})
    return pd.DataFrame(rows, columns=["paper", "claims", *results])
