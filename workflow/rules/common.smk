# Functions shared by the rules (kept apart from the rules, as `snakemake --lint` asks).
# Every param below is a function of the wildcards only: Snakemake does not track params derived
# from input or output files, so a job's spec must never be looked up by its output path.
import hashlib
import json
import shlex
from pathlib import Path

from snakemake.exceptions import IncompleteCheckpointException
from snakemake.io import checkpoint_target

from dpclust.pipeline import replication
from dpclust.pipeline.codehash import DRAWS_NOTHING, code_hash
from dpclust.data.parsers import parser_module
from dpclust.data.store import content_id, intact
from dpclust.pipeline.integrity import intact as intermediate_intact
from dpclust.pipeline.itemkit import runs_note
from dpclust.pipeline.steps import caption_text
from dpclust.pipeline.configuration import canonical_json, registry_entry, source_entry
from dpclust.pipeline.resolve import function_module
from dpclust.pipeline.run_plan import run_path


def item_of(w):
    """The planned paper item (dpclust.pipeline.run_plan.ItemTarget) of a job's wildcards."""
    return PLAN.item(w.paper, w.item)


def item_code(w):
    """Hash of the item's functions and the step runner, without the figures' style
    (dpclust.pipeline.style): editing them re-runs the item's aggregate and checks steps."""
    items_module = item_of(w).module
    return code_hash(*([items_module] if items_module else []), "dpclust.pipeline.steps", exclude=DRAWS_NOTHING)


def render_code(w):
    """`item_code` with the figures' style: a style edit re-runs render jobs only."""
    items_module = item_of(w).module
    return code_hash(*([items_module] if items_module else []), "dpclust.pipeline.steps")


def step_spec(step):
    """Param function: exactly what the item's `step` reads (dpclust.pipeline.run_plan.ItemTarget.step_spec)."""
    return lambda w: item_of(w).step_spec_json(step)


def caption_of(w):
    """The item's caption and one line on what was run under the preset (repetitions and grids)."""
    target = item_of(w)
    note = runs_note(target.step_spec("render"))
    return caption_text(target.cfg) + (f" *{note}.*" if note else "")


def checks_caption_of(w):
    cfg = item_of(w).cfg
    return f"**{cfg['title']}** ({cfg['reproduces']})"


def run_job(w):
    """The run batch (dpclust.pipeline.run_plan.RunBatch) of a `run` job's wildcards; for a racing or
    replication look's file, the blocks of it that the decision before the look leaves open."""
    path = run_path(RESULTS, w.paper, w.item, w.group, w.data, w.algorithm)
    raced = PLAN.race_batches.get(path)
    if raced is not None:
        owner, look = raced
        return owner.race_look_batch(look, path, read_json(race_decision_path(owner, look - 1))["open"])
    replicated = PLAN.replication_batches.get(path)
    if replicated is not None:
        target, look = replicated
        return target.replication_look_batch(look, path, read_json(replication_decision_file(target, look - 1)))
    return PLAN.run(path)


def replication_decision_file(target, look):
    """The decision after replication look `look` of `target` (made by the checkpoint before any run
    job of the next look is asked for)."""
    return f"{RESULTS}/replication/{target.paper}/{target.item}/decision{look}.json"


def run_decision(w):
    """[the decision a racing or replication look's run job takes its blocks from], else []. Ancient: a
    decision made again with the same content (its look record was rebuilt) re-runs no look; one that
    names other blocks changes the job's spec (params.args), which re-runs it."""
    path = run_path(RESULTS, w.paper, w.item, w.group, w.data, w.algorithm)
    raced = PLAN.race_batches.get(path)
    if raced:
        return [ancient(race_decision_path(raced[0], raced[1] - 1))]
    replicated = PLAN.replication_batches.get(path)
    return [ancient(replication_decision_file(replicated[0], replicated[1] - 1))] if replicated else []


def run_args(w):
    """The batch's command-line arguments: its complete spec (dpclust.pipeline.planning), the content id of
    each processed input and the hash of the code it runs; one param, so that a change of any re-runs it."""
    return batch_args(run_job(w))


def batch_args(batch):
    ids = canonical_json({d: data_id(d) for d in batch.datasets})
    refs = "".join(f" {shlex.quote(path)}" for path in batch.reference_files)
    return (f"--spec {shlex.quote(batch.spec_json)} --data-sha256 {shlex.quote(ids)}"
            f" --code-hash {RUN_CODE[batch.algorithm]}" + (f" --reference-records{refs}" if refs else ""))


# ------------------------------------------------------------------------------------- data
def processed(dataset):
    return f"{DATA}/processed/{dataset}.h5"


def processed_record(dataset):
    return f"{DATA}/processed/{dataset}.json"


def _checked(dataset):
    """The record of the processed file of `dataset`. A processed file that no longer matches the
    record written with it (truncated, replaced, altered) is moved aside here, once, with one line
    saying so, so that it is rebuilt like a missing one (`rule all` lists every processed file)."""
    if dataset not in _CHECKED:
        path = processed(dataset)
        ok, why = intact(path)
        if not ok and why != "missing":
            print(f"dpclust: {path} {why}: it will be rebuilt", file=sys.stderr)
            if not workflow.dryrun:
                os.replace(path, f"{path}.corrupt")
        _CHECKED.add(dataset)
    return processed_record(dataset)


_CHECKED = set()


def checked_intermediate(path):
    """The path of a run or audit record or a planned output (`rule all` lists each). One that is not
    whole (`dpclust.pipeline.integrity.intact`: a record, table, figure or report page cut short) is moved aside here to
    `<path>.corrupt`, with one line saying so, so that it is made again like a deleted one (a
    record: same seeds, same released outputs) and what reads it follows."""
    ok, why = intermediate_intact(path)
    if not ok and why != "missing":
        print(f"dpclust: {path} {why}: it will be made again", file=sys.stderr)
        if not workflow.dryrun:
            os.replace(path, f"{path}.corrupt")
    return path


def data_input(dataset):
    """A run's or item's processed input, content-addressed. The declared input is the file's
    record (data/processed/<dataset>.json, written with the .h5 by the `prepare_dataset`
    checkpoint; jobs read the .h5 beside it), `ancient`, so that rebuilding a file re-runs nothing
    by itself; the content id (param) decides. When a checkpoint finishes, Snakemake re-plans the
    jobs that read its output, so they see the new content id in the same invocation: a parser or
    registry edit that changes the data re-runs exactly the jobs that read it, one that changes
    nothing re-runs nothing. (A dry run therefore lists a pending data job but not yet the jobs
    that its new content will re-run.)"""
    return ancient(_checked(dataset))


def data_id(dataset):
    """Content id of a processed file (sha256 of X, or 'unavailable:<reason hash>'; '' if missing)."""
    _checked(dataset)
    return content_id(processed(dataset))


def prepare_code(dataset):
    """Code a dataset's preparation runs: its parser (or the synthetic generators) and the writer."""
    entry = REGISTRY.datasets[dataset]
    reader = "dpclust.data.synthetic" if entry["kind"] == "synthetic" else parser_module(entry["parser"])
    return code_hash(reader, "dpclust.data.processed")


def sources_of(w):
    return [f"{DATA}/raw/{s}/manifest.json" for s in REGISTRY.sources_for(w.dataset)]


# ------------------------------------------------------------------------------ replication
# (workflow/rules/replicate.smk; dpclust.pipeline.replication)
def look_of(w):
    look = int(w.look)
    if not 0 <= look <= len(item_of(w).rounds):
        raise ValueError(f"{w.paper}/{w.item}: no replication look {look}")
    return look


def replication_spec(w):
    """What the checkpoint reads: the declaration, the looks' levels and priced CPU (an edit re-decides)."""
    return canonical_json(item_of(w).replication_spec())


def look_checks_spec(w):
    """The item's checks spec at the look's level."""
    return canonical_json(item_of(w).step_spec("checks", look=look_of(w)))


def decision_path(target, look):
    """The decision after `look`, once the checkpoint has made it (else Snakemake schedules it first)."""
    return checkpoints.replication_decision.get(paper=target.paper, item=target.item, look=look).output[0]


def added_files(target, look):
    """The run files looks 1 .. `look` added: each look's blocks of the claims (and cells) open before it."""
    files = []
    for i in range(1, look + 1):
        decision = replication.read_decision(decision_path(target, i - 1))
        files += target.look_files(i, decision["open"], decision.get("open_cells"))
    return list(dict.fromkeys(files))


def final_decision(target):
    """The last decision file of a replicated item: its looks are followed, checkpoint by checkpoint,
    until one says that no next look runs."""
    look = 0
    while True:
        path = decision_path(target, look)
        if not replication.read_decision(path)["next"]:
            return path
        look += 1


# ------------------------------------------------------------------------------ racing
# (workflow/rules/replicate.smk; dpclust.pipeline.racing)
def race_look_of(w):
    look = int(w.look)
    target = item_of(w)
    if target.race_owner != target.item or not 0 <= look <= len(target.race_rounds):
        raise ValueError(f"{w.paper}/{w.item}: no racing look {look}")
    return look


def race_fingerprint(owner):
    """The directory of a race's decisions: a hash of all they depend on, i.e. every initial run
    batch's arguments (spec, the data's content id, the code it runs; the looks' batches follow from
    them and the decisions) and the race's own spec and code. An edit that changes a run re-races
    under a new directory: a decision is never read stale, and one that stands is never made again.
    Kept per state of the data (a data checkpoint may change it during the invocation): every racing
    run job asks for it."""
    key = (owner.key, tuple(data_id(d) for d in sorted({job.dataset for job in owner.runs})))
    if key not in _FINGERPRINTS:
        parts = [batch_args(PLAN.run(path)) for path in owner.run_files]
        # the code a decision depends on: the race, the board's aggregate (its item module) and the
        # records' reader; not the claims engine or the check step, whose edits change no decision
        parts += [owner.step_spec_json("aggregate"), RACE_CODE,
                  code_hash(owner.module, "dpclust.pipeline.integrity", exclude=DRAWS_NOTHING)]
        _FINGERPRINTS[key] = hashlib.sha256(canonical_json(parts).encode()).hexdigest()[:16]
    return _FINGERPRINTS[key]


_FINGERPRINTS = {}


def race_final_path(target):
    """The race's list of the looks' run files that ran (rule `race_final`), under the hash of all it
    depends on: missing, hence made, whenever the race must be run (again)."""
    owner = PLAN.item(target.paper, target.race_owner)
    return f"{RESULTS}/racing/{owner.paper}/{owner.item}/{race_fingerprint(owner)}/final.json"


def race_final_input(target):
    """[the race's final list] for an item whose runs are raced, else []; checked before the item's
    job is planned on it (`checked_intermediate`)."""
    return [checked_intermediate(race_final_path(target))] if target.race else []


def race_decision_path(owner, look):
    """The race's decision after `look`, once the checkpoint has made it (else Snakemake makes it first).
    The decision and its look record are checked first (`checked_intermediate`): every reader of a
    decision asks here, so a damaged one is made again before any job is planned on it."""
    fp = race_fingerprint(owner)
    for name in (f"look{look}", f"decision{look}"):
        checked_intermediate(f"{RESULTS}/racing/{owner.paper}/{owner.item}/{fp}/{name}.json")
    made = checkpoints.race_decision.get(paper=owner.paper, item=owner.item, fp=fp, look=look)
    if not os.path.exists(made.output[0]):
        # being made again (its job removed it first) while another checkpoint's finish re-plans the
        # readers: Snakemake still counts it made, so wait for it as for one never made
        raise IncompleteCheckpointException(made.rule, checkpoint_target(made.output[0]))
    return made.output[0]


def read_json(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def race_files(target, look=None):
    """The run files the racing looks added to the runs `target` reads, through `look` (default: every
    look that ran): each look's batches of the contenders its previous decision names."""
    if not target.race:
        return []
    owner = PLAN.item(target.paper, target.race_owner)
    files = []
    for j in range(1, (len(owner.race_rounds) if look is None else look) + 1):
        decision = read_json(race_decision_path(owner, j - 1))
        if not decision["next"]:
            break
        files += owner.race_look_files(j, decision["open"])
    return [checked_intermediate(path) for path in dict.fromkeys(files)]


def race_decisions(target):
    """Every decision the race made, through the first that runs no next look."""
    owner = PLAN.item(target.paper, target.race_owner)
    out = []
    for j in range(len(owner.race_rounds) + 1):
        out.append(race_decision_path(owner, j))
        if not read_json(out[-1])["next"]:
            break
    return out


def race_intermediates(_):
    """The files of the races that `rule all` lists (their looks, decisions, look run records with
    their released views, and final lists), each checked before it is read (`checked_intermediate`)
    so that a deleted or damaged one is made again. A look record made again re-runs nothing after it."""
    out = []
    for owner in PLAN.race_owners:
        out += race_final_input(owner)
        for j in range(len(owner.race_rounds) + 1):
            decision = race_decision_path(owner, j)
            out += [str(Path(decision).with_name(f"look{j}.json")), decision]
            if not read_json(decision)["next"]:
                break
        records = race_files(owner)
        out += records + [checked_intermediate(str(released_path(path))) for path in records]
    return out
