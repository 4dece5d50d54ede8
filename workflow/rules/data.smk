# Raw data: download from the canonical URL, or copy from a mirror (config data_mirror or
# $DPCLUST_DATA_MIRROR, passed through the environment by the Snakefile); checksums verified,
# written atomically; raw files already present and verified are kept. A source that cannot be had
# gets a manifest with status "unavailable" (one clear line in the log), never a substitute.
# Params: the source's registry entry, the downloader's code, and how the fetch could succeed
# (see the Snakefile: an unavailable source is retried when that changes).


rule fetch_source:
    output:
        f"{DATA}/raw/{{source}}/manifest.json",
    log:
        "logs/fetch/{source}.log",
    benchmark:
        "logs/benchmarks/fetch/{source}.tsv"
    localrule: True
    params:
        raw_dir=lambda w, output: os.path.dirname(os.path.dirname(output[0])),
        entry=lambda w: canonical_json(source_entry(CFG, w.source)),
        code=code_hash("dpclust.data.download"),
        attempt=lambda w: FETCH_ATTEMPTS.get(w.source, ""),
    conda:
        "../envs/dpclust.yaml"
    shell:
        "python3 -m dpclust.pipeline data fetch {wildcards.source} --raw-dir {params.raw_dir}"
        " --entry {params.entry:q} --attempt={params.attempt} 2>&1 | tee {log}"


# A checkpoint: jobs that read a processed file are re-planned once it is (re)built, with its
# content id as a param, so they re-run exactly when its content changed (a parser edit that
# changes nothing re-runs nothing downstream). Params: the dataset's registry entry and the code of
# its parser (or generator) and of the writer.
# The record is `update`: Snakemake keeps it while the job runs (the job replaces it atomically;
# a failed job gets it back). Otherwise Snakemake deletes it when the job starts, and when another
# data checkpoint finishes meanwhile, the re-planning that follows sees this dataset as missing:
# its readers' content id becomes '' and every job downstream of them is marked to re-run, a mark
# Snakemake keeps after the data are back (a race, seen in CI).
checkpoint prepare_dataset:
    input:
        sources_of,
    output:
        record=update(f"{DATA}/processed/{{dataset}}.json"),  # first: the checkpoint target consumers declare
        h5=f"{DATA}/processed/{{dataset}}.h5",
    log:
        "logs/prepare/{dataset}.log",
    benchmark:
        "logs/benchmarks/prepare/{dataset}.tsv"
    localrule: True
    params:
        raw_dir=f"{DATA}/raw",
        entry=lambda w: canonical_json(registry_entry(CFG, w.dataset)),
        code=lambda w: prepare_code(w.dataset),
    conda:
        "../envs/dpclust.yaml"
    shell:
        "python3 -m dpclust.pipeline data prepare {wildcards.dataset} --raw-dir {params.raw_dir}"
        " --out {output.h5} --entry {params.entry:q} 2>&1 | tee {log}"
