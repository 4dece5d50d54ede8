"""Declared settings: the one home of every algorithm setting's default, constraint and provenance.

Each algorithm module declares its settings next to the code that reads them, in the manner of
scikit-learn's ``_parameter_constraints`` and the typed parameters of Google's DP clustering::

    SETTINGS = Settings(
        iterations=Setting(5, "STATED §4.1.1 'DPLloyd runs for t = 5 iterations'", Interval(int, 1)),
        allocation=Setting("uniform", "STATED §4.1.1", Options("uniform", "geometric", "su_tops")),
    )

    @declared(SETTINGS)
    def dplloyd(X, k, epsilon, delta, rng, settings): ...

A provenance string starts with one tag: ``STATED`` (the paper says it: § / Alg. / Eq.),
``INFERRED`` (follows from the paper's text), ``EXT`` (an outside source, named: the authors'
code, a library), ``MISSING→REC`` (the paper is silent; our choice and why), or ``REC`` (an
engineering or analysis knob that does not change the mechanism: speed, memory, diagnostics).

`Settings.complete` fills defaults, refuses unknown names (naming the known ones) and checks
every value, so a typo in a config fails at planning time with one clear line. The paper configs
(`config/papers/*.yaml`) hold only named variants' *overrides* of these defaults.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dpclust.api import DPClustError

TAGS = ("STATED", "INFERRED", "EXT", "MISSING→REC", "REC")

#: Keys the runner (or an estimator) adds to a call; they are not declared settings. `reference_runs`:
#: what recorded runs of other algorithms at the same (dataset, k, ε, seed) returned, for a run group
#: that declares them (Lu & Shen's baselines read Algorithm 1's total from them).
RUNTIME_KEYS = frozenset({"bounds", "init_seed", "init_pool_seeds", "reference_runs"})


# ---------------------------------------------------------------------------------------------
# constraints
# ---------------------------------------------------------------------------------------------
class Constraint:
    """A check of one setting's value: `error(value)` returns None or what is wrong."""

    def error(self, value: Any) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    def __str__(self) -> str:
        return type(self).__name__.lower()


class AnyValue(Constraint):
    def error(self, value):
        return None

    def __str__(self):
        return "any value"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Interval(Constraint):
    """A number of `kind` (int or float) in [lo, hi] (None: unbounded); `open_lo` excludes lo."""

    kind: type = float
    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False
    open_hi: bool = False

    def error(self, value):
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                return f"expected an integer, got {value!r}"
        elif not _is_number(value) or not math.isfinite(value):
            return f"expected a finite number, got {value!r}"
        if self.lo is not None and (value <= self.lo if self.open_lo else value < self.lo):
            return f"must be {'>' if self.open_lo else '>='} {self.lo:g}, got {value!r}"
        if self.hi is not None and (value >= self.hi if self.open_hi else value > self.hi):
            return f"must be {'<' if self.open_hi else '<='} {self.hi:g}, got {value!r}"
        return None

    def __str__(self):
        lo = "-inf" if self.lo is None else f"{self.lo:g}"
        hi = "inf" if self.hi is None else f"{self.hi:g}"
        return f"{self.kind.__name__} in {'(' if self.open_lo else '['}{lo}, {hi}{')' if self.open_hi else ']'}"


class Options(Constraint):
    """One of the listed values."""

    def __init__(self, *values):
        self.values = values

    def error(self, value):
        return None if value in self.values else f"must be one of {list(self.values)}, got {value!r}"

    def __str__(self):
        return " | ".join(map(repr, self.values))


class Boolean(Constraint):
    def error(self, value):
        return None if isinstance(value, bool) else f"expected true or false, got {value!r}"

    def __str__(self):
        return "bool"


class Text(Constraint):
    def error(self, value):
        return None if isinstance(value, str) else f"expected a string, got {value!r}"

    def __str__(self):
        return "str"


class MappingOf(Constraint):
    """A mapping; with `keys`, only those keys are allowed; with `values`, each value is checked."""

    def __init__(self, keys: tuple[str, ...] | None = None, values: Constraint | None = None):
        self.keys, self.values = keys, values

    def error(self, value):
        if not isinstance(value, Mapping):
            return f"expected a mapping, got {value!r}"
        if self.keys is not None:
            unknown = sorted(set(value) - set(self.keys))
            if unknown:
                return f"unknown key(s) {unknown}; allowed: {list(self.keys)}"
        if self.values is not None:
            for key, item in value.items():
                err = self.values.error(item)
                if err:
                    return f"[{key}]: {err}"
        return None

    def __str__(self):
        return f"mapping{'' if self.keys is None else ' of ' + ', '.join(self.keys)}"


class SequenceOf(Constraint):
    """A list of `length` items (any length if None), each checked by `item`."""

    def __init__(self, item: Constraint | None = None, length: int | None = None):
        self.item, self.length = item or AnyValue(), length

    def error(self, value):
        if not isinstance(value, (list, tuple)):
            return f"expected a list, got {value!r}"
        if self.length is not None and len(value) != self.length:
            return f"expected {self.length} items, got {len(value)}"
        for i, item in enumerate(value):
            err = self.item.error(item)
            if err:
                return f"[{i}]: {err}"
        return None

    def __str__(self):
        return f"list of {self.item}" + ("" if self.length is None else f" (length {self.length})")


class AnyOf(Constraint):
    """Satisfies at least one of the constraints (e.g. a number or the text 'auto')."""

    def __init__(self, *constraints: Constraint):
        self.constraints = constraints

    def error(self, value):
        errors = [c.error(value) for c in self.constraints]
        if all(errors):
            return f"expected {self}, got {value!r}"
        return None

    def __str__(self):
        return " or ".join(map(str, self.constraints))


def nullable(constraint: Constraint) -> Constraint:
    return AnyOf(Options(None), constraint)


# ---------------------------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """One declared setting: its default, provenance (tagged, see module docstring), constraint."""

    default: Any
    source: str
    check: Constraint = AnyValue()
    doc: str = ""

    def __post_init__(self):
        if not any(self.source.startswith(tag) for tag in TAGS):
            raise ValueError(f"provenance {self.source!r} must start with one of {TAGS}")
        err = self.check.error(self.default)
        if err:
            raise ValueError(f"default {self.default!r} violates its own constraint: {err}")

    @property
    def tag(self) -> str:
        return next(tag for tag in TAGS if self.source.startswith(tag))


class Settings(Mapping[str, Setting]):
    """The declared settings of one algorithm (an immutable mapping name → `Setting`)."""

    def __init__(self, **settings: Setting):
        for name, s in settings.items():
            if not isinstance(s, Setting):
                raise TypeError(f"setting {name!r} must be a Setting, got {type(s).__name__}")
            if name in RUNTIME_KEYS:
                raise ValueError(f"{name!r} is set by the runner, not a declared setting")
        self._settings = dict(settings)

    def __getitem__(self, name: str) -> Setting:
        return self._settings[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._settings)

    def __len__(self) -> int:
        return len(self._settings)

    def __repr__(self) -> str:
        return f"Settings({', '.join(self._settings)})"

    def defaults(self) -> dict[str, Any]:
        return {name: copy.deepcopy(s.default) for name, s in self._settings.items()}

    def extend(self, **changes: Setting) -> Settings:
        """A new declaration with settings added or replaced (variants that share most settings)."""
        return Settings(**{**self._settings, **changes})

    def without(self, *names: str) -> Settings:
        return Settings(**{k: v for k, v in self._settings.items() if k not in names})

    def complete(self, given: Mapping[str, Any] | None = None, where: str = "settings") -> dict[str, Any]:
        """Defaults overlaid with `given`; unknown names and invalid values raise `DPClustError`.
        Runtime keys (`RUNTIME_KEYS`) pass through unchecked."""
        given = dict(given or {})
        unknown = sorted(set(given) - set(self._settings) - RUNTIME_KEYS)
        if unknown:
            raise DPClustError(f"{where}: unknown setting(s) {unknown}; known: {sorted(self._settings)}")
        out = self.defaults()
        out.update(copy.deepcopy(given))
        for name, s in self._settings.items():
            err = s.check.error(out[name])
            if err:
                raise DPClustError(f"{where}: setting {name!r} {err} (allowed: {s.check})")
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One row per setting (name, default, allowed, provenance, doc): for docs and `dpclust list`."""
        return [{"setting": name, "default": s.default, "allowed": str(s.check), "provenance": s.source,
                 "doc": s.doc} for name, s in self._settings.items()]


@dataclass(frozen=True)
class Guarantee:
    """What an algorithm (with given settings) guarantees: `kind` is one of KINDS; `note` says why
    (for "not DP as published": what breaks the guarantee); `relation` is the neighbouring relation
    the guarantee is for."""

    kind: str
    note: str = ""
    relation: str = "add/remove one record"

    KINDS = ("ε-DP", "(ε, δ)-DP", "non-private", "not DP as published")

    def __post_init__(self):
        if self.kind not in self.KINDS:
            raise ValueError(f"guarantee kind must be one of {self.KINDS}, got {self.kind!r}")
        if self.kind == "not DP as published" and not self.note:
            raise ValueError("a 'not DP as published' guarantee needs a note saying why")

    @property
    def is_dp(self) -> bool:
        """True for ε-DP and (ε, δ)-DP: only these may report an ε or enter a private comparison."""
        return self.kind in ("ε-DP", "(ε, δ)-DP")

    def as_dict(self) -> dict:
        return {"kind": self.kind, "note": self.note, "relation": self.relation}


PURE = Guarantee("ε-DP")
APPROXIMATE = Guarantee("(ε, δ)-DP")
NON_PRIVATE = Guarantee("non-private", relation="")


def not_dp(reason: str, relation: str = "add/remove one record") -> Guarantee:
    """A variant that is not differentially private as published (or as configured): `reason`."""
    return Guarantee("not DP as published", reason, relation)


OBJECTIVES = ("kmeans", "kmedian")
#: What an algorithm's `epsilon` argument is: "exact" (it spends exactly ε), or "cap" (it spends a
#: data- or settings-dependent total of at most ε, which its result reports, e.g. Lu & Shen's
#: bottom-up budget).
BUDGETS = ("exact", "cap")


def declared(settings: Settings, guarantee: Guarantee | Callable[[Mapping], Guarantee] | None = None,
             objective: str = "kmeans", budget: str = "exact") -> Callable:
    """Decorator: the algorithm receives `settings.complete(given)` (defaults filled, checked) and
    exposes the declaration as `function.settings`; `guarantee` (a `Guarantee`, or a function of the
    complete settings returning one) says what it guarantees, as `function.guarantee(settings)`;
    `objective` is the cost it minimises (kmeans: sum of squared distances, kmedian: of distances);
    `budget` says how it spends its ε (`BUDGETS`)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {BUDGETS}, got {budget!r}")

    def wrap(function):
        @functools.wraps(function)
        def algorithm(X, k, epsilon, delta, rng, settings_given=None):
            return function(X, k, epsilon, delta, rng,
                            settings.complete(settings_given, where=function.__name__))

        declared_algorithm: Any = algorithm  # a function with the declaration as attributes
        declared_algorithm.settings = settings
        declared_algorithm.objective = objective
        declared_algorithm.budget = budget
        if guarantee is not None:
            declared_algorithm.guarantee = guarantee if callable(guarantee) else (lambda _settings: guarantee)
        return declared_algorithm

    return wrap


def guarantee_of(function, settings: Mapping | None = None) -> Guarantee | None:
    """The declared guarantee of an algorithm function under `settings` (None if undeclared)."""
    g = getattr(function, "guarantee", None)
    if g is None:
        return None
    return g(settings or {})


def settings_of(function) -> Settings | None:
    """The declaration of an algorithm function (None for an undeclared one)."""
    return getattr(function, "settings", None)


def resolve_settings(function, overrides: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """The full settings a run uses: the function's declared defaults overlaid with `overrides`
    (a named variant's config, then a run group's params), validated."""
    spec = settings_of(function)
    if spec is None:
        raise DPClustError(f"{where}: {function.__module__}.{function.__name__} declares no settings "
                           "(decorate it with dpclust.settings.declared)")
    return spec.complete(overrides, where=where)
