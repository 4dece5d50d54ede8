# Raw data: download from the canonical URL, or copy from a mirror (config data_mirror or
# $DPCLUST_DATA_MIRROR, passed through the environment by the Snakefile); checksums verified,
# written atomically; raw files already present and verified are kept. A source that cannot be had
# gets a manifest with status "unavailable" (one clear line in the log), never a substitute.


rule fetch_source:
    output:
        f"{DATA}/raw/{{source}}/manifest.json",
    log:
        "logs/fetch/{source}.log",
    params:
        raw_dir=lambda w, output: Path(output[0]).parent.parent,
        registry=os.path.join(CONFIG_ARG, "datasets.yaml"),
        code=code_hash("dpclust.data.download"),
    conda:
        "../envs/dpclust.yaml"
    shell:
        "python3 -m dpclust data fetch {wildcards.source} --raw-dir {params.raw_dir}"
        " --registry {params.registry} 2>&1 | tee {log}"


rule prepare_dataset:
    input:
        sources_of,
    output:
        f"{DATA}/processed/{{dataset}}.h5",
    log:
        "logs/prepare/{dataset}.log",
    params:
        raw_dir=lambda w, output: Path(output[0]).parent.parent / "raw",
        registry=os.path.join(CONFIG_ARG, "datasets.yaml"),
        code=code_hash("dpclust.data"),
    conda:
        "../envs/dpclust.yaml"
    shell:
        "python3 -m dpclust data prepare {wildcards.dataset} --raw-dir {params.raw_dir}"
        " --out {output} --registry {params.registry} 2>&1 | tee {log}"
