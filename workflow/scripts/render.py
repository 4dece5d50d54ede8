"""Snakemake script: render one item's figure or table from its tidy table (spec from params)."""
import json
from pathlib import Path

from dpclust.pipeline.steps import render_item, run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
spec = json.loads(sm.params.spec)
stem = str(Path(sm.output.png).with_suffix(""))
run_logged(sm.log[0], f"rendering {spec['paper']}/{spec['item']}", lambda: render_item(spec, sm.input[0], stem))
print(f"dpclust: {spec['paper']}/{spec['item']} rendered ({spec.get('kind', 'figure')}: {stem}.png)")
