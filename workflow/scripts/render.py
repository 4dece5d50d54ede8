"""Snakemake script: render one item's figure or table from its tidy table (spec from params)."""
import json
from pathlib import Path

from dpclust.pipeline import render_item

sm = snakemake  # noqa: F821 - injected by Snakemake
stem = str(Path(sm.output.png).with_suffix(""))
render_item(json.loads(sm.params.spec), sm.input[0], stem)
with open(sm.log[0], "w") as log:
    print(f"rendered {stem}", file=log)
