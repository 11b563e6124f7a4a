# The two commands of the README; each sets everything up first.
.PHONY: demo test quick bench reproduce setup

setup:
	@scripts/setup.sh

demo: setup
	.venv/bin/tomography demo -o out/demo

# Two lanes at once: the tests of peers, MPI, SSH and namespaces one after the other, the
# rest beside them at the lowest CPU priority (scripts/test.sh; conftest.py says which is which).
test: setup
	scripts/test.sh

# The fast lane for developers: leaves out the tests marked slow or root (conftest.py).
quick: setup
	.venv/bin/python -m pytest -m "not slow and not root" -q -n 2 --dist loadgroup

bench: setup
	.venv/bin/pip install -q -e '.[bench]'
	.venv/bin/python benchmarks/analysis_speed.py
	.venv/bin/python benchmarks/simulator_speed.py
	.venv/bin/python benchmarks/launchers_cost.py
	@if [ "$$(id -u)" -eq 0 ]; then .venv/bin/python benchmarks/testbed_broadcast_time.py; \
	else echo "benchmarks/testbed_broadcast_time.py skipped: needs root (network namespaces, tc)"; fi

reproduce: setup
	.venv/bin/python benchmarks/reproduce_thesis.py
