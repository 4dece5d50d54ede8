# One job per (paper, item, run group, dataset, algorithm, k, epsilon, seed block).
# params.code hashes the algorithm's module and every dpclust module it imports, so editing an
# algorithm re-runs exactly the jobs that use it; a fresh checkout of the same code re-runs nothing.
# Each job is single-threaded (BLAS too): Snakemake runs --cores of them side by side.

RUN_CODE = {
    name: code_hash(function_module(entry["function"]), "dpclust.runner")
    for name, entry in CFG["algorithms"].items()
}


rule run:
    input:
        f"{DATA}/processed/{{dataset}}.h5",
    output:
        f"{RESULTS}/runs/{{paper}}/{{item}}/{{group}}/{{dataset}}/{{algorithm}}/k{{k}}_e{{eps}}_b{{block}}.json",
    log:
        "logs/runs/{paper}/{item}/{group}/{dataset}/{algorithm}/k{k}_e{eps}_b{block}.log",
    wildcard_constraints:
        k=r"\d+",
        block=r"\d+",
        eps=r"[0-9.e+-]+|none",
    threads: 1
    params:
        args=run_args,
        config_dir=CONFIG_ARG,
        base_seed=CFG["base_seed"],
        code=lambda w: RUN_CODE[w.algorithm],
    resources:
        mem_mb=run_mem_mb,
        runtime=run_runtime,
    conda:
        "../envs/dpclust.yaml"
    shell:
        "export OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads};"
        " python3 -m dpclust run {params.args} --data {input} --config-dir {params.config_dir}"
        " --base-seed {params.base_seed} --out {output} > {log} 2>&1"
