# Functions shared by the rules (kept apart from the rules, as `snakemake --lint` asks).


def item_of(w):
    """The planned paper item (dpclust.workflow.ItemTarget) of a job's wildcards."""
    return PLAN.item(w.paper, w.item)


def item_code(w):
    """Hash of the item's functions and the pipeline code: editing them re-renders the item."""
    items_module = CFG["paper_configs"][w.paper].get("module")
    return code_hash(*([items_module] if items_module else []), "dpclust.pipeline")


def caption_of(w):
    return caption_text(item_of(w))


def run_args(w, output):
    """Command-line arguments of `python -m dpclust run` for one planned run job."""
    return shlex.join(PLAN.runs_by_path[output[0]].cli_args())


def sources_of(w):
    return [f"{DATA}/raw/{s}/manifest.json" for s in REGISTRY.sources_for(w.dataset)]
