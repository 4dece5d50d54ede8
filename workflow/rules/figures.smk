# Figures and tables are rendered from the tidy tables only; claims are checked on them.
# params.spec: exactly what each step reads (dpclust.pipeline.run_plan.ItemTarget.step_spec): editing a
# caption re-renders only that item, editing a claim threshold re-checks only that item.


rule render:
    input:
        f"{RESULTS}/tables/{{paper}}/{{item}}.csv",
    output:
        png=report(
            f"{RESULTS}/figures/{{paper}}/{{item}}.png",
            caption="../report/item.rst",
            category="{paper}",
            subcategory="{item}",
            labels={"paper": "{paper}", "item": "{item}", "file": "figure or table"},
        ),
        pdf=f"{RESULTS}/figures/{{paper}}/{{item}}.pdf",
        md=f"{RESULTS}/figures/{{paper}}/{{item}}.md",
        html=report(
            f"{RESULTS}/figures/{{paper}}/{{item}}.html",
            caption="../report/item.rst",
            category="{paper}",
            subcategory="{item}",
            labels={"paper": "{paper}", "item": "{item}", "file": "table (sortable)"},
        ),
    log:
        "logs/render/{paper}/{item}.log",
    benchmark:
        "logs/benchmarks/render/{paper}/{item}.tsv"
    localrule: True
    params:
        spec=step_spec("render"),
        caption=caption_of,
        code=render_code,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/render.py"


rule check_claims:
    input:
        f"{RESULTS}/tables/{{paper}}/{{item}}.csv",
    output:
        html=report(
            f"{RESULTS}/checks/{{paper}}/{{item}}.html",
            caption="../report/checks.rst",
            category="{paper}",
            subcategory="{item}",
            labels={"paper": "{paper}", "item": "{item}", "file": "claim checks"},
        ),
        csv=f"{RESULTS}/checks/{{paper}}/{{item}}.csv",
        md=f"{RESULTS}/checks/{{paper}}/{{item}}.md",
        # the states of the paper claims' cells: what a replication decision settles cell by cell
        cells=f"{RESULTS}/checks/{{paper}}/{{item}}.cells.json",
        # the paper claims at the sensitivity's alternatives with runs of their own: replicated too
        alternatives=f"{RESULTS}/checks/{{paper}}/{{item}}.alternatives.json",
    log:
        "logs/checks/{paper}/{item}.log",
    benchmark:
        "logs/benchmarks/checks/{paper}/{item}.tsv"
    localrule: True
    params:
        spec=step_spec("checks"),
        caption=checks_caption_of,
        code=item_code,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/check_claims.py"


rule summarize_claims:
    input:
        checks=PLAN.check_tables,
        # each replicated item's last decision (workflow/rules/replicate.smk): its claims' verdicts
        # after the looks they needed
        replications=lambda w: [final_decision(target) for target in PLAN.replicated],
        # every processed record (ancient: it re-runs nothing by itself): the summary then waits for
        # all data checkpoints, after which Snakemake re-plans the items whose data changed, so it
        # cannot be written before one of their checks is (as the aggregate rule does for its runs)
        data=[data_input(d) for d in PLAN.datasets],
    output:
        html=report(
            f"{PLAN.summary_stem}.html",
            caption="../report/summary.rst",
            category="All claims (summary)",
            labels={"paper": "all", "item": "claims", "file": "summary of claim checks"},
        ),
        csv=f"{PLAN.summary_stem}.csv",
        md=f"{PLAN.summary_stem}.md",
    log:
        "logs/checks/summary.log",
    benchmark:
        "logs/benchmarks/checks/summary.tsv"
    localrule: True
    params:
        code=code_hash("dpclust.pipeline.steps", "dpclust.pipeline.replication", exclude=DRAWS_NOTHING),
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/summarize_claims.py"


# The results page (dpclust.pipeline.results_page): the papers' verdicts per paper, the leaderboard's
# winners and the audit, generated from this run's own tables.
rule results_page:
    input:
        summary=f"{PLAN.summary_stem}.csv",
        **PLAN.results_page_inputs(),
    output:
        PLAN.results_page,
    log:
        "logs/checks/results_page.log",
    benchmark:
        "logs/benchmarks/checks/results_page.tsv"
    localrule: True
    params:
        preset=CFG.get("preset", "full"),
        scope=run_scope(CFG),   # the papers or items a part of the protocol was limited to
        code=code_hash("dpclust.pipeline.results_page", exclude=DRAWS_NOTHING),
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/results_page.py"
