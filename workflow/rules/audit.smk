# Privacy audit as a result: one job per (algorithm, neighbouring design), planned by
# dpclust.pipeline.audit_plan.audit_jobs from an item's `audit:` section (config/papers/audit.yaml).
# params.args holds the job's complete spec (resolved algorithm and settings, design, n, k,
# neighbouring relation, samples, seed, ε, δ) and a hash of the algorithm's module, every dpclust
# module it imports and the audit runner (dpclust.pipeline.audit_job): an edit re-runs exactly the audits
# whose spec or code changed. The audit items' tables are aggregated from these records (rule
# audit_aggregate, which takes precedence over `aggregate` for those items only); render and
# checks are the ordinary rules. The functions are in dpclust.pipeline.audit_rules.
from dpclust.pipeline.audit_labels import VARIANTS
from dpclust.pipeline.audit_rules import audit_rule_functions

AUDIT = audit_rule_functions(PLAN, RESULTS, CFG["algorithms"])


rule audit_run:
    output:
        f"{RESULTS}/audits/{{algorithm}}/{{design}}.json",
    log:
        "logs/audits/{algorithm}/{design}.log",
    benchmark:
        "logs/benchmarks/audits/{algorithm}/{design}.tsv"
    wildcard_constraints:
        algorithm=r"[A-Za-z0-9_]+\.[A-Za-z0-9_]+",
        design=rf"[a-z_]+(\.({'|'.join(VARIANTS)}))?",   # <design>.<variant>: an audit variant
    threads: 1
    params:
        args=AUDIT.args,
    resources:
        mem_mb=2000,
        runtime=120,
    conda:
        "../envs/dpclust.yaml"
    shell:
        "export OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads};"
        " python3 -m dpclust.pipeline audit {params.args} --out {output} > {log} 2>&1"
        " || (tail -n 20 {log} >&2; exit 1)"


# Exactly the audit items' tables ("<paper>/<item>" keys), from their audit records.
rule audit_aggregate:
    input:
        runs=AUDIT.records,
        data=[],
    output:
        f"{RESULTS}/tables/{{audit_key}}.csv",
    log:
        "logs/aggregate/{audit_key}.log",
    benchmark:
        "logs/benchmarks/aggregate/{audit_key}.tsv"
    wildcard_constraints:
        audit_key=AUDIT.keys,
    localrule: True
    params:
        spec=AUDIT.spec,
        code=AUDIT.code,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/aggregate.py"


ruleorder: audit_aggregate > aggregate
