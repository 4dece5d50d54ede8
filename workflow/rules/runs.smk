# One job per (paper, item, run group, data, algorithm), `data` a dataset or the dataset family a
# group runs, cut in batches of FAMILY_BATCH (Su et al.'s 81 synthetic sets: 9 jobs per algorithm): a batch (dpclust.pipeline.run_plan.RunBatch)
# that runs every planned (k, epsilon, seed block) of it one after another in one process, on data
# each dataset loaded once, into one file of records. params.args holds the batch's complete, resolved spec
# (algorithm function, privacy and full settings, registry entry, transform, budget, and the cells'
# k, epsilon and seeds; dpclust.pipeline.planning), the content id of each processed input, and a hash of
# the algorithm's module, every dpclust module it imports and the runner. Editing a setting, a
# dataset or an algorithm re-runs exactly the batches whose spec, data or code changed; editing a
# grid (k, epsilon, repetitions) re-runs the batches of the groups it changes. A racing look's batch
# (`<group>.round<j>/`) runs only the blocks its decision leaves open: they are its spec. Each job is
# single-threaded (BLAS too): Snakemake runs --cores of them side by side.

RUN_CODE = {
    name: code_hash(function_module(entry["function"]), "dpclust.pipeline.run_job")
    for name, entry in CFG["algorithms"].items()
}


rule run:
    input:
        data=lambda w: [data_input(d) for d in run_job(w).datasets],
        # the recorded runs the batch reads (its group's reference_runs: Lu & Shen's baselines take
        # Algorithm 1's total from the runs of the same seed)
        references=lambda w: run_job(w).reference_files,
        # a racing look's job (dpclust.pipeline.racing): the decision naming its open blocks
        decision=run_decision,
    output:
        # the record, and beside it its publishable view (dpclust.pipeline.records.released_only)
        record=f"{RESULTS}/runs/{{paper}}/{{item}}/{{group}}/{{data}}/{{algorithm}}.json",
        released=f"{RESULTS}/runs/{{paper}}/{{item}}/{{group}}/{{data}}/{{algorithm}}.released.json",
    log:
        "logs/runs/{paper}/{item}/{group}/{data}/{algorithm}.log",
    benchmark:
        "logs/benchmarks/runs/{paper}/{item}/{group}/{data}/{algorithm}.tsv"   # wall, CPU, memory of the job
    wildcard_constraints:
        paper=r"[^/]+",
        item=r"[^/]+",
        group=r"[^/]+",
        data=r"[^/]+",
        algorithm=r"[^/]+(?<!\.released)",   # ids hold dots: "X.released.json" is X's view, not a record
    threads: 1
    group:
        run_group  # bundles under profiles/slurm (workflow/rules/cluster.smk); none otherwise
    params:
        # one param (one function call per job): the spec, the data's content id, the code hash
        args=run_args,
        data_dir=DATA,
    resources:
        mem_mb=run_mem_mb if REQUESTS_MATTER else NOMINAL_MEM_MB,
        runtime=run_runtime if REQUESTS_MATTER else NOMINAL_RUNTIME_MIN,
    conda:
        "../envs/dpclust.yaml"
    shell:
        "export OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads};"
        " python3 -m dpclust.pipeline run {params.args} --data-dir {params.data_dir} --allow-unavailable --out {output.record} > {log} 2>&1"
        # a failed job shows the end of its log (its cause), not only where the log is
        " || (tail -n 20 {log} >&2; exit 1)"
