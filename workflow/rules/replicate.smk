# Adaptive replication (dpclust.pipeline.replication; docs/VERDICTS.md, "Replication"): the claims
# of an item that declares `replication` are decided in looks. Look 0 is the item's own checks (at
# their share of α); after each look the checkpoint `replication_decision` decides whether the next
# runs: only then are that look's run batches (planned in advance, with their own seeds) requested,
# by `replication_look`, which aggregates and checks the item on all its runs so far. A finished
# look is an ordinary output: a second invocation runs no round again.


rule replication_look:
    input:
        runs=lambda w: [*item_of(w).run_files, *added_files(item_of(w), look_of(w))],
        data=lambda w: [data_input(d) for d in sorted({j.dataset for j in item_of(w).runs} | set(item_of(w).data_inputs))],
        previous=lambda w: f"{RESULTS}/replication/{w.paper}/{w.item}/decision{look_of(w) - 1}.json",
    output:
        table=f"{RESULTS}/replication/{{paper}}/{{item}}/look{{look}}.table.csv",
        checks=f"{RESULTS}/replication/{{paper}}/{{item}}/look{{look}}.csv",
        md=f"{RESULTS}/replication/{{paper}}/{{item}}/look{{look}}.md",
        html=f"{RESULTS}/replication/{{paper}}/{{item}}/look{{look}}.html",
        cells=f"{RESULTS}/replication/{{paper}}/{{item}}/look{{look}}.cells.json",
        alternatives=f"{RESULTS}/replication/{{paper}}/{{item}}/look{{look}}.alternatives.json",
    wildcard_constraints:
        look=r"[1-9][0-9]*",
    log:
        "logs/replication/{paper}/{item}/look{look}.log",
    benchmark:
        "logs/benchmarks/replication/{paper}/{item}/look{look}.tsv"
    localrule: True
    params:
        aggregate=step_spec("aggregate"),
        checks=look_checks_spec,
        data=lambda w: canonical_json({d: data_id(d) for d in item_of(w).data_inputs}),
        code=item_code,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/replication_look.py"


checkpoint replication_decision:
    input:
        checks=lambda w: (f"{RESULTS}/checks/{w.paper}/{w.item}.csv" if look_of(w) == 0
                          else f"{RESULTS}/replication/{w.paper}/{w.item}/look{w.look}.csv"),
        cells=lambda w: (f"{RESULTS}/checks/{w.paper}/{w.item}.cells.json" if look_of(w) == 0
                         else f"{RESULTS}/replication/{w.paper}/{w.item}/look{w.look}.cells.json"),
        alternatives=lambda w: (f"{RESULTS}/checks/{w.paper}/{w.item}.alternatives.json" if look_of(w) == 0
                                else f"{RESULTS}/replication/{w.paper}/{w.item}/look{w.look}.alternatives.json"),
        previous=lambda w: ([] if look_of(w) == 0
                            else [f"{RESULTS}/replication/{w.paper}/{w.item}/decision{look_of(w) - 1}.json"]),
    output:
        f"{RESULTS}/replication/{{paper}}/{{item}}/decision{{look}}.json",
    wildcard_constraints:
        look=r"[0-9]+",
    log:
        "logs/replication/{paper}/{item}/decision{look}.log",
    benchmark:
        "logs/benchmarks/replication/{paper}/{item}/decision{look}.tsv"
    localrule: True
    params:
        spec=replication_spec,
        look=look_of,
        code=code_hash("dpclust.pipeline.replication", exclude=DRAWS_NOTHING),
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/replication_decision.py"


# Racing (dpclust.pipeline.racing; docs/VERDICTS.md, "Replication"): the cells of an item that
# declares `racing` run in looks. After each look `race_look` replays the race on the runs so far
# and names the cells still open and their contenders; the checkpoint `race_decision` publishes it,
# and only those (cell, method) blocks of the next look (planned in advance, with their own seeds)
# are requested, by `race_final`, which lists them for the items that read the runs; one run job per
# (group, data, algorithm) of a look runs the open blocks of its batch (`run_job`). Everything lives
# under a hash of all the race depends on (`race_fingerprint`): an edit that changes a run races again
# from look 0 under a new directory (a job waiting on a checkpoint is re-planned only when its own
# output is missing, so the items wait on the list, an ordinary output), and a finished look is an
# ordinary output: a second invocation runs none again. `rule all` lists every look, decision and look
# run record (`race_intermediates`): a deleted or damaged one is made again (a look record alone).
RACE_CODE = code_hash("dpclust.pipeline.racing", exclude=DRAWS_NOTHING)


rule race_look:
    input:
        runs=lambda w: [*item_of(w).run_files, *race_files(item_of(w), race_look_of(w))],
        data=lambda w: [data_input(d) for d in sorted({j.dataset for j in item_of(w).runs})],
    output:
        f"{RESULTS}/racing/{{paper}}/{{item}}/{{fp}}/look{{look}}.json",
    wildcard_constraints:
        fp=r"[0-9a-f]{16}",
        look=r"[0-9]+",
    log:
        "logs/racing/{paper}/{item}/{fp}/look{look}.log",
    benchmark:
        "logs/benchmarks/racing/{paper}/{item}/{fp}/look{look}.tsv"
    localrule: True
    params:
        spec=step_spec("aggregate"),
        look=race_look_of,
        code=item_code,
        race_code=RACE_CODE,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/race_look.py"


rule race_final:
    input:
        # ancient: a decision made again with the same content lists the same runs (a different one
        # changes the runs, which re-run this)
        decisions=lambda w: [ancient(path) for path in race_decisions(item_of(w))],
        runs=lambda w: race_files(item_of(w)),
    output:
        f"{RESULTS}/racing/{{paper}}/{{item}}/{{fp}}/final.json",
    wildcard_constraints:
        fp=r"[0-9a-f]{16}",
    log:
        "logs/racing/{paper}/{item}/{fp}/final.log",
    benchmark:
        "logs/benchmarks/racing/{paper}/{item}/{fp}/final.tsv"
    localrule: True
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/race_final.py"


checkpoint race_decision:
    input:
        f"{RESULTS}/racing/{{paper}}/{{item}}/{{fp}}/look{{look}}.json",
    output:
        f"{RESULTS}/racing/{{paper}}/{{item}}/{{fp}}/decision{{look}}.json",
    wildcard_constraints:
        fp=r"[0-9a-f]{16}",
        look=r"[0-9]+",
    log:
        "logs/racing/{paper}/{item}/{fp}/decision{look}.log",
    benchmark:
        "logs/benchmarks/racing/{paper}/{item}/{fp}/decision{look}.tsv"
    localrule: True
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/race_publish.py"
