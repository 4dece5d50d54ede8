# One job per (paper, item, run group, dataset, algorithm, k, epsilon, seed block).
# params.spec is the job's complete, resolved spec (algorithm function, privacy and full settings,
# registry entry, transform, seeds, budget; dpclust.workflow); params.data the content id of the
# processed input; params.code a hash of the algorithm's module and every dpclust module it
# imports, and of the runner. Editing a setting, a grid or an algorithm re-runs exactly the jobs
# whose spec or code changed. Each job is single-threaded (BLAS too): Snakemake runs --cores of
# them side by side.

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
    params:
        spec=lambda w: run_job(w).spec_json,
        h5=lambda w: processed(w.dataset),
        data=lambda w: data_id(w.dataset),
        code=lambda w: RUN_CODE[w.algorithm],
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/dpclust.yaml"
    shell:
        "export OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads};"
        " python3 -m dpclust run --spec {params.spec:q} --data {params.h5} --data-sha256 {params.data:q}"
        " --out {output} > {log} 2>&1"
