#!/usr/bin/env bash
# Set up everything the toolkit needs on a fresh Debian/Ubuntu machine:
# a virtual environment in .venv with the package (editable) and its test tools.
# Safe to run again: it only installs what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "setup: installing python3 (apt-get)" >&2
    as_root apt-get update -q && as_root apt-get install -y -q python3 python3-venv
fi
# System tools: Graphviz renders the DOT outputs (and the tests check them with it);
# iproute2 (ip, tc, ss) raises the emulated testbed and checks the swarm's sockets.
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
{ command -v ip && command -v tc && command -v ss; } >/dev/null 2>&1 || missing+=(iproute2)
command -v ps >/dev/null 2>&1 || missing+=(procps)
# OpenSSH: the SSH launcher runs peers with ssh; its tests start a throwaway sshd on loopback.
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
# The reference probes: iperf3 and NetPIPE's NPtcp.
command -v iperf3 >/dev/null 2>&1 || missing+=(iperf3)
command -v NPtcp >/dev/null 2>&1 || missing+=(netpipe-tcp)
# Open MPI, the other MPI a cluster may have: the collectives are tested with both it and
# MPICH (the wheel in .venv).
command -v mpicc.openmpi >/dev/null 2>&1 || missing+=(openmpi-bin libopenmpi-dev)
# Debian's chromium and its driver: the test of `tomography report` opens the page in a real
# headless browser (selenium, from the test extra, drives it through /usr/bin/chromedriver).
{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || missing+=(chromium chromium-driver)
# SimGrid's Python module checks the exported platform files (tests skip without it).
ls /usr/lib/python3/dist-packages/simgrid*.so >/dev/null 2>&1 || missing+=(python3-simgrid)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${missing[*]} (apt-get)" >&2
    # Only sshd's program is wanted (the tests start their own on loopback): keep the
    # package from starting a system SSH server, where nothing else says so already.
    if [[ " ${missing[*]} " == *" openssh-server "* ]] && [ ! -e /usr/sbin/policy-rc.d ]; then
        as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d'
        trap 'as_root rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    as_root apt-get update -q >/dev/null
    # noninteractive: iperf3's package asks whether to start a daemon (no, by default)
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
        || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            "${missing[@]/python3-simgrid/}" >/dev/null
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "setup: Python >= 3.11 is needed; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating the virtual environment .venv" >&2
    if ! "$PYTHON" -m venv .venv 2>/dev/null; then
        echo "setup: installing python3-venv (apt-get)" >&2
        rm -rf .venv
        as_root apt-get update -q && as_root apt-get install -y -q python3-venv
        "$PYTHON" -m venv .venv
    fi
fi
stamp=.venv/.installed-$(cat pyproject.toml | cksum | cut -d' ' -f1)
if [ ! -e "$stamp" ]; then
    echo "setup: installing the toolkit and its dependencies into .venv (pip; a few minutes" \
         "the first time)" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,all]'
    rm -f .venv/.installed-* && touch "$stamp"
    echo "setup: done" >&2
fi

# mpi4py built against Open MPI (the way docs/mpi.md says to build against a site's MPI), in
# .venv/mpi4py-openmpi: the tests put it first on PYTHONPATH under Open MPI's mpiexec. It is
# compiled in a throwaway environment, whose include path lacks the MPICH wheel's mpi.h, and
# the wheel is kept in ~/.cache (five minutes to build; the next fresh clone reuses it).
if command -v mpicc.openmpi >/dev/null 2>&1 && [ ! -e .venv/mpi4py-openmpi/.built ]; then
    version=$(.venv/bin/python -c 'import mpi4py; print(mpi4py.__version__)')
    wheels=${XDG_CACHE_HOME:-$HOME/.cache}/bandwidth-tomography/mpi4py-openmpi-$version-$(
        mpicc.openmpi --showme:version 2>&1 | grep -o '[0-9][0-9.]*' | head -1)
    if ! ls "$wheels"/mpi4py-*.whl >/dev/null 2>&1; then
        echo "setup: building mpi4py $version against Open MPI (a few minutes, once)" >&2
        scratch=$(mktemp -d)
        "$PYTHON" -m venv "$scratch/venv"
        env MPICC=mpicc.openmpi "$scratch/venv/bin/python" -m pip wheel -q \
            --disable-pip-version-check --no-cache-dir --no-deps --no-binary=mpi4py \
            -w "$wheels" "mpi4py==$version" || echo "setup: could not build mpi4py against" \
            "Open MPI; its tests will skip" >&2
        rm -rf "$scratch"
    fi
    if ls "$wheels"/mpi4py-*.whl >/dev/null 2>&1; then
        rm -rf .venv/mpi4py-openmpi
        .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-index \
            --target .venv/mpi4py-openmpi "$wheels"/mpi4py-*.whl && touch .venv/mpi4py-openmpi/.built
    fi
fi
