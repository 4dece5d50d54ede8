"""Su, Cao, Li, Bertino, Jin. "Differentially Private k-Means Clustering", CODASPY 2016.

Algorithms (each a `dpclust.api` function; its sklearn-style estimator is in `dpclust.estimators`):

* `dplloyd.dplloyd`   DPLloyd (§4.1.1), budget allocation strategies uniform / geometric / su_tops;
* `gupt.gkm`          GkM and GkM-3K (§4.1.2, Eq. 3), plus `gupt.gkm_analysis` for Figure 3;
* `privgene.pgkm`     PGkM (§4.1.3), plus the non-private `privgene.gene` for Figure 4;
* `eugkm.eugkm`       EUGkM (§4.2, §4.2.1, Eq. 4);
* `hybrid.hybrid`     the hybrid approach (§6.3, Inequality 15);
* `lloyd.lloyd`       the non-private baseline on the same 30 sphere-packing initialisations (§5.1).

`guarantees` says what each algorithm guarantees and for which neighbouring relation (DPLloyd with
``init: random_points`` is not DP). `items` holds the aggregate/render/check functions of Table 1 and
Figures 1-7 (one module per item).
"""
