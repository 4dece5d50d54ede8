# Default target: every table, figure and claim check of every enabled paper.


rule all:
    default_target: True
    input:
        [path for item in PLAN.items for path in item.outputs],
