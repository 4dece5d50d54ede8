"""Snakemake script: check one item's claims on its tidy table."""
from pathlib import Path

from dpclust.pipeline import check_item
from dpclust.workflow import load_config, plan

sm = snakemake  # noqa: F821 - injected by Snakemake
config = load_config(sm.params.config_dir, base={k: v for k, v in sm.config.items()})
target = plan(config).item(sm.wildcards.paper, sm.wildcards.item)
frame = check_item(config, target, sm.input[0], str(Path(sm.output.csv).with_suffix("")))
with open(sm.log[0], "w") as log:
    print(frame.to_string(), file=log)
