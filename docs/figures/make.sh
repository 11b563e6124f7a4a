#!/bin/sh
# Makes the example figures of docs/figures/ (see README.md there).
#
#   sh docs/figures/make.sh          # data and figures (about 12 minutes on 2 cores)
#   sh docs/figures/make.sh plots    # figures only, from the data already in out/figures/
#
# The real run needs root (the emulated network of namespaces); without root
# it is skipped and the figures that need it are not remade.
set -e
cd "$(dirname "$0")/../.."
T="${TOMOGRAPHY:-.venv/bin/python -m tomography}"
D=out/figures
F=docs/figures

if [ "$1" != "plots" ]; then
    $T simulate four-sites -n 10 --size 16MiB -o $D/four-sites --force
    $T simulate N1 -n 10 --size 32MiB -o $D/N1 --force
    $T simulate N2 -n 10 --size 32MiB -o $D/N2 --force
    $T simulate two-sites-demo -n 8 --size 8MiB -o $D/simulated --force
    if [ "$(id -u)" = 0 ]; then
        $T measure bittorrent --testbed two-sites-demo --name figs -n 8 --size 8MiB --trace \
            -o $D/real --force
    else
        echo "not root: skipping the real run ($D/real)" >&2
    fi
fi

$T plot $D/four-sites --kind layout -o $F/layout.png --dpi 200
$T plot $D/N1 --kind hasse --start best -o $F/hasse.png --dpi 200
$T plot $D/N2 --kind tree -o $F/tree.png --dpi 200
$T plot $D/N1 --kind convergence --start best -o $F/convergence.png --dpi 200
if [ -d $D/real ]; then
    $T plot $D/real --kind heatmap --iteration 0 -o $F/heatmap.png --dpi 200
    $T plot $D/real --kind timeline --iteration 0 -o $F/timeline.png --dpi 200
    $T plot $D/real --kind edge --edge e1-00 e1-01 -o $F/edge.png --dpi 200
    $T plot $D/simulated --kind distribution --compare $D/real --names simulated real \
        -o $F/distribution.png --dpi 200
fi
