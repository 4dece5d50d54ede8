"""How the audit labels its treatment of a public N, shared by the planner (`audits/plan.py`, which
writes it into each spec's `relation_source`) and the table (`audits/items.py`, which reads it back
from the records). Kept apart from both so the table does not import the workflow."""

#: relation_source of an audit that held the public N fixed (`public_n` = |D|) on both neighbours.
PUBLIC_N_FIXED = "public_n = |D| on both neighbours"
#: The audit variant that lets an N-public algorithm read N from each neighbour (`public_n` unset).
N_FROM_DATA = "n_from_data"
#: relation_source of that variant (a run outside the declared guarantee, which needs N public).
N_FROM_DATA_SOURCE = f"variant {N_FROM_DATA}: N read from each dataset, outside the guarantee (N public)"
