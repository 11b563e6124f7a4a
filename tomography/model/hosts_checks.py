"""The rows of a launcher's hosts file, checked before any peer starts.

``measure ... --hosts FILE`` (``host,address[,label][,port]``) and
``measure ... --ssh FILE`` (``host,ssh,address[,label][,command]``) name the
hosts of a run.  Every field of such a file ends up somewhere a mistake
does harm: the address is where a peer listens and where the others connect
(``0.0.0.0`` would never be reached), the port a socket, the ssh target and
the command an ``ssh`` command line, the host name a file name in the
dataset.  :func:`read_host_rows` reads the file within bounds no real run
reaches (:data:`MAX_HOSTS`, :data:`MAX_FILE_BYTES`), and each ``check_*``
function refuses one field's bad values with a
:class:`~tomography.model.errors.DatasetError` naming the file, the line and the
field, so that a bad file is refused in one line before anything starts.

========================  =============================================
:func:`check_host_name`   a run's name of a host (a file name part)
:func:`check_address`     an IPv4 address a peer listens on
:func:`check_port`        a port, 0 (any free one) to 65535
:func:`check_ssh_target`  what ``ssh`` connects to, never an option
:func:`check_command`     a remote command: one line of printable text
:func:`check_label`       a ground-truth label
:func:`unique_endpoints`  no two hosts on one address and port
:func:`file_budget`       enough open files for one process per host
:func:`read_import_hosts` an import's ``--hosts`` file, checked
========================  =============================================
"""

from __future__ import annotations

import csv
import io
import ipaddress
import re
import resource
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from tomography.model.errors import DatasetError, ParameterError
from tomography.model.files import open_regular

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_HOSTS", "MAX_FILE_BYTES", "MAX_FIELD", "MAX_COMMAND", "HostRow",
           "read_host_rows", "check_host_name", "new_host", "check_address", "check_port",
           "check_ssh_target", "is_local_target", "check_command", "check_label",
           "unique_endpoints", "file_budget", "read_import_hosts"]

MAX_HOSTS = 1024
"""Hosts in one run at most: one peer (a process here, an ssh session) per host; the
largest runs measured had a few hundred."""
MAX_FILE_BYTES = 4 * 2**20
"""A hosts file's size at most (1024 hosts with long remote commands take well under it)."""
MAX_FIELD = 255
"""Characters in a host name, an address, a label or an ssh target at most."""
MAX_COMMAND = 4096
"""Characters in a remote command at most."""
FILES_PER_HOST = 4
"""Open files the coordinator holds per peer process (three pipes and a margin)."""
FILES_SPARE = 256
"""Open files the coordinator needs besides its peers (the dataset, libraries, sockets)."""

HostRow = tuple[int, dict[str, str]]
"""A row of a hosts file: its line number and its fields by column."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_HOST_NAME = re.compile(r"[^\W_][\w.+@:-]*")
_USER = r"[^\s@/:'\"`$;|&<>()\\*?!{}\[\]#~-][^\s@/:'\"`$;|&<>()\\*?!{}\[\]#]*"
_HOST = r"(?:[A-Za-z0-9_][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+(?:%[\w.-]+)?\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)"
_TARGET = re.compile(rf"(?:(?P<user>{_USER})@)?(?P<host>{_HOST})")
_URL_TARGET = re.compile(rf"ssh://(?:(?P<user>{_USER})@)?(?P<host>{_HOST})(?::(?P<port>[0-9]{{1,5}}))?/?")


def _where(path: str | Path | None, line: int | None, field: str) -> dict:
    return {"path": path, "line": line, "field": field}


def _shown(value: str, limit: int = 40) -> str:
    """``value`` quoted for a one-line message, cut to ``limit`` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "...")


def read_host_rows(path: str | Path, required: Sequence[str],
                   optional: Sequence[str] = (), *, max_hosts: int = MAX_HOSTS
                   ) -> list[HostRow]:
    """The rows of a hosts file, read within bounds, as text fields by column.

    The file must be a regular file of at most :data:`MAX_FILE_BYTES`, UTF-8
    text (a byte-order mark is allowed) without NUL bytes, a CSV whose
    header has the ``required`` columns once each and whose rows have no
    more fields than the header and are at most ``max_hosts``.  Blank lines
    are skipped; fields are stripped; a missing trailing field is ``""``.
    Columns outside ``required`` and ``optional`` are kept as they are.

    Parameters
    ----------
    path : path
        The hosts file.
    required, optional : sequence of str
        The columns it must have, and those it may have.
    max_hosts : int
        Rows at most (:data:`MAX_HOSTS`).

    Returns
    -------
    list of (int, dict)
        Each row's line number (the header is line 1) and fields.

    Raises
    ------
    DatasetError
        Naming the file, and the line and field where there is one.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "hosts.csv")
    >>> _ = open(f, "w").write("host,address\\n\\nn1, 10.0.0.1\\n")
    >>> read_host_rows(f, ["host", "address"], ["label"])
    [(3, {'host': 'n1', 'address': '10.0.0.1', 'label': ''})]
    >>> _ = open(f, "wb").write("host,address\\n".encode("utf-16"))
    >>> read_host_rows(f, ["host", "address"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: ...hosts.csv, line 1: UTF-16 text; save it as UTF-8
    """
    path = Path(path)
    with open_regular(path, MAX_FILE_BYTES, kind="hosts file") as fh:
        try:
            data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise DatasetError(f"cannot read ({exc.strerror or exc})", path=path) from None
    if len(data) > MAX_FILE_BYTES:    # it grew since it was checked
        raise DatasetError(f"more than {MAX_FILE_BYTES // 2**20} MiB: too large for a "
                           "hosts file", path=path)
    text = _decoded(data, path)
    header_line, header, rows = 0, None, []
    # lines end at \n, \r or \r\n only (as pandas reads the file), not at \u2028 & co.
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True, strict=True)
    last = 0
    try:
        for fields in reader:
            line, last = last + 1, reader.line_num
            if not any(f.strip() for f in fields):
                continue
            if header is None:
                header, header_line = [f.strip() for f in fields], line
                _check_header(header, required, path, line)
                continue
            if len(rows) >= max_hosts:
                raise DatasetError(f"more than {max_hosts} hosts: a run takes at most "
                                   f"{max_hosts}", path=path, line=line)
            if len(fields) > len(header):
                raise DatasetError(f"{len(fields)} fields, the header has {len(header)}",
                                   path=path, line=line)
            row = {name: (fields[i].strip() if i < len(fields) else "")
                   for i, name in enumerate(header)}
            for name in optional:
                row.setdefault(name, "")
            rows.append((line, row))
    except csv.Error as exc:
        raise DatasetError(f"malformed CSV: {exc}", path=path, line=last + 1) from None
    if header is None:
        raise DatasetError("empty file: expected a header line", path=path, line=1)
    if not rows:
        raise DatasetError("no hosts", path=path, line=header_line + 1)
    return rows


def _decoded(data: bytes, path: Path) -> str:
    """The text of a hosts file, refused unless UTF-8 without NUL bytes."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DatasetError("UTF-16 text; save it as UTF-8", path=path, line=1)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DatasetError(f"a NUL byte at byte {nul}: binary, or UTF-16 without a "
                           "byte-order mark; save it as UTF-8 text", path=path,
                           line=data[:nul].count(b"\n") + 1)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text (byte {exc.start}): binary or another encoding",
                           path=path, line=data[:exc.start].count(b"\n") + 1) from None


def _check_header(header: list[str], required: Sequence[str], path: Path, line: int) -> None:
    for name in header:
        if header.count(name) > 1:
            raise DatasetError(f"column {_shown(name)} twice in the header", path=path,
                               line=line, field=name)
    missing = [c for c in required if c not in header]
    if missing:
        raise DatasetError(f"missing column {missing[0]!r} (the header needs "
                           f"{','.join(required)})", path=path, line=line, field=missing[0])


def _printable(value: str, what: str, limit: int, path: str | Path | None,
               line: int | None, field: str) -> str:
    if _CONTROL.search(value):
        raise DatasetError(f"a control character in the {what}: {_shown(value)}",
                           **_where(path, line, field))
    if len(value) > limit:
        raise DatasetError(f"{len(value)} characters: a {what} takes at most {limit}",
                           **_where(path, line, field))
    return value


def new_host(value: str, seen: dict[str, int], *, path: str | Path, line: int) -> str:
    """:func:`check_host_name`, and a host no earlier line named (``seen``: host -> line,
    updated).

    Examples
    --------
    >>> seen = {}
    >>> new_host("n1", seen, path="hosts.csv", line=2)
    'n1'
    >>> new_host("n1", seen, path="hosts.csv", line=3)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: hosts.csv, line 3, field 'host': duplicate host 'n1' (also on line 2)
    """
    host = check_host_name(value, path=path, line=line)
    if host in seen:
        raise DatasetError(f"duplicate host {host!r} (also on line {seen[host]})",
                           path=path, line=line, field="host")
    seen[host] = line
    return host


def check_host_name(value: str, *, path: str | Path | None = None, line: int | None = None,
                    field: str = "host") -> str:
    """A host's name in the run: a letter or digit, then letters, digits and ``._-+@:``.

    The name becomes part of file names in the dataset (``raw/SRC--DST--0.json``),
    so a path separator, ``..``, a space or a control character is refused.

    Examples
    --------
    >>> check_host_name("node-12.site")
    'node-12.site'
    >>> check_host_name("../x", path="h.csv", line=2)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: h.csv, line 2, field 'host': not a host name: '../x' (a letter or digit, then letters, digits and ._-+@:)
    """
    _printable(value, "host name", MAX_FIELD // 2, path, line, field)
    if not value:
        raise DatasetError("empty host name", **_where(path, line, field))
    if not _HOST_NAME.fullmatch(value) or ".." in value:
        raise DatasetError(f"not a host name: {_shown(value)} (a letter or digit, then "
                           "letters, digits and ._-+@:)", **_where(path, line, field))
    return value


def check_address(value: str, *, loopback: bool = True, path: str | Path | None = None,
                  line: int | None = None, field: str = "address") -> str:
    """An IPv4 address a peer can listen on and the others reach, as ``a.b.c.d``.

    Refuses what no peer can be reached on: the unspecified ``0.0.0.0`` (and
    ``0.0.0.0/8``), multicast, the broadcast address and the reserved
    ``240.0.0.0/4``; and loopback unless ``loopback`` (a peer on another
    machine listening on its own loopback is reached by nobody).

    Examples
    --------
    >>> check_address(" 10.1.0.7 ")
    '10.1.0.7'
    >>> check_address("0.0.0.0", path="h.csv", line=3)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: h.csv, line 3, field 'address': 0.0.0.0 is the unspecified address: no peer can be reached there; give the host's address on the network to measure
    >>> check_address("127.0.0.2", loopback=False)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: field 'address': 127.0.0.2 is a loopback address, reachable only from its own machine; give the host's address on the network to measure
    """
    value = value.strip()
    _printable(value, "address", MAX_FIELD, path, line, field)
    if not value:
        raise DatasetError("empty address", **_where(path, line, field))
    if not re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,3}){3}", value):
        raise DatasetError(f"not an IPv4 address: {_shown(value)} (a.b.c.d; the peers "
                           "listen on IPv4)", **_where(path, line, field))
    try:
        ip = ipaddress.IPv4Address(value)
    except ValueError:
        raise DatasetError(f"not an IPv4 address: {_shown(value)} (each part 0 to 255)",
                           **_where(path, line, field)) from None
    kind = ("the unspecified address" if ip in ipaddress.IPv4Network("0.0.0.0/8")
            else "the broadcast address" if ip == ipaddress.IPv4Address("255.255.255.255")
            else "a multicast address" if ip.is_multicast
            else "a reserved address" if ip.is_reserved
            else "a loopback address, reachable only from its own machine"
            if ip.is_loopback and not loopback else None)
    if kind:
        why = "; " if ip.is_loopback else ": no peer can be reached there; "
        raise DatasetError(f"{value} is {kind}{why}give the host's address on the network to "
                           "measure", **_where(path, line, field))
    return str(ip)


def check_port(value: str | int, *, zero: bool = True, path: str | Path | None = None,
               line: int | None = None, field: str = "port") -> int:
    """A TCP port: a whole number 1 to 65535, or 0 (any free port) when ``zero``.

    Examples
    --------
    >>> check_port("6881"), check_port(" 0 ")
    (6881, 0)
    >>> check_port("1" * 31, path="h.csv", line=2)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: h.csv, line 2, field 'port': not a port: '1111111111111111111111111111111' (a whole number 0 to 65535)
    """
    text = str(value).strip()
    low = 0 if zero else 1
    what = f"(a whole number {low} to 65535)"
    if not re.fullmatch(r"\+?[0-9]{1,5}", text) or not low <= int(text) <= 65535:
        raise DatasetError(f"not a port: {_shown(text)} {what}", **_where(path, line, field))
    return int(text)


def check_ssh_target(value: str, *, path: str | Path | None = None, line: int | None = None,
                     field: str = "ssh") -> str:
    """What ``ssh`` connects to: ``[user@]host`` or ``ssh://[user@]host[:port]``.

    ``host`` is a host name, an alias of the ssh configuration or an
    address.  A target that begins with ``-`` (ssh would read it as an
    option, ``-oProxyCommand=...`` runs a command here), or that has
    whitespace, control or shell characters, is refused.

    Examples
    --------
    >>> check_ssh_target("alice@node12"), check_ssh_target("ssh://bob@10.0.0.1:2222")
    ('alice@node12', 'ssh://bob@10.0.0.1:2222')
    >>> check_ssh_target("-oProxyCommand=touch /tmp/x", path="h.csv", line=2)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: h.csv, line 2, field 'ssh': an ssh target cannot begin with '-' (ssh would read it as an option): '-oProxyCommand=touch /tmp/x'
    """
    _printable(value, "ssh target", MAX_FIELD, path, line, field)
    if not value:
        raise DatasetError("empty ssh target", **_where(path, line, field))
    if value.startswith("-"):
        raise DatasetError("an ssh target cannot begin with '-' (ssh would read it as an "
                           f"option): {_shown(value)}", **_where(path, line, field))
    if re.search(r"\s", value):
        raise DatasetError(f"whitespace in the ssh target: {_shown(value)}",
                           **_where(path, line, field))
    url = _URL_TARGET.fullmatch(value)
    match = url or (None if value.startswith("ssh://") else _TARGET.fullmatch(value))
    if match is None or match.group("host").startswith("-"):
        raise DatasetError(f"not an ssh target: {_shown(value)} ([user@]host or "
                           "ssh://[user@]host[:port])", **_where(path, line, field))
    if url and url.group("port") is not None:
        check_port(url.group("port"), zero=False, path=path, line=line, field=field)
    return value


def is_local_target(target: str) -> bool:
    """Whether an ssh target (checked by :func:`check_ssh_target`) is this machine's loopback.

    Examples
    --------
    >>> is_local_target("ssh://me@127.0.0.1:2222"), is_local_target("me@node1")
    (True, False)
    """
    match = _URL_TARGET.fullmatch(target) or _TARGET.fullmatch(target)
    if match is None:
        return False
    host = match.group("host").strip("[]").split("%")[0]
    if host.lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_command(value: str, *, path: str | Path | None = None, line: int | None = None,
                  field: str = "command") -> str:
    """A remote command: one line of printable text, at most :data:`MAX_COMMAND` characters.

    It runs in the host's shell with the agent's arguments appended, so a
    newline or another control character (a second command hidden on the
    next line) or a leading ``-`` is refused; ``""`` is allowed (the default
    command).

    Examples
    --------
    >>> check_command("/opt/tomo/bin/python -m measure.agent")
    '/opt/tomo/bin/python -m measure.agent'
    >>> check_command("python3\\nrm -rf ~", path="h.csv", line=4)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: h.csv, line 4, field 'command': a control character in the remote command: 'python3\\nrm -rf ~'
    """
    _printable(value, "remote command", MAX_COMMAND, path, line, field)
    if value.startswith("-"):
        raise DatasetError(f"a remote command cannot begin with '-': {_shown(value)}",
                           **_where(path, line, field))
    return value


def check_label(value: str, *, path: str | Path | None = None, line: int | None = None,
                field: str = "label") -> str:
    """A ground-truth label: printable text of at most :data:`MAX_FIELD` characters.

    Examples
    --------
    >>> check_label("site-a/cluster-2")
    'site-a/cluster-2'
    """
    return _printable(value, "label", MAX_FIELD, path, line, field)


def unique_endpoints(rows: Iterable[tuple[int, str, int]], *,
                     path: str | Path | None = None) -> None:
    """Refuse two hosts on one address, unless their ports differ or are 0 (any free port).

    ``rows`` are ``(line, address, port)``; a file without a port column
    gives ``port=-1``: then every host needs its own address.

    Examples
    --------
    >>> unique_endpoints([(2, "10.0.0.1", 0), (3, "10.0.0.1", 0)])
    >>> unique_endpoints([(2, "10.0.0.1", -1), (3, "10.0.0.1", -1)], path="h.csv")
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: h.csv, line 3, field 'address': address 10.0.0.1 is also on line 2 (one address is one peer; a port column tells peers on one address apart)
    """
    seen: dict[tuple[str, int], int] = {}
    for line, address, port in rows:
        if port == 0:
            continue
        key = (address, port)
        if key in seen:
            if port < 0:
                raise DatasetError(f"address {address} is also on line {seen[key]} (one "
                                   "address is one peer; a port column tells peers on one "
                                   "address apart)", path=path, line=line, field="address")
            raise DatasetError(f"address {address} port {port} is also on line {seen[key]}",
                               path=path, line=line, field="port")
        seen[key] = line


def file_budget(processes: int, *, per_process: int = FILES_PER_HOST) -> int:
    """Make room for ``processes`` peer processes in this process's open-file limit.

    Raises the soft limit (``ulimit -n``) up to the hard one when the peers
    need more, and returns the limit now in force.

    Raises
    ------
    ParameterError
        Even the hard limit is too small, said before any peer starts.

    Examples
    --------
    >>> file_budget(2) >= 2 * FILES_PER_HOST + FILES_SPARE
    True
    """
    need = processes * per_process + FILES_SPARE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return need if soft == resource.RLIM_INFINITY else soft
    if hard != resource.RLIM_INFINITY and hard < need:
        raise ParameterError(f"{processes} peers need about {need} open files; this "
                             f"process may open {hard} (ulimit -Hn): raise it, or run "
                             "fewer hosts")
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    return need


def read_import_hosts(path: str | Path) -> pd.DataFrame:
    """The ``--hosts`` file of ``tomography import``, checked, then read as a hosts table.

    ``host,address[,label]``, one row per address (a host may have several:
    its name, IPv4 and IPv6 addresses; ``4 * MAX_HOSTS`` rows at most).  Read within the bounds of
    :func:`read_host_rows`; each host name is a name (:func:`check_host_name`:
    it becomes part of the file names in ``raw/``), each address a host name
    or an address of printable text without spaces, each label printable;
    then :func:`tomography.model.dataset.tables.hosts_of_addresses` makes its table of the
    rows read (the file is read once).

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "hosts.csv")
    >>> _ = open(f, "w").write("host,address\\na,10.0.0.1\\na,ps-a.example.net\\n")
    >>> read_import_hosts(f)["address"].tolist()
    ['10.0.0.1', 'ps-a.example.net']
    >>> _ = open(f, "w").write("host,address\\n../../x,10.0.0.1\\n")
    >>> read_import_hosts(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: ...hosts.csv, line 2, field 'host': not a host name: '../../x' ...
    """
    import pandas as pd

    from tomography.model.dataset.tables import hosts_of_addresses

    rows = read_host_rows(path, ("host", "address"), ("label",), max_hosts=4 * MAX_HOSTS)
    for line, row in rows:  # up to four rows (addresses) a host
        check_host_name(row["host"], path=path, line=line)
        address = _printable(row["address"], "address", MAX_FIELD, path, line, "address")
        if re.search(r"\s", address) or address.startswith("-"):
            raise DatasetError(f"not an address or host name: {_shown(address)}",
                               **_where(path, line, "address"))
        check_label(row["label"], path=path, line=line)
    if not rows:
        raise DatasetError("no hosts", path=path)
    return hosts_of_addresses(pd.DataFrame([row for _, row in rows]), Path(path))
