"""The reference probes' tools: iperf3 and NetPIPE command lines, and what their output says.

* iperf3 (``iperf3 -J``): :func:`iperf3_client`, :func:`iperf3_server`,
  :func:`iperf3_credentials` (a run's user, password and RSA key pair: a mesh's
  servers take tests only from its own clients); their reports are read by
  :func:`tomography.model.dataset.iperf3.parse_iperf3` (throughput on the **receiver**
  side, bytes, retransmits, mean RTT, or the error iperf3 reported), shared
  with ``tomography import iperf3``.
* NetPIPE (``NPtcp``): :func:`netpipe_receiver`, :func:`netpipe_transmitter`,
  :func:`parse_netpipe` (the curve: message size, one-way time, throughput)
  and :func:`hockney_fit`, Hockney's model ``T(m) = alpha + beta * m``
  (latency ``alpha`` in s, inverse bandwidth ``beta`` in s/byte, the
  least-squares slope of the large messages).

Units: NetPIPE prints throughput in "Mbps" of 2^20 bit/s (its own output
agrees: 65536 bytes in 14.43 us is 34645 "Mbps" = 36.3e9 bit/s / 2^20);
:func:`parse_netpipe` converts to bit/s and keeps NetPIPE's time, which is
half a round trip, in seconds.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tomography.model.errors import ParameterError, ProbeError

if TYPE_CHECKING:   # numpy loads where curves are read (the coordinator), not in the agents
    import numpy as np

__all__ = ["IPERF3_DEFAULTS", "NETPIPE_DEFAULTS", "Credentials", "iperf3_credentials",
           "iperf3_server", "iperf3_client",
           "netpipe_receiver", "netpipe_transmitter", "parse_netpipe", "hockney_fit"]

# iperf3's own defaults, stated so the help and meta.json can say them
IPERF3_DEFAULTS = {"duration": 10, "parallel": 1, "omit": 0}  # whole seconds, as iperf3 reads them

FIGURES_DURATION = 2
"""Seconds of a figures test of flows side by side (:mod:`measure.figures`; whole seconds,
iperf3's ``-t``): in one second, their start-up (slow start, losses that strike them
together, a dropped connection request waiting a second) leaves a shared link up to a
third short."""


def single_duration(duration: int) -> int:
    """Seconds of a figures test of one flow alone: half those of flows side by side, at
    least 1 (a flow alone is steady within a second).

    Examples
    --------
    >>> single_duration(2), single_duration(5), single_duration(1)
    (1, 2, 1)
    """
    return max(1, int(duration) // 2)


TIME_SKEW = 60
"""Seconds an authenticated iperf3 server allows between its clock and its client's
(iperf3's own default is 10: hosts of an SSH run are rarely closer than that)."""


@dataclass(frozen=True)
class Credentials:
    """A run's iperf3 credentials: what its servers check and its clients present.

    Attributes
    ----------
    user, password : str
        The run's user name and password (random, one per run).
    private_key, public_key : str
        An RSA key pair in PEM: the servers decrypt with the private key
        what the clients encrypted with the public one.
    """

    user: str
    password: str
    private_key: str
    public_key: str

    def authorized_users(self) -> str:
        """The server's ``--authorized-users-path`` file: ``user,sha256("{user}password")``.

        Examples
        --------
        >>> Credentials("run", "rossi", "", "").authorized_users()[:12]
        'run,76736da6'
        """
        digest = hashlib.sha256(f"{{{self.user}}}{self.password}".encode()).hexdigest()
        return f"{self.user},{digest}\n"

    def message(self) -> dict[str, str]:
        """The fields of the agents' ``auth`` command.

        Examples
        --------
        >>> sorted(Credentials("u", "p", "k", "K").message())
        ['password', 'private_key', 'public_key', 'user']
        """
        return {"user": self.user, "password": self.password,
                "private_key": self.private_key, "public_key": self.public_key}


def iperf3_credentials(openssl: str | None = None) -> Credentials:
    """New credentials for one run: a random user and password, a fresh 2048-bit RSA key pair.

    The key pair is made with ``openssl`` in a private temporary directory,
    which is removed before returning; nothing is left on disk.

    Parameters
    ----------
    openssl : str, optional
        The ``openssl`` program (default: the one on ``PATH``).

    Raises
    ------
    ProbeError
        When ``openssl`` is missing or fails.

    Examples
    --------
    >>> c = iperf3_credentials()
    >>> c.user.startswith("tomography-"), len(c.password) >= 32
    (True, True)
    >>> c.private_key.startswith("-----BEGIN"), "PUBLIC KEY" in c.public_key
    (True, True)
    """
    program = openssl or shutil.which("openssl")
    if program is None:
        raise ProbeError("openssl is needed to make the run's iperf3 keys (apt-get install "
                         "openssl)")
    with tempfile.TemporaryDirectory(prefix="tomography-keys-") as where:
        private, public = Path(where, "private.pem"), Path(where, "public.pem")
        for argv in ([program, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                      "-out", str(private)],
                     [program, "pkey", "-in", str(private), "-pubout", "-out", str(public)]):
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ProbeError(f"openssl could not make the run's iperf3 keys: {exc}") from None
            if done.returncode != 0:
                raise ProbeError("openssl could not make the run's iperf3 keys: "
                                 f"{done.stderr.strip()[-200:]}")
        return Credentials(f"tomography-{secrets.token_hex(4)}", secrets.token_urlsafe(24),
                           private.read_text(), public.read_text())


def iperf3_server(address: str, port: int, *, one_off: bool = False,
                  private_key: str | None = None, authorized_users: str | None = None,
                  time_skew: int = TIME_SKEW) -> list[str]:
    """An iperf3 server on ``address:port`` (one test at a time, as iperf3 serves).

    Parameters
    ----------
    address : str
    port : int
    one_off : bool
        Serve one client, then exit (``-1``): a mesh's server lives for its
        test only.
    private_key, authorized_users : path, optional
        The files of :class:`Credentials` (key PEM, ``user,hash`` lines):
        the server then refuses every client without the run's user and
        password ("test authorization failed").
    time_skew : int
        Seconds the clocks of server and client may differ (with credentials).

    Examples
    --------
    >>> iperf3_server("10.0.0.1", 5201)
    ['iperf3', '-s', '-B', '10.0.0.1', '-p', '5201', '-J']
    >>> " ".join(iperf3_server("10.0.0.1", 5201, one_off=True, private_key="k.pem",
    ...                        authorized_users="users.csv"))
    'iperf3 -s -B 10.0.0.1 -p 5201 -J -1 --rsa-private-key-path k.pem --authorized-users-path users.csv --time-skew-threshold 60'
    """
    argv = ["iperf3", "-s", "-B", address, "-p", str(port), "-J"]
    if one_off:
        argv.append("-1")
    if (private_key is None) != (authorized_users is None):
        raise ParameterError("an authenticating iperf3 server needs both the private key and "
                             "the authorized users")
    if private_key is not None:
        argv += ["--rsa-private-key-path", str(private_key), "--authorized-users-path",
                 str(authorized_users), "--time-skew-threshold", str(int(time_skew))]
    return argv


def iperf3_client(source: str, destination: str, port: int, *, duration: int = 10,
                  parallel: int = 1, omit: int = 0, user: str | None = None,
                  public_key: str | None = None, reverse: bool = False,
                  connect_timeout: float | None = None) -> list[str]:
    """An iperf3 client test from ``source`` to ``destination``, JSON output.

    ``duration`` and ``omit`` are whole seconds: iperf3 reads ``-t 0.5`` as
    ``-t 0``, which means "run for ever".  With ``user`` and ``public_key``
    (the run's :class:`Credentials`; the password goes in the environment
    variable ``IPERF3_PASSWORD``, never on the command line) the client
    authenticates to its server.  ``connect_timeout`` (seconds; iperf3 3.6 and
    later) ends a test whose connection is not answered, as behind a firewall
    that drops it: "unable to connect to server: Connection timed out".

    Examples
    --------
    >>> " ".join(iperf3_client("10.0.0.1", "10.0.0.2", 5201, duration=2, parallel=4))
    'iperf3 -c 10.0.0.2 -p 5201 -B 10.0.0.1 -J -t 2 -P 4 -O 0'
    >>> iperf3_client("10.0.0.1", "10.0.0.2", 5201, user="run", public_key="k.pub")[-4:]
    ['--username', 'run', '--rsa-public-key-path', 'k.pub']
    >>> iperf3_client("10.0.0.1", "10.0.0.2", 5201, reverse=True)[-1]
    '-R'
    >>> iperf3_client("10.0.0.1", "10.0.0.2", 5201, connect_timeout=5)[-2:]
    ['--connect-timeout', '5000']
    """
    if int(duration) != duration or duration < 1 or int(omit) != omit or omit < 0:
        raise ParameterError(f"iperf3 takes whole seconds: duration >= 1 and omit >= 0, got "
                             f"{duration} and {omit}")
    argv = ["iperf3", "-c", destination, "-p", str(port), "-B", source, "-J",
            "-t", str(int(duration)), "-P", str(parallel), "-O", str(int(omit))]
    if (user is None) != (public_key is None):
        raise ParameterError("an authenticating iperf3 client needs both the user and the "
                             "public key")
    if user is not None:
        argv += ["--username", user, "--rsa-public-key-path", str(public_key)]
    if connect_timeout is not None:
        argv += ["--connect-timeout", str(max(1, round(connect_timeout * 1000)))]
    return argv + (["-R"] if reverse else [])


NETPIPE_DEFAULTS = {"upper": 128 * 1024, "samples": 5}  # bytes; repeats per message size


def netpipe_receiver(port: int, *, upper: int = NETPIPE_DEFAULTS["upper"],
                     samples: int = NETPIPE_DEFAULTS["samples"]) -> list[str]:
    """NetPIPE's receiver, which serves one test and exits (it binds every address).

    Examples
    --------
    >>> netpipe_receiver(5002)
    ['NPtcp', '-P', '5002', '-u', '131072', '-n', '5']
    """
    return ["NPtcp", "-P", str(port), "-u", str(upper), "-n", str(samples)]


def netpipe_transmitter(destination: str, port: int, output: str, *,
                        upper: int = NETPIPE_DEFAULTS["upper"],
                        samples: int = NETPIPE_DEFAULTS["samples"]) -> list[str]:
    """NetPIPE's transmitter: sizes from 1 byte to ``upper``, ``samples`` round trips each.

    NetPIPE's own default repeats each size for about a quarter second (40 s
    per pair up to 1 MiB on loopback); a fixed, small ``samples`` keeps a
    mesh affordable, and the fit uses every size.

    Examples
    --------
    >>> netpipe_transmitter("10.0.0.2", 5002, "/tmp/np.out", upper=65536)
    ['NPtcp', '-h', '10.0.0.2', '-P', '5002', '-o', '/tmp/np.out', '-u', '65536', '-n', '5']
    """
    return ["NPtcp", "-h", destination, "-P", str(port), "-o", output, "-u", str(upper),
            "-n", str(samples)]


def parse_netpipe(text: str) -> np.ndarray:
    """NetPIPE's output file as rows ``(bytes, seconds, bits_per_second)``.

    NetPIPE writes ``bytes  Mbps  seconds`` per line, Mbps of 2^20 bit/s and
    the one-way time of a message (half its round trip).

    Examples
    --------
    >>> c = parse_netpipe("1 0.929491 0.00000821" + chr(10) + "65536 34645.368890 0.00001443")
    >>> c[:, 0].tolist(), c[:, 1].tolist()
    ([1.0, 65536.0], [8.21e-06, 1.443e-05])
    >>> (c[:, 2] / 2**20).round(3).tolist()     # NetPIPE's "Mbps" are 2^20 bit/s
    [0.929, 34645.369]
    """
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        try:
            size, mbps, seconds = float(fields[0]), float(fields[1]), float(fields[2])
        except (IndexError, ValueError):
            raise ProbeError(f"NetPIPE output line {number} is not 'bytes Mbps seconds': "
                             f"{line.strip()[:80]!r}") from None
        rows.append((size, seconds, mbps * 2**20))
    if not rows:
        raise ProbeError("NetPIPE wrote no measurement")
    import numpy as np

    return np.array(rows)


def hockney_fit(curve: np.ndarray) -> tuple[float, float]:
    """Hockney's ``alpha`` (s) and ``beta`` (s/byte) of ``T(m) = alpha + beta m`` from a curve.

    Each parameter is read where it dominates: ``alpha`` is the time of the
    smallest messages (the shortest of those up to 64 bytes), ``beta`` the
    least-squares slope over the large messages (from an eighth of the
    largest up).  One straight line through the whole curve is wrong on
    real paths: a shaper's burst, or TCP's window, lets small messages
    through at line rate, so the curve bends, and a single fit gives a
    negative latency and an inflated bandwidth.

    Parameters
    ----------
    curve : ndarray
        Rows ``(bytes, seconds, ...)``, as :func:`parse_netpipe` gives.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([1, 16, 64, 1e3, 1e4, 1e5, 1e6, 2e6, 4e6])
    >>> alpha, beta = hockney_fit(np.c_[m, 50e-6 + m * 8 / 1e9])   # 50 us, 1 Gbit/s
    >>> round(alpha * 1e6, 3), round(8 / beta / 1e9, 3)
    (50.008, 1.0)
    """
    import numpy as np

    sizes, times = curve[:, 0], curve[:, 1]
    if len(sizes) < 3:
        raise ProbeError("a Hockney fit needs at least three message sizes")
    small = sizes <= max(64, sizes.min())
    large = sizes >= sizes.max() / 8
    if large.sum() < 2:
        large = sizes >= np.sort(sizes)[-2]
    beta = float(np.polyfit(sizes[large], times[large], 1)[0])
    if beta <= 0:
        raise ProbeError("the transfer time does not grow with the message size")
    return float(times[small].min()), beta
