# The two commands of the README; each sets everything up first.
.PHONY: demo test bench reproduce setup

setup:
	@scripts/setup.sh

demo: setup
	.venv/bin/tomography demo -o out/demo

test: setup
	.venv/bin/python -m pytest

bench: setup
	.venv/bin/pip install -q -e '.[bench]'
	.venv/bin/python benchmarks/analysis.py
	.venv/bin/python benchmarks/simulator.py
	.venv/bin/python benchmarks/launchers.py
	@if [ "$$(id -u)" -eq 0 ]; then .venv/bin/python benchmarks/testbed.py; \
	else echo "benchmarks/testbed.py skipped: needs root (network namespaces, tc)"; fi

reproduce: setup
	.venv/bin/python benchmarks/reproduce.py
