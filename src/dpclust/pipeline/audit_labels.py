"""How the audit labels its variants, shared by the planner (`audits/plan.py`, which writes them into
each spec) and the table (`audits/items.py`, which reads them back from the records). Kept apart
from both so the table does not import the workflow."""

#: relation_source of an audit that held the public N fixed (`public_n` = |D|) on both neighbours.
PUBLIC_N_FIXED = "public_n = |D| on both neighbours"
#: The audit variant that lets an N-public algorithm read N from each neighbour (`public_n` unset).
N_FROM_DATA = "n_from_data"
#: relation_source of that variant (a run outside the declared guarantee, which needs N public).
N_FROM_DATA_SOURCE = f"variant {N_FROM_DATA}: N read from each dataset, outside the guarantee (N public)"
#: The audit variant run at settings chosen for the attack's power (fewest compositions): the record's
#: `variant` is {"name": POWER, "settings": the overridden settings}. Within the guarantee, which must
#: hold at every setting.
POWER = "power"
#: Every audit variant (the `<design>.<variant>.json` paths of the audit rule).
VARIANTS = (N_FROM_DATA, POWER)
