"""The figures of an analysis's clusters: the model ``export --format gauge`` writes.

:func:`analysis_model` cuts the hierarchy of an analysis at a level and
fills a :class:`~tomography.export.bandwidth.BandwidthModel` of its clusters
from the source asked for (probes, the topology it ran on, the broadcasts'
throughput); :func:`shared_links` warns when clusters reach each other over
links their pairs share.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomography.model.errors import TomographyError
from tomography.export.bandwidth.broadcasts import from_broadcasts
from tomography.export.bandwidth.clusters import check_clusters, clusters_from
from tomography.export.bandwidth.figures import from_figures
from tomography.export.bandwidth.model import BandwidthModel
from tomography.export.bandwidth.probes import from_probes
from tomography.export.bandwidth.topology_model import from_topology

if TYPE_CHECKING:
    from tomography.model.topology import Topology

__all__ = ["analysis_model", "shared_links", "has_figures"]


def _topology_of(m: Any, path: "str | Topology | None"):
    """The topology a simulated or emulated dataset ran on, as it ran (scaled)."""
    from tomography.model.scaling import scaled
    from tomography.model.topology import Topology, parse_topology, read_topology

    if isinstance(path, Topology):   # read already (--topology)
        topo = path
    elif path is None and isinstance(m.meta.get("topology_model"), dict):
        topo = parse_topology(m.meta["topology_model"])   # a simulated dataset's own model
    else:
        name = path or m.meta.get("topology")
        if not name:
            raise TomographyError("--bandwidth topology: the dataset names no topology; give "
                                  "--topology FILE")
        # a testbed raised from a file records the file: found again there
        source = None if path else (m.meta.get("testbed") or {}).get("topology_source")
        try:
            try:
                topo = read_topology(name)
            except (TomographyError, OSError):
                if not source or source == name:
                    raise
                topo = read_topology(source)
        except (TomographyError, OSError) as exc:
            raise TomographyError(f"--bandwidth topology: cannot read topology {name!r} "
                                  f"({exc}); give --topology FILE") from None
    scale = (m.meta.get("testbed") or {}).get("scale") or {}
    if scale:
        topo = scaled(topo, bandwidth=float(scale.get("bandwidth", 1.0)),
                      hosts_per_cluster=scale.get("hosts_per_cluster"))
    return topo


def analysis_model(a: Any, *, level: int = 1, source: str = "auto",
                   probes: str | os.PathLike[str] | None = None,
                   topology: "str | Topology | None" = None, host_pairs: bool = False,
                   iterations: int | None = None,
                   dataset: str | os.PathLike[str] | None = None) -> BandwidthModel:
    """The absolute figures of an analysis's clusters on ``level``, as Gauge and SimGrid need.

    What ``tomography export --format gauge`` writes and ``multicast
    --dataset`` plans over.

    Parameters
    ----------
    a : tomography.pipeline.Analysis
        Its hierarchy gives the clusters, its measurement the figures.
    level : int, default 1
        The hierarchy's level (clamped to its depth, with a note).
    source : {"auto", "figures", "probes", "topology", "broadcasts"}
        Where the figures come from: the figures measured for these clusters
        (``tomography measure figures``, in the dataset's ``figures/``),
        probes of the dataset (or of ``probes``), the topology it ran on
        (scaled as its testbed was), or the broadcasts' own throughput
        (lower bounds); ``auto`` the first the dataset has.
    probes : path, optional
        A probe dataset measured beside the broadcasts.
    topology : path or Topology, optional
        The topology, when the dataset does not name it.
    host_pairs : bool, default False
        Also the figures of every host pair.
    iterations : int, optional
        The first ``iterations`` broadcasts only (``source="broadcasts"``).
    dataset : path, optional
        The directory the analysis read: names the file at fault in errors.

    Returns
    -------
    BandwidthModel
        Its ``notes`` say what a reader should know (a clamped level, clusters
        that reach each other over shared links).

    Examples
    --------
    >>> from tomography.pipeline import analyze
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2, 2), 6, iterations=3, seed=0)
    >>> m.iterations["duration_s"] = 2.0
    >>> model = analysis_model(analyze(m, seed=0, resamples=0), level=1, source="broadcasts")
    >>> len(model.clusters), model.sources["cluster_bandwidth"].kind
    (4, 'broadcast-throughput')
    """
    h = a.hierarchy
    clusters = clusters_from(h, level=min(level, h.depth))
    model = _bandwidth_model(a.measurement, clusters, source=source, probes=probes,
                             topology=topology, host_pairs=host_pairs, iterations=iterations,
                             dataset=dataset)
    if level > h.depth:
        model.notes.insert(0, f"the hierarchy has {h.depth} levels; exporting level {h.depth}")
    if model.shared_links is None:
        model.notes.extend(shared_links(h, min(level, h.depth)))
    return model


def _bandwidth_model(m: Any, clusters: dict[str, Any], *, source: str, probes: Path | None,
                     topology: "str | Topology | None", host_pairs: bool,
                     iterations: int | None,
                     dataset: Path | None = None):
    """The absolute figures of the clusters, from the source ``source`` names."""

    if probes is not None:  # a probe mesh run beside the broadcasts
        from tomography.model.dataset import read_measurement

        mesh = read_measurement(probes)
        unknown = sorted(set(m.host_names) - set(mesh.host_names))
        if unknown:
            raise TomographyError(f"--probes {probes}: host {unknown[0]!r} of the dataset "
                                  f"is not in the probe dataset ({len(unknown)} missing)")
        if source in ("auto", "probes"):
            return from_probes(mesh, clusters, host_pairs=host_pairs)
    each = {h: (h,) for hs in clusters.values() for h in hs}   # figures between hosts
    if host_pairs and has_figures(dataset, each) and source in ("auto", "figures"):
        return from_figures(dataset, each)
    if source == "figures" or (source == "auto" and has_figures(dataset, clusters)):
        if dataset is None:
            raise TomographyError("--bandwidth figures needs the dataset's directory")
        return from_figures(dataset, clusters)
    if source == "auto":
        if m.probes is not None and len(m.probes):
            source = "probes"
        elif m.meta.get("topology") or topology:
            source = "topology"
        elif "duration_s" in m.iterations and m.iterations["duration_s"].notna().all():
            source = "broadcasts"
        else:
            raise TomographyError("no source of absolute bandwidths: the dataset has no "
                                  "probes, no topology and no broadcast durations")
        model = _bandwidth_model(m, clusters, source=source, probes=None, topology=topology,
                                 host_pairs=host_pairs, iterations=iterations, dataset=dataset)
        if has_figures(dataset):    # measured, but for other clusters than these
            from tomography.model.dataset.figures import read_figures

            model.notes.insert(0, f"rates from the {source}, not from the dataset's figures: "
                                  f"they are of {len(read_figures(dataset)[1]['clusters'])} "
                                  "other clusters (another level, or the dataset analysed "
                                  "again); tomography measure figures --dataset DIR --force "
                                  "measures these")
        return model
    if source == "probes":
        return from_probes(m, clusters, host_pairs=host_pairs)
    if source == "topology":
        topo = _topology_of(m, topology)
        missing = [h for h in m.host_names if h not in topo.host_index]
        if missing:
            where = f" ({topo.source})" if topo.source else ""
            raise TomographyError(
                f"{Path(dataset or '') / 'hosts.csv'}: host {missing[0]!r} is not a host of "
                f"topology {topo.name!r}"
                f"{where} ({len(missing)} of {len(m.host_names)} missing): the dataset ran on "
                "another network or its hosts were renamed; give --topology FILE of the "
                "network it ran on, or --bandwidth broadcasts/probes")
        model = from_topology(topo, clusters, host_pairs=host_pairs)
        if m.meta.get("testbed", {}).get("latency_applied") is False:
            model.notes.append("the delays are the topology's: the testbed that measured the "
                               "dataset ran without them (no netem)")
        return model
    return from_broadcasts(m, clusters, iterations=None if iterations is None
                           else m.iteration_ids[:iterations], host_pairs=host_pairs)


def has_figures(dataset: str | os.PathLike[str] | None,
                clusters: dict[str, Any] | None = None) -> bool:
    """Whether ``dataset`` holds figures measured (for ``clusters``, when given)."""
    from tomography.model.dataset.figures import FIGURES_DIR, read_figures

    if dataset is None or not (Path(dataset) / FIGURES_DIR / "figures.csv").exists():
        return False
    if clusters is None:
        return True
    return check_clusters(read_figures(dataset)[1]["clusters"]) == check_clusters(clusters)


def shared_links(h: Any, level: int) -> list[str]:
    """A warning when the clusters of ``level`` reach each other over shared links.

    Two clusters under different parents (level + 1) reach each other over
    the link between the parents, which every such pair of the two parents
    shares; a Gauge file gives each pair its bandwidth alone, so a planner
    over-predicts what several trees across it get.
    """
    if level >= h.depth:
        return []
    parent = {c.id: c.parent for c in h.level(level)}
    ids = list(parent)
    crossing = sum(parent[a] != parent[b] for i, a in enumerate(ids) for b in ids[i + 1:])
    shared = crossing - sum(
        1 for i, a in enumerate(h.level(level + 1)) for b in h.level(level + 1)[i + 1:])
    if shared <= 0:
        return []
    return [f"{crossing} cluster pairs of level {level} cross between level-{level + 1} "
            f"clusters, several over one link: the file gives each pair its bandwidth "
            f"alone, so a planner may over-predict trees across them; export --level "
            f"{level + 1} to plan across level {level + 1}"]
