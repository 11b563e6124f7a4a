"""The ground floor: the data model and what it stands on.

Everything above (the algorithms in ``cluster``, the measurement in ``measure``,
the views in ``visualize``, the exporters and planners, the pipeline and the
command line) imports from here; nothing here imports from above.

- :mod:`~tomography.model.dataset`: the measurement and multicast datasets
  (read, write, validate, lock), and the imports of iperf3 reports and
  perfSONAR archives into a dataset;
- :mod:`~tomography.model.weights`: ``w_n`` (Eq 4.1/4.2) and the per-iteration
  rows resampling draws from; :mod:`~tomography.model.matrices`,
  :mod:`~tomography.model.interop` (pandas and networkx in and out);
- :mod:`~tomography.model.hierarchy`: ``Hierarchy`` and ``ClusterTree``;
- :mod:`~tomography.model.topology`, :mod:`~tomography.model.scenarios` (the
  built-in networks), :mod:`~tomography.model.scaling`,
  :mod:`~tomography.model.ground_truth`, :mod:`~tomography.model.truth_labels`,
  :mod:`~tomography.model.synthetic` (planted datasets);
- :mod:`~tomography.model.options`: every analysis option, declared once;
- what all of it stands on: :mod:`~tomography.model.errors`,
  :mod:`~tomography.model.units`, :mod:`~tomography.model.seeding`,
  :mod:`~tomography.model.files` and :mod:`~tomography.model.safe_load` (the
  guards before outside input is read), :mod:`~tomography.model.hostnames`,
  :mod:`~tomography.model.hosts_checks`, :mod:`~tomography.model.lazy`,
  :mod:`~tomography.model.deprecation`, :mod:`~tomography.model.interrupts`
  (Ctrl-C and SIGTERM raised where a long run can clean up).
"""

VERSION = "0.1.0"
"""The toolkit's version (``tomography.__version__``), as agents report it in their hello."""
