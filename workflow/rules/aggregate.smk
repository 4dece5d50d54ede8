# Tidy table per paper item from its run records (and, for dataset tables, processed files).


rule aggregate:
    input:
        runs=lambda w: [job.path for job in item_of(w).runs],
        data=lambda w: [f"{DATA}/processed/{d}.h5" for d in item_of(w).cfg.get("datasets") or []],
    output:
        f"{RESULTS}/tables/{{paper}}/{{item}}.csv",
    log:
        "logs/aggregate/{paper}/{item}.log",
    params:
        code=item_code,
        config_dir=CONFIG_ARG,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/aggregate.py"
