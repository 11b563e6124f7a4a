# The two commands of the README; each sets everything up first.
.PHONY: demo test quick bench reproduce setup

setup:
	@scripts/setup.sh

demo: setup
	.venv/bin/tomography demo -o out/demo

# Two workers: the slow tests (peers, MPI, SSH, namespaces) one after the other on one, the
# rest beside them on the other (conftest.py says which may run beside them).
test: setup
	.venv/bin/python -m pytest -n 2 --dist loadgroup

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
