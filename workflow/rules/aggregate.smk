# Tidy table per paper item from its run records (and, for dataset tables, processed files).


def item_of(w):
    return PLAN.item(w.paper, w.item)


def item_code(w):
    items_module = CFG["paper_configs"][w.paper].get("module")
    return code_hash(*([items_module] if items_module else []), "dpclust.pipeline")


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
        config_dir=CONFIG_DIR,
    script:
        "../scripts/aggregate.py"
