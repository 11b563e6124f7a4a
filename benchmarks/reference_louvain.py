"""A user's own short script: read a dataset with pandas, build w_n with SciPy, one igraph Louvain.

The yardstick of ``benchmarks/analysis_speed.py`` (part "against a short script"):
what someone who knows pandas and igraph would write instead of the toolkit,
doing only one flat clustering.  With ``--every-n`` it clusters every
``w_n``, n = 1 .. N, and scores each against the hosts' labels with
scikit-learn's NMI: the user's version of ``tomography evaluate``'s
convergence table.  Run::

    .venv/bin/python benchmarks/reference_louvain.py DATASET [--every-n]
"""

import random
import sys

import igraph
import numpy as np
import pandas as pd
from scipy import sparse

d = sys.argv[1]
hosts = pd.read_csv(f"{d}/hosts.csv").sort_values("host")
t = pd.read_csv(f"{d}/transfers.csv")
idx = pd.Index(hosts["host"])
t["r"], t["s"] = idx.get_indexer(t["receiver"]), idx.get_indexer(t["sender"])
n, ids = len(idx), sorted(t["iteration"].unique())
for its in range(1, len(ids) + 1) if "--every-n" in sys.argv else [len(ids)]:
    u = t[t["iteration"] <= ids[its - 1]]
    C = sparse.csr_array((u["blocks"].to_numpy(float), (u["r"], u["s"])), shape=(n, n))
    W = sparse.triu((C + C.T) / its, 1).tocoo()
    g = igraph.Graph(n=n, edges=np.column_stack([W.row, W.col]).tolist())
    random.seed(0)
    p = g.community_multilevel(weights=W.data.tolist())
    print(its, len(p), p.modularity)
    if "--every-n" in sys.argv:
        from sklearn.metrics import normalized_mutual_info_score

        print(normalized_mutual_info_score(hosts["label"], p.membership))
