"""The built-in reference scenarios: topology files shipped with the package (``read_topology("N2")``)."""
