"""Snakemake script: render one item's figure or table from its tidy table."""
from pathlib import Path

from dpclust.pipeline import render_item
from dpclust.workflow import load_config, plan

sm = snakemake  # noqa: F821 - injected by Snakemake
config = load_config(sm.params.config_dir, base={k: v for k, v in sm.config.items()})
target = plan(config).item(sm.wildcards.paper, sm.wildcards.item)
stem = str(Path(sm.output.png).with_suffix(""))
render_item(config, target, sm.input[0], stem)
with open(sm.log[0], "w") as log:
    print(f"rendered {stem}", file=log)
