# Tidy table per paper item from its run records (and, for dataset tables, processed files).
# params.spec: exactly what the item's aggregate step reads (dpclust.pipeline.run_plan.ItemTarget.step_spec).


rule aggregate:
    input:
        runs=lambda w: item_of(w).run_files,
        # with racing (dpclust.pipeline.racing): the race's final list of the looks' runs, which the job
        # reads too (made by `race_final`, whose inputs they are; one input set whatever the looks ran)
        race=lambda w: race_final_input(item_of(w)),
        # the processed records of every dataset its runs read, not only of those it reads itself:
        # the job then waits for those data checkpoints, after which Snakemake re-plans the runs
        # whose data changed (otherwise it could aggregate their old records first)
        data=lambda w: [data_input(d) for d in sorted({j.dataset for j in item_of(w).runs} | set(item_of(w).data_inputs))],
    output:
        f"{RESULTS}/tables/{{paper}}/{{item}}.csv",
    log:
        "logs/aggregate/{paper}/{item}.log",
    benchmark:
        "logs/benchmarks/aggregate/{paper}/{item}.tsv"
    localrule: True
    params:
        spec=step_spec("aggregate"),
        data=lambda w: canonical_json({d: data_id(d) for d in item_of(w).data_inputs}),
        code=item_code,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/aggregate.py"
