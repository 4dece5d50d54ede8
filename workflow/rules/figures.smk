# Figures and tables are rendered from the tidy tables only; claims are checked on them.


rule render:
    input:
        f"{RESULTS}/tables/{{paper}}/{{item}}.csv",
    output:
        png=report(
            f"{RESULTS}/figures/{{paper}}/{{item}}.png",
            caption="../report/item.rst",
            category="{paper}",
            subcategory="{item}",
            labels={"paper": "{paper}", "item": "{item}", "file": "figure or table"},
        ),
        pdf=f"{RESULTS}/figures/{{paper}}/{{item}}.pdf",
        md=f"{RESULTS}/figures/{{paper}}/{{item}}.md",
    log:
        "logs/render/{paper}/{item}.log",
    params:
        code=item_code,
        caption=caption_of,
        config_dir=CONFIG_DIR,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/render.py"


rule check_claims:
    input:
        f"{RESULTS}/tables/{{paper}}/{{item}}.csv",
    output:
        html=report(
            f"{RESULTS}/checks/{{paper}}/{{item}}.html",
            caption="../report/checks.rst",
            category="{paper}",
            subcategory="{item}",
            labels={"paper": "{paper}", "item": "{item}", "file": "claim checks"},
        ),
        csv=f"{RESULTS}/checks/{{paper}}/{{item}}.csv",
        md=f"{RESULTS}/checks/{{paper}}/{{item}}.md",
    log:
        "logs/checks/{paper}/{item}.log",
    params:
        code=item_code,
        caption=caption_of,
        config_dir=CONFIG_DIR,
    conda:
        "../envs/dpclust.yaml"
    script:
        "../scripts/check_claims.py"
