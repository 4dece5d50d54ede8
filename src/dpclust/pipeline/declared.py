"""Claims declared in a paper's YAML (`claims.declared`) and decided by the one engine (`verdicts`).

A declared comparison says, in data, what a sentence of the paper compares: one method (or each of
several) against one or several others, relative ((mean_method − mean_other) / mean_other, a Welch
interval: `verdicts.relative_cell`) or as a ratio, with a side, over the (dataset, point) cells it
ranges over (the point: ε, k or (ε, k), the item's `Source`), under the paper's quantifier. Several
comparators make a cell their extreme ("the worst": the smallest lead over any other; "the best": the
largest), or with `each` a cell per comparator. Its text, detail and alternative reading are
templates: ``{su2016.gkm}`` is an algorithm's display name, ``{datasets}`` the names of the claim's
datasets (``{datasets_and}``: joined by "and"), ``{key}`` / ``{key:g}`` a value of the item's `claims`
(``{ours}``: a role's display name; ``{exempt_dataset}``, ``{exempt_below}``: the exemption's;
``{claim}`` in an alternative: the paper's claim filled in; in a `why`, ``{n_failing}`` and
``{n_decided}``: how many cells the engine failed and decided), so the sensitivity of a threshold
re-decides the declaration too. Every key is checked when the item is read (`parse`), so a misspelt
one is one clear error naming the claim and the key.

Fields of an entry (config/README.md, "Declared claims"):

* `claim` (text), `compare` (an algorithm, or a role of `claims` naming one: ``ours``; a list: each
  of them), `against` (one or a list; `each`: a cell per comparator, else their extreme), `side`
  (``<``: lower is what the sentence says, ``>``: higher; ``<=``, ``>=``: at most, at least),
  `quantifier` (``every``, ``most``, ``almost all``; the paper's);
* `kind`: ``relative`` (default, above) or ``ratio`` (mean / the comparator's mean, delta method;
  against 1 with the rubric's null margin, or with `factor`, a key of `claims`, against that: "within
  c×", "at least c×", c is the margin); `guard`: the rubric's degenerate guard (a cell whose method
  kept fewer than k/2 non-empty clusters never holds); `label`: a template of each cell's label
  (``{cell}``: the source's label; ``{dataset}``, ``{compare}``, ``{against}``: display names);
* `datasets`: a key of `claims` holding a dataset or a list of them (default: every panel of the item);
* `epsilon_at_most`, `epsilon_above`: keys of `claims` (numbers): only cells at ε ≤ it, or ε > it;
* `exempt`: a key of `claims` holding ``{dataset, below_epsilon}``: cells the sentence excepts
  (listed in the detail, not decided);
* `detail`: a template of the check's detail (default ``{cells}``: the item's description of a cell;
  the exempt cells are appended), `reading`: a template appended to the rule (how a vague word was
  read), `why`: a key of `claims.why`;
* `alternative`: ``{share: <key of claims>, claim: <template, {share}>}``: our fraction reading,
  reported as "alternative reading: …" only when, at the claim's number of cells, it needs another
  number of them to hold than the paper's quantifier does (at 4 cells, "90 %" is "every");
* `as_alternative`: true when the whole declaration is our alternative reading of a sentence (other
  comparators than the paper names, say): its claim reads "alternative reading: …" and its checks are
  of kind ``alternative``, never in the papers' tallies;
* `python`: instead of all of the above, the name of one of the item module's `HOOKS` (a claim whose
  cells no declaration expresses yet), called with (table, item) and returning its checks in place.

An item passes its cells through `Source`: the datasets and one more axis (`points`: the ε grid, k, or
(ε, k)), the cell statistics and labels of its table, and optionally a note on the compared method's
cell (how often the hybrid switched), the non-empty clusters for the guard, a refusal of a claim naming
a method that is not DP, an explanation of a failure from its failing cells (`Failing`), and the paper's own way
of writing a sentence's verdict (`sentence`: Cohen-Addad et al.'s per-ε table); so the engine knows
nothing of a paper's columns.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from dpclust.api import DPClustError
from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import ALTERNATIVE_PREFIX, Check
from dpclust.pipeline.itemkit import dataset_name, name

SIDES = ("<", ">", "<=", ">=")
_ALGORITHM = re.compile(r"\{([a-z0-9_]+\.[a-z0-9_]+)\}")
_FIELDS = {"claim", "compare", "against", "side", "quantifier", "datasets", "epsilon_at_most", "epsilon_above",
           "exempt", "detail", "reading", "why", "alternative", "python", "kind", "factor", "label", "guard", "each",
           "as_alternative"}
KINDS = ("relative", "ratio")
#: the head of a check that is our reading of a sentence, not the paper's: of kind `alternative`, never in
#: the papers' tallies (`aggregate.checks_frame`, docs/VERDICTS.md)
ALTERNATIVE = f"{ALTERNATIVE_PREFIX}: "


@dataclass(frozen=True)
class Comparison:
    """One declared comparison claim (module docstring)."""

    claim: str
    compare: tuple[str, ...]
    against: tuple[str, ...]
    side: str
    quantifier: str = "every"
    datasets: str | None = None
    epsilon_at_most: str | None = None
    epsilon_above: str | None = None
    exempt: str | None = None
    detail: str = ""
    reading: str = ""
    why: str = ""
    alternative: Mapping[str, str] | None = None
    kind: str = "relative"
    factor: str | None = None
    label: str = ""
    guard: bool = False
    each: bool = False
    as_alternative: bool = False


class Failing(NamedTuple):
    """A cell the engine failed, as `Source.explain` receives it: its dataset, its point (ε, k or (ε, k)),
    the compared method and the comparator of its cell (None for a cell that is the extreme over several)."""

    dataset: str
    point: Any
    method: str
    versus: str | None


@dataclass(frozen=True)
class Hook:
    """A claim decided in Python: the item module's `HOOKS[name]`."""

    python: str


@dataclass(frozen=True)
class Source:
    """What the engine needs from an item's table: the available and planned datasets (with the
    missing ones and why), the values of the cell axis besides the dataset (`points`: the ε grid, k,
    or (ε, k)), (mean, sd, n) of a method in a cell or None, and labels. Optional: a note on the
    compared method's cell, the fewest non-empty clusters of a method's cell and its k (for the
    degenerate guard), a refusal (a claim naming a method that is not DP: its Check, else None), an
    explanation of a failing verdict from its failing (dataset, point) cells and the `why` text, and
    `sentence` (claim, cells, where, test, quantifier, why=, detail=) → Check, the verdict written
    the paper's way instead of `verdicts.claim_check`."""

    available: Sequence[str]
    planned: Sequence[str]
    missing: Mapping[str, str]
    points: Sequence[Any]
    stats: Callable[[str, str, Any], Any]
    names: Mapping[str, str]
    cell_text: str
    note: Callable[[str, str, Any], str] = lambda ds, algorithm, e: ""
    cell_label: Callable[[str, Any], str] | None = None
    nonempty_low: Callable[[str, str, Any], tuple[float | None, int]] | None = None
    refuse: Callable[[Sequence[str], Sequence[str], str], Check | None] | None = None
    explain: Callable[[list[Failing], str], str] | None = None
    sentence: Callable[..., Check] | None = None
    #: the run fields the point stands for (a tuple point: in this order), so that a cell names its runs
    #: (`run_key`) and a replication look can settle it alone; None: the point names no run field
    axis: tuple[str, ...] | None = ("epsilon",)

    def label(self, ds: str, e: Any) -> str:
        return self.cell_label(ds, e) if self.cell_label else f"{self.names.get(ds, ds)} ε={e:g}"


def parse(entries: Sequence[Mapping] | None, claims: Mapping, where: str) -> list[Comparison | Hook]:
    """The typed declarations of an item's `claims.declared`, every key and reference checked."""
    out: list[Comparison | Hook] = []
    for i, entry in enumerate(entries or ()):
        at = f"{where}: claims.declared[{i}]"
        unknown = sorted(set(entry) - _FIELDS)
        if unknown:
            raise DPClustError(f"{at}: unknown key(s) {unknown}; a declaration has {sorted(_FIELDS)}")
        if "python" in entry:
            if set(entry) != {"python"}:
                raise DPClustError(f"{at}: a `python` hook takes no other key")
            out.append(Hook(str(entry["python"])))
            continue
        for key in ("claim", "compare", "against", "side"):
            if key not in entry:
                raise DPClustError(f"{at}: `{key}` is required")
        if entry["side"] not in SIDES:
            raise DPClustError(f"{at}: side must be one of {SIDES}, got {entry['side']!r}")
        quantifier = entry.get("quantifier", "every")
        if quantifier not in verdicts.QUANTIFIERS:
            raise DPClustError(f"{at}: quantifier must be one of {sorted(verdicts.QUANTIFIERS)}, got {quantifier!r}")
        kind = entry.get("kind", "relative")
        if kind not in KINDS:
            raise DPClustError(f"{at}: kind must be one of {KINDS}, got {kind!r}")
        if kind == "relative" and entry.get("factor") is not None:
            raise DPClustError(f"{at}: a `relative` comparison takes no `factor` (a `ratio` does)")
        for key in ("datasets", "epsilon_at_most", "epsilon_above", "exempt", "factor"):
            if entry.get(key) is not None and entry[key] not in claims:
                raise DPClustError(f"{at}: `{key}: {entry[key]}` names no value of the item's claims")
        alternative = entry.get("alternative")
        if alternative is not None and (set(alternative) != {"share", "claim"} or alternative["share"] not in claims):
            raise DPClustError(f"{at}: alternative needs `share` (a key of the item's claims) and `claim` (a text)")
        against = [entry["against"]] if isinstance(entry["against"], str) else entry["against"]
        compare = [entry["compare"]] if isinstance(entry["compare"], str) else entry["compare"]
        out.append(Comparison(claim=str(entry["claim"]), compare=tuple(_role(a, claims) for a in compare),
                              against=tuple(_role(a, claims) for a in against),
                              side=entry["side"], quantifier=quantifier, datasets=entry.get("datasets"),
                              epsilon_at_most=entry.get("epsilon_at_most"), epsilon_above=entry.get("epsilon_above"),
                              exempt=entry.get("exempt"), detail=str(entry.get("detail") or ""),
                              reading=str(entry.get("reading") or ""), why=str(entry.get("why") or ""),
                              alternative=alternative, kind=kind, factor=entry.get("factor"),
                              label=str(entry.get("label") or ""), guard=bool(entry.get("guard", False)),
                              each=bool(entry.get("each", False)),
                              as_alternative=bool(entry.get("as_alternative", False))))
    return out


def _role(value, claims: Mapping) -> str:
    """An algorithm id, or a role of the item's claims naming one (``ours`` → ``balcan2017.balcan``)."""
    role = claims.get(value) if isinstance(value, str) else None
    return role if isinstance(role, str) else str(value)


def from_config(config_dir, paper: str, item: str) -> list[dict]:
    """The `claims.declared` of an item as `<config_dir>/papers/<paper>.yaml` writes it (base form, no
    preset), for tests and notebooks; a job receives its item's claims as params instead."""
    from pathlib import Path

    import yaml

    data = yaml.safe_load((Path(config_dir) / "papers" / f"{paper}.yaml").read_text(encoding="utf-8"))
    return list(data["items"][item]["claims"].get("declared") or [])


def texts_from_config(config_dir, paper: str, item: str) -> dict:
    """`from_config` as the item's claims keys `declared` and `why` (the judgements its declarations name)."""
    from pathlib import Path

    import yaml

    claims = yaml.safe_load((Path(config_dir) / "papers" / f"{paper}.yaml").read_text(encoding="utf-8"))["items"][
        item]["claims"]
    return {"declared": from_config(config_dir, paper, item), "why": dict(claims.get("why") or {})}


def text(template: str, item: Mapping, values: Mapping[str, Any]) -> str:
    """A template filled: ``{alg.id}`` → display name, then ``{key[:spec]}`` from `values` (a text value
    that names an algorithm, a role such as ``{ours}``, gives its display name)."""
    filled = _ALGORITHM.sub(lambda m: name(item, m.group(1)), template)
    return filled.format_map({k: name(item, v) if isinstance(v, str) else v for k, v in values.items()})


def _datasets(claims: Mapping, decl: Comparison) -> list[str]:
    """The datasets a declaration's `datasets` key names: a list, or one dataset."""
    value = claims[decl.datasets]
    return [value] if isinstance(value, str) else list(value)


def _cells(decl: Comparison, item: Mapping, claims: Mapping, src: Source, values: Mapping[str, Any]):
    """The claim's cells, where each lies ((dataset, method, point)), the comparator of each (None for an
    extreme over several), the exempt cells' texts and the degenerate guard's notes (None when the
    table records no non-empty clusters for a compared method)."""
    wanted = set(_datasets(claims, decl)) if decl.datasets else None
    cap = float(claims[decl.epsilon_at_most]) if decl.epsilon_at_most else None
    floor = float(claims[decl.epsilon_above]) if decl.epsilon_above else None
    exempt = claims[decl.exempt] if decl.exempt else None
    several = len(decl.against) > 1 and not decl.each
    largest = decl.side in ("<", "<=")   # "below every other": the largest lead; "above every other": the smallest
    # each (compared method, comparator) pair its own cells, in that order; or the extreme over the comparators
    pairs = [(a, (b,)) for a in decl.compare for b in decl.against] if decl.each else \
        [(a, decl.against) for a in decl.compare]
    cells, where, versus, exempted, notes = [], [], [], [], []
    recorded = True
    for ds in src.available:
        if wanted is not None and ds not in wanted:
            continue
        for alg, others in pairs:
            lead = name(item, alg)
            for e in src.points:
                eps = e[0] if isinstance(e, tuple) else e   # an (ε, k) point's ε
                if (cap is not None and eps > cap) or (floor is not None and eps <= floor):
                    continue
                own = src.stats(ds, alg, e)
                if own is None:
                    continue
                here = src.label(ds, e)
                comps = []
                for other in others:
                    theirs = src.stats(ds, other, e)
                    if theirs is None:
                        continue
                    label = here
                    if decl.label:
                        label = text(decl.label, item, {**values, "cell": here, "dataset": src.names.get(ds, ds),
                                                        "compare": lead, "against": name(item, other)})
                    part = f"− {name(item, other)}" if several else label
                    comps.append((other, verdicts.ratio_cell(part, own, theirs) if decl.kind == "ratio"
                                  else verdicts.relative_cell(part, own, theirs)))
                if not comps:
                    continue
                if exempt and ds == exempt["dataset"] and eps < float(exempt["below_epsilon"]):
                    exempted.append(f"{here}: " + ", ".join(f"{lead} {c.label} {c.estimate:+.3g}" for _, c in comps))
                    continue
                note = src.note(ds, alg, e)
                made: list[tuple[str | None, verdicts.Cell]]   # (its comparator, the cell)
                if several:
                    parts = ", ".join(f"{c.label} {c.estimate:+.3g}" for _, c in comps)
                    head = f"{note}: " if note else ""
                    made = [(None, verdicts.extreme_cell(
                        f"{here} ({head}{'max' if largest else 'min'} over {lead} {parts})", [c for _, c in comps],
                        largest))]
                else:
                    made = [(other, dataclasses.replace(c, label=f"{c.label} ({note})") if note else c)
                            for other, c in comps]
                for versus_of_cell, cell in made:
                    if src.axis is not None:
                        cell = dataclasses.replace(cell, key=run_key(
                            ds, dict(zip(src.axis, e if isinstance(e, tuple) else (e,))), alg,
                            [versus_of_cell] if versus_of_cell else [o for o, _ in comps]))
                    if decl.guard:
                        low, k = src.nonempty_low(ds, alg, e) if src.nonempty_low else (None, 0)
                        recorded = recorded and low is not None
                        if low is not None and verdicts.degenerate(low, k):
                            notes.append(f"{cell.label.split(':')[0]} ({low:g}/{int(k)} non-empty clusters)")
                            cell = verdicts.degenerate_cell(cell, low, k)
                    cells.append(cell)
                    where.append((ds, alg, e))
                    versus.append(versus_of_cell)
    return cells, where, versus, exempted, (notes if recorded else None)


def run_key(dataset: str, point: Mapping[str, Any], compare: str, against: Sequence[str],
            groups: Sequence[str] | None = None) -> str:
    """A cell's `verdicts.Cell.key`: where its runs are, as canonical JSON (`replication.cell_runs` reads
    it back): the dataset, the point's run fields (ε, k; a list: the cell reads each of those values),
    the compared method and its comparators, and, for a cell that reads some of an item's run groups
    only (a step of a sweep), those groups."""
    def value_of(name: str, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [value_of(name, v) for v in value]
        return None if value is None else float(value) if name == "epsilon" else int(value)

    fields = {name: value_of(name, value) for name, value in point.items()}
    where = {"dataset": dataset, "point": fields, "compare": compare, "against": sorted(against)}
    if groups is not None:
        where["groups"] = sorted(groups)
    return json.dumps(where, sort_keys=True, separators=(",", ":"))


def decide(decl: Comparison, item: Mapping, claims: Mapping, src: Source) -> list[Check]:
    """The paper's verdict of one declaration, then its alternative reading when that differs, each
    "not evaluable (n of N datasets)" when a dataset it ranges over is missing; a refusal (a method
    that is not DP) instead when the source has one."""
    wanted = _datasets(claims, decl) if decl.datasets else None
    values = {k: v for k, v in claims.items() if not isinstance(v, (dict, list))}
    values["datasets"] = ", ".join(dataset_name(item, d) for d in (wanted or src.planned))
    values["datasets_and"] = " and ".join(dataset_name(item, d) for d in (wanted or src.planned))
    values["cells"] = src.cell_text
    if decl.exempt:
        values["exempt_dataset"] = dataset_name(item, claims[decl.exempt]["dataset"])
        values["exempt_below"] = float(claims[decl.exempt]["below_epsilon"])
    claim = (ALTERNATIVE if decl.as_alternative else "") + text(decl.claim, item, values)
    refused = src.refuse(decl.compare, decl.against, claim) if src.refuse else None
    if refused is not None:
        return [refused]
    cells, where, versus, exempted, notes = _cells(decl, item, claims, src, values)
    if decl.kind == "ratio" and decl.factor:   # "within c×", "at least c×": c is the margin (docs/VERDICTS.md)
        test = verdicts.Directional(decl.side, float(claims[decl.factor]), null_margin=0.0)
    else:   # lower / higher than the comparator: the rubric's null margin
        test = verdicts.Directional(decl.side, 1.0 if decl.kind == "ratio" else 0.0)
    detail = text(decl.detail or "{cells}", item, values)
    if decl.exempt:
        detail += f"; exempt cells: {'; '.join(exempted) or 'none'}"
    if decl.guard:
        detail += verdicts.degenerate_note(notes or [], notes is not None)
    if not cells and not src.sentence:
        detail = (f"no cell has runs of both {' / '.join(name(item, a) for a in decl.compare)} and "
                  f"{' / '.join(name(item, a) for a in decl.against)}; {detail}")
    with verdicts.deciding(claim):   # the cells earlier replication looks settled keep their verdicts
        states = [c.state for c in verdicts.judge(cells, test, decl.quantifier).cells] if cells and decl.why else []
        counts = {"n_failing": states.count(verdicts.FAILS),
                  "n_decided": states.count(verdicts.FAILS) + states.count(verdicts.HOLDS)}
        why = text((claims.get("why") or {}).get(decl.why, ""), item,
                   {**values, **counts, "failing": "{failing}"}) if decl.why else ""
        if src.explain and decl.why:
            why = src.explain([Failing(ds, e, alg, other) for (ds, alg, e), other, st in zip(where, versus, states)
                               if st == verdicts.FAILS], why)
        if src.sentence:
            out = [src.sentence(claim, cells, where, test, decl.quantifier, why=why, detail=detail)]
        else:
            out = [verdicts.claim_check(claim, cells, test, decl.quantifier, why=why, detail=detail)]
    if decl.as_alternative:
        out[0] = dataclasses.replace(out[0], kind="alternative")
    if decl.reading:
        out[0] = dataclasses.replace(out[0], rule=f"{out[0].rule}; {text(decl.reading, item, values)}")
    if decl.alternative:
        need = float(claims[decl.alternative["share"]])
        share, strict = verdicts.QUANTIFIERS[decl.quantifier]
        # a reading that needs as many cells as the paper's at this claim's count is the same reading
        n = len(cells)
        if (verdicts.required(need, n) != verdicts.required(share, n, strict)) if n else (need != share or strict):
            alt = text(decl.alternative["claim"], item, {**values, "claim": claim, "share": need})
            out.append(verdicts.share_check(f"{ALTERNATIVE}{alt}", cells, test, need, detail))
    planned = src.planned if wanted is None else [d for d in src.planned if d in wanted]
    missing = {d: r for d, r in src.missing.items() if d in planned}
    return [verdicts.every_dataset(c, planned, missing, src.names) for c in out]


def decide_all(table, item: Mapping, src: Source, hooks: Mapping[str, Callable[..., list[Check]]]) -> list[Check]:
    """Every declaration of the item's `claims.declared`, in order; a hook's checks (`hooks[name](table,
    item)`) in its place."""
    claims = item.get("claims") or {}
    where = f"{item.get('paper', '?')}/{item.get('item', '?')}"
    out: list[Check] = []
    for decl in parse(claims.get("declared"), claims, where):
        if isinstance(decl, Hook):
            if decl.python not in hooks:
                raise DPClustError(f"{where}: claims.declared names no hook {decl.python!r} of the item module "
                                   f"(its HOOKS: {sorted(hooks) or 'none'})")
            out += hooks[decl.python](table, item)
        else:
            out += decide(decl, item, claims, src)
    return [dataclasses.replace(c, holds=None if c.holds is None else bool(c.holds)) for c in out]
