#!/usr/bin/env bash
# The whole test suite (`make test`, what CI runs) in two lanes at once, on a 2-core machine
# in about two thirds of the time one lane takes:
#   - the `agents` lane (conftest.py: tests that start peers, MPI jobs, sshd or namespaces,
#     or look for what they leave): one after the other, as a plain `pytest` runs them;
#   - every other test beside it, on two workers at the lowest CPU priority (nice 19), so
#     that the agents' peers never wait for the CPU.
# Its report is printed after the agents lane's. Exit status: the first lane that failed.
# Arguments go to both pytest runs (e.g. -x, -k EXPR).
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
nice -n 19 .venv/bin/python -m pytest -m "not agents" -n 2 -q "$@" >"$log" 2>&1 &
beside=$!
trap 'kill $beside 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 130' INT TERM
.venv/bin/python -m pytest -m agents "$@"
agents=$?
wait $beside
other=$?
echo
echo "== the other tests (-m 'not agents', 2 workers, nice 19), run beside the agents lane =="
cat "$log"
[ "$agents" -ne 0 ] && exit "$agents"
exit "$other"
