# One job per (paper, item, run group, dataset, algorithm, k, epsilon, seed block).
# params.args holds the job's complete, resolved spec (algorithm function, privacy and full
# settings, registry entry, transform, seeds, budget; dpclust.workflow), the content id of the
# processed input, and a hash of the algorithm's module, every dpclust module it imports and the
# runner. Editing a setting, a grid, a dataset or an algorithm re-runs exactly the jobs whose spec,
# data or code changed. Each job is single-threaded (BLAS too): Snakemake runs --cores of them side
# by side.

RUN_CODE = {
    name: code_hash(function_module(entry["function"]), "dpclust.runner")
    for name, entry in CFG["algorithms"].items()
}


rule run:
    input:
        data=lambda w: data_input(w.dataset),
    output:
        f"{RESULTS}/runs/{{paper}}/{{item}}/{{group}}/{{dataset}}/{{algorithm}}/k{{k}}_e{{eps}}_b{{block}}.json",
    log:
        "logs/runs/{paper}/{item}/{group}/{dataset}/{algorithm}/k{k}_e{eps}_b{block}.log",
    wildcard_constraints:
        k=r"\d+",
        block=r"\d+",
        eps=r"[0-9.e+-]+|none",
    threads: 1
    group:
        run_group  # bundles under profiles/slurm (workflow/rules/cluster.smk); none otherwise
    params:
        # one param (one function call per job): the spec, the data's content id, the code hash
        args=run_args,
        h5=f"{DATA}/processed/{{dataset}}.h5",
    resources:
        mem_mb=run_mem_mb,
        runtime=run_runtime,
    conda:
        "../envs/dpclust.yaml"
    shell:
        "export OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads};"
        " python3 -m dpclust run {params.args} --data {params.h5} --allow-unavailable --out {output} > {log} 2>&1"
