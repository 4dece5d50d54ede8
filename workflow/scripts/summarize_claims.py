"""Snakemake script: one table of every claim check of every item."""
from pathlib import Path

from dpclust.pipeline import summarize_checks

sm = snakemake  # noqa: F821 - injected by Snakemake
table = summarize_checks(list(sm.input), str(Path(sm.output.csv).with_suffix("")))
with open(sm.log[0], "w") as log:
    print(table["result"].value_counts().to_string() if len(table) else "no checks", file=log)
