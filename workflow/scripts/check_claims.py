"""Snakemake script: check one item's claims on its tidy table (spec from params)."""
import json
from pathlib import Path

from dpclust.pipeline.steps import check_item, run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
spec = json.loads(sm.params.spec)


def step():
    frame = check_item(spec, sm.input[0], str(Path(sm.output.csv).with_suffix("")))
    print(frame.to_string())
    return frame


frame = run_logged(sm.log[0], f"checking the claims of {spec['paper']}/{spec['item']}", step)
counts = frame["result"].value_counts().to_dict() if len(frame) else {}
print(f"dpclust: {spec['paper']}/{spec['item']} claims: "
      + (", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"))
