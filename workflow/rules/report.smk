# The HTML report: `snakemake --report report.html` collects every output marked with report()
# in figures.smk (one entry per paper item, captioned from config), under this description.


report: "../report/workflow.rst"
