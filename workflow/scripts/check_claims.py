"""Snakemake script: check one item's claims on its tidy table (spec from params)."""
import json
from pathlib import Path

from dpclust.pipeline import check_item

sm = snakemake  # noqa: F821 - injected by Snakemake
frame = check_item(json.loads(sm.params.spec), sm.input[0], str(Path(sm.output.csv).with_suffix("")))
with open(sm.log[0], "w") as log:
    print(frame.to_string(), file=log)
