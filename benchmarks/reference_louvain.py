"""A user's own short script: read a dataset with pandas, build w_n with SciPy, one igraph Louvain.

The yardstick of ``benchmarks/analysis.py`` (part "against a short script"):
what someone who knows pandas and igraph would write instead of the toolkit,
doing only one flat clustering.  Run::

    .venv/bin/python benchmarks/reference_louvain.py DATASET
"""

import random
import sys

import igraph
import numpy as np
import pandas as pd
from scipy import sparse

d = sys.argv[1]
hosts = pd.read_csv(f"{d}/hosts.csv")["host"]
t = pd.read_csv(f"{d}/transfers.csv")
idx = pd.Index(sorted(hosts))
r, s = idx.get_indexer(t["receiver"]), idx.get_indexer(t["sender"])
n, its = len(idx), t["iteration"].nunique()
C = sparse.csr_array((t["blocks"].to_numpy(float), (r, s)), shape=(n, n))
W = sparse.triu((C + C.T) / its, 1).tocoo()
g = igraph.Graph(n=n, edges=np.column_stack([W.row, W.col]).tolist())
random.seed(0)
p = g.community_multilevel(weights=W.data.tolist())
print(len(p), p.modularity)
