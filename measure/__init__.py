"""Phase 1, measurement: BitTorrent swarms, probes, the simulator and the testbed.

Empty for now: the measurement back ends arrive with the issues that build
them; until then datasets come from :mod:`tomography.synthetic` or from disk.
"""
