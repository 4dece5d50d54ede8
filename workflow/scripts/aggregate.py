"""Snakemake script: aggregate one item's run records into its tidy table."""
from dpclust.pipeline import aggregate_item
from dpclust.workflow import load_config, plan

sm = snakemake  # noqa: F821 - injected by Snakemake
with open(sm.log[0], "w") as log:
    config = load_config(sm.params.config_dir, base={k: v for k, v in sm.config.items()})
    target = plan(config).item(sm.wildcards.paper, sm.wildcards.item)
    datasets = {d: f"{config['data_dir']}/processed/{d}.h5" for d in target.datasets}
    table = aggregate_item(config, target, list(sm.input.runs), datasets, sm.output[0])
    print(f"{target.key}: {len(sm.input.runs)} run records -> {len(table)} rows", file=log)
