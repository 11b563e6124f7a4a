"""The planners' names, apart from the planners, so that the command line lists them cheaply.

:func:`tomography.planning.plan` takes each of :data:`METHODS`; ``tomography plan`` and
``tomography multicast`` offer them without loading NumPy, pandas and SciPy, which
the planners need.

Examples
--------
>>> METHODS[:3]
('flat', 'semi-flat', 'max-bottleneck')
"""

__all__ = ["METHODS"]

METHODS = ("flat", "semi-flat", "max-bottleneck", "fpfr", "balanced", "exact", "binomial")
"""The planners, simplest first: what :func:`tomography.planning.plan` takes."""
