"""Hostile hosts files, launcher options and ssh targets: refused in one line, before any peer.

Every command that reads a hosts file is tried: ``measure bittorrent/iperf3/netpipe`` and
``multicast`` with ``--hosts FILE`` (``host,address[,label][,port]``) and ``--ssh FILE``
(``host,ssh,address[,label][,command]``), and ``import pscheduler/iperf3 --hosts FILE``
(``host,address[,label]``).  Each class of hostile input has generated cases; each must be
refused with one line naming the file (and the line and field where there is one), a
nonzero exit, no traceback, nothing written, quickly.  No peer starts in these tests: the
refusals come first (an ssh target is never run: a refusal that let one through would show
as the marker file of the ``ProxyCommand`` cases).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from pathlib import Path

import pytest

from tests.hostile.common import refused, refused_here
from tomography.model.hosts_checks import MAX_FILE_BYTES, MAX_HOSTS

MEASURE = [["measure", "bittorrent"], ["measure", "iperf3"], ["measure", "netpipe"]]
"""The measure methods; each writes a dataset with ``-o``."""


def _launch_commands(option: str, hosts: Path, out: Path) -> list[list[object]]:
    """Every command that starts peers from a ``--hosts`` or ``--ssh`` file."""
    runs = [[*m, option, hosts, "-o", out] for m in MEASURE]
    runs += [[*m, option, hosts, "--check"] for m in MEASURE[:1]]
    runs.append(["multicast", option, hosts, "--check"])
    return runs


def _import_commands(hosts: Path, out: Path, results: Path) -> list[list[object]]:
    return [["import", "pscheduler", results, "--hosts", hosts, "-o", out],
            ["import", "iperf3", results, "--hosts", hosts, "-o", out]]


def _csv(rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)  # \r and \n quoted in fields
    return buf.getvalue().encode("utf-8")


def _hosts(rows: list[list[str]], header: str = "host,address") -> list[list[str]]:
    return [header.split(","), *rows]


def _ssh(rows: list[list[str]], header: str = "host,ssh,address,label,command"
         ) -> list[list[str]]:
    return [header.split(","), *rows]


GOOD_HOSTS = [["h1", "127.0.0.2"], ["h2", "127.0.0.3"]]
GOOD_SSH = [["n1", "alice@node1", "10.0.0.1", "", ""], ["n2", "alice@node2", "10.0.0.2", "", ""]]


@pytest.fixture
def place(tmp_path: Path) -> dict[str, Path]:
    """A hosts file's path, the output directory to be, an empty results directory."""
    (tmp_path / "results").mkdir()
    return {"file": tmp_path / "in" / "hosts.csv", "out": tmp_path / "out",
            "results": tmp_path / "results", "root": tmp_path}


def _write(place: dict[str, Path], content: bytes) -> Path:
    place["file"].parent.mkdir(exist_ok=True)
    place["file"].write_bytes(content)
    return place["file"]


def _all_refused(runs: list[list[object]], place: dict[str, Path], says: list[str]) -> None:
    for argv in runs:
        refused_here(argv, says=[rf"{place['file'].name}\b", *says], watch=[place["root"]])
        assert not place["out"].exists()


# --- class: the file is not UTF-8 text ------------------------------------------------------

NOT_TEXT = {
    "binary": bytes(range(256)) * 8,
    "utf16-bom": "host,address\nh1,127.0.0.2\n".encode("utf-16"),
    "utf16-no-bom": "host,address\nh1,127.0.0.2\n".encode("utf-16-le"),
    "utf32": "host,address\nh1,127.0.0.2\n".encode("utf-32"),
    "latin1": "host,address,label\nh1,127.0.0.2,caf\xe9\n".encode("latin-1"),
    "nul-in-row": b"host,address\nh1,127.0.0.2\x00\nh2,127.0.0.3\n",
    "gzip": b"\x1f\x8b\x08\x00" + bytes(64),
    "nul-in-label": b"host,address,label\nh1,127.0.0.2,a\x00\n",
    "nul-in-command": b"host,ssh,address,command\nh1,u@n1,10.0.0.1,python3\x00x\n",
    "nul-in-target": b"host,ssh,address\nh1,n1\x00,10.0.0.1\n",
}


@pytest.mark.parametrize("kind", sorted(NOT_TEXT))
def test_a_file_that_is_not_utf8_text_is_refused_by_every_command(kind, place) -> None:
    f = _write(place, NOT_TEXT[kind])
    _all_refused(_launch_commands("--hosts", f, place["out"])
                 + _launch_commands("--ssh", f, place["out"])
                 + _import_commands(f, place["out"], place["results"]), place,
                 [r"UTF-8|UTF-16|NUL|encoding|control character"])


# --- class: not a regular file (a FIFO would block the reader for ever) ----------------------

@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_hosts_file_that_is_no_regular_file_is_refused_without_blocking(kind, place) -> None:
    place["file"].parent.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(place["file"])
    elif kind == "directory":
        place["file"].mkdir()
    target = Path("/dev/zero") if kind == "device" else place["file"]
    for argv in [["measure", "bittorrent", "--hosts", target, "-o", place["out"]],
                 ["measure", "iperf3", "--ssh", target, "-o", place["out"]],
                 ["multicast", "--hosts", target, "--check"]]:
        refused(argv, says=[rf"{target.name}", r"regular file|expected a file|missing file"],
                timeout=30, watch=[place["root"]])


# --- class: more hosts than a run takes, or a file too large ---------------------------------

@pytest.mark.parametrize("rows", [MAX_HOSTS + 1, 10_000])
def test_more_hosts_than_a_run_takes_are_refused_up_front(rows, place) -> None:
    hosts = _write(place, _csv(_hosts([[f"h{i}", f"10.{i // 250}.{i % 250}.1"]
                                       for i in range(rows)])))
    _all_refused(_launch_commands("--hosts", hosts, place["out"]), place,
                 [rf"line {MAX_HOSTS + 2}\b", rf"more than {MAX_HOSTS} hosts"])
    ssh = place["root"] / "in" / "ssh.csv"
    ssh.write_bytes(_csv(_ssh([[f"n{i}", f"u@node{i}", f"10.{i // 250}.{i % 250}.1", "", ""]
                               for i in range(rows)])))
    for argv in _launch_commands("--ssh", ssh, place["out"]):
        refused_here(argv, says=[r"ssh\.csv", rf"more than {MAX_HOSTS} hosts"],
                     watch=[place["root"]])


@pytest.mark.slow
def test_hosts_beyond_the_open_file_limit_are_refused_before_any_peer_starts(place) -> None:
    """The hosts fit the bound, the open-file limit does not: one line, and no peer started."""
    import subprocess
    import sys

    hosts = _write(place, _csv(_hosts([[f"h{i}", f"127.0.{i // 250}.{i % 250 + 2}"]
                                       for i in range(300)])))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512)); "
            "from tomography.cli import main; sys.exit(main(sys.argv[1:]))")
    for argv in _launch_commands("--hosts", hosts, place["out"])[:2]:
        done = subprocess.run([sys.executable, "-c", code, *map(str, argv)],
                              capture_output=True, text=True, timeout=60)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert "open files" in lines[0] and "ulimit" in lines[0], lines[0]
        assert not place["out"].exists()


@pytest.mark.slow
def test_more_hosts_than_a_run_takes_are_refused_by_the_imports(place) -> None:
    hosts = _write(place, _csv(_hosts([[f"h{i}", f"10.{i // 250}.{i % 250}.1"]
                                       for i in range(MAX_HOSTS * 4 + 1)])))
    _all_refused(_import_commands(hosts, place["out"], place["results"]), place,
                 [r"more than \d+ hosts"])


@pytest.mark.parametrize("where", ["label", "padding"])
def test_a_file_larger_than_a_hosts_file_can_be_is_refused_before_it_is_parsed(where,
                                                                               place) -> None:
    big = "x" * (MAX_FILE_BYTES + 1)
    body = (_csv(_hosts([["h1", "127.0.0.2", big]], "host,address,label")) if where == "label"
            else _csv(_hosts(GOOD_HOSTS)) + b"\n" * (MAX_FILE_BYTES + 1))
    f = _write(place, body)
    _all_refused(_launch_commands("--hosts", f, place["out"])
                 + _launch_commands("--ssh", f, place["out"]), place, [r"MiB"])


# --- class: a port that is not one -----------------------------------------------------------

BAD_PORTS = ["1" * 31, "abc", "-1", "65536", "99999", "1e3", "0x50", "6881.0", "١٢٣", "6 881"]


@pytest.mark.parametrize("port", BAD_PORTS)
def test_a_port_that_is_not_a_port_is_refused_naming_line_and_field(port, place) -> None:
    hosts = _write(place, _csv(_hosts([["h1", "127.0.0.2", "", "6881"],
                                       ["h2", "127.0.0.3", "", port]],
                                      "host,address,label,port")))
    _all_refused(_launch_commands("--hosts", hosts, place["out"]), place,
                 [r"line 3, field 'port'", r"not a port"])


@pytest.mark.parametrize("option,value", [("--port", "1" * 31), ("--port", "70000"),
                                          ("--port", "-5"), ("--port", "http"),
                                          ("--ssh-port", "0"), ("--ssh-port", "abc"),
                                          ("--ssh-connections", str(10**9))])
def test_a_port_or_connection_count_option_out_of_range_is_refused(option, value,
                                                                   place) -> None:
    """An option's value is argparse's to refuse: its usage, then the one error line."""
    from tomography.cli import main

    hosts = _write(place, _csv(_hosts(GOOD_HOSTS)))
    for argv in _launch_commands("--hosts", hosts, place["out"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
            main([str(a) for a in [*argv, option, value]])
        last = err.getvalue().strip().splitlines()[-1]
        assert exit_.value.code == 2 and "Traceback" not in err.getvalue()
        assert f"error: argument {option}" in last and value[:20] in last, last
        assert not place["out"].exists()


# --- class: an address no peer can be reached on ---------------------------------------------

BAD_ADDRESSES = {"0.0.0.0": "unspecified", "0.1.2.3": "unspecified",
                 "224.0.0.1": "multicast", "239.255.1.2": "multicast",
                 "255.255.255.255": "broadcast", "240.0.0.9": "reserved",
                 "256.1.1.1": "not an IPv4", "10.0.0": "not an IPv4",
                 "10.0.0.1.5": "not an IPv4", "::1": "not an IPv4",
                 "node1.example.org": "not an IPv4", "0x7f.1": "not an IPv4",
                 "1" * 300: "characters", "10.0.0.1\x07": "control"}


@pytest.mark.parametrize("address", sorted(BAD_ADDRESSES))
def test_an_address_no_peer_can_be_reached_on_is_refused(address, place) -> None:
    says = [r"line 3, field 'address'", BAD_ADDRESSES[address]]
    hosts = _write(place, _csv(_hosts([GOOD_HOSTS[0], ["h2", address]])))
    _all_refused(_launch_commands("--hosts", hosts, place["out"]), place, says)
    ssh = _write(place, _csv(_ssh([GOOD_SSH[0], ["n2", "alice@node2", address, "", ""]])))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place, says)


@pytest.mark.parametrize("target", ["alice@node2", "node2", "ssh://bob@10.1.0.2:2222",
                                    "alias-from-config"])
@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.5", "127.255.0.1"])
def test_a_loopback_address_is_refused_where_the_peer_runs_on_another_machine(
        target, address, place) -> None:
    ssh = _write(place, _csv(_ssh([GOOD_SSH[0], ["n2", target, address, "", ""]])))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place,
                 [r"line 3, field 'address'", "loopback"])


# --- class: two hosts on one address ---------------------------------------------------------

@pytest.mark.parametrize("rows,field", [
    ([["h1", "127.0.0.2"], ["h2", "127.0.0.2"]], "address"),
    ([["h1", "127.0.0.2"], ["h2", "127.0.0.3"], ["h3", " 127.0.0.2 "]], "address"),
    ([["h1", "127.0.0.2", "6881"], ["h2", "127.0.0.2", "6881"]], "port"),
    ([["h1", "127.0.0.2", "6881"], ["h2", "127.0.0.3", "1"], ["h3", "127.0.0.2", "+6881"]],
     "port"),
])
def test_two_hosts_on_one_address_and_port_are_refused_naming_the_file(rows, field,
                                                                        place) -> None:
    header = "host,address,port" if len(rows[0]) == 3 else "host,address"
    hosts = _write(place, _csv(_hosts(rows, header)))
    _all_refused(_launch_commands("--hosts", hosts, place["out"]), place,
                 [rf"line {len(rows) + 1}, field '{field}'", "also on line 2"])
    ssh = _write(place, _csv(_ssh([[r[0], f"u@{r[0]}", r[1].replace("127.0.0", "10.0.0"), "",
                                    ""] for r in rows])))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place,
                 [rf"line {len(rows) + 1}, field 'address'", "also on line 2"])


def test_two_hosts_given_one_address_are_refused_by_the_imports(place) -> None:
    hosts = _write(place, _csv(_hosts([["a", "10.0.0.1"], ["b", "10.0.0.1"]])))
    _all_refused(_import_commands(hosts, place["out"], place["results"]), place,
                 [r"10\.0\.0\.1"])


# --- class: an ssh target that ssh would read as an option, or not a target -----------------

BAD_TARGETS = {"-oProxyCommand=touch {marker}": "begin with '-'",
               "-F/dev/null": "begin with '-'", "-": "begin with '-'",
               "--": "begin with '-'", "-luser node1": "begin with '-'",
               "alice@-oProxyCommand=touch {marker}": "not an ssh target|whitespace",
               "ssh://-oProxyCommand=x@node1": "not an ssh target",
               "node1 -oProxyCommand=touch {marker}": "whitespace",
               "node1\t-v": "control|whitespace", "node1\u00a0x": "whitespace|control",
               "node1;touch {marker}": "whitespace", "$(touch {marker})": "whitespace",
               "`touch`": "not an ssh target", "node1;id": "not an ssh target",
               "$(id)": "not an ssh target", "node1|id": "not an ssh target",
               "ssh://node1:99999": "not a port", "ssh://node1:0": "not a port",
               "a" * 300: "characters", "": "empty"}


@pytest.mark.parametrize("target", sorted(BAD_TARGETS))
def test_an_ssh_target_that_is_an_option_or_not_a_target_is_refused(target, place) -> None:
    marker = place["root"] / "proxy-command-ran"
    value = target.format(marker=marker)
    ssh = _write(place, _csv(_ssh([GOOD_SSH[0], ["n2", value, "10.0.0.2", "", ""]])))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place,
                 [r"line 3, field 'ssh'", BAD_TARGETS[target]])
    assert not marker.exists()


def test_an_option_shaped_target_that_got_through_is_still_not_an_option_to_ssh() -> None:
    from measure.ssh import SshOptions, ssh_command

    for target in ["-oProxyCommand=touch /tmp/x", "node1"]:
        argv = ssh_command(target, ["--role", "probe"], SshOptions(options=["A=b"]))
        assert argv[argv.index("--") + 1] == target  # the destination follows "--"
        assert all(not a.startswith("-") or a == "--" or argv[i - 1] == "-o" or
                   a in ("-T", "-o", "-p", "-i", "-F") for i, a in enumerate(argv[:-2]))


# --- class: other fields: host names (file names), labels, remote commands -----------------

BAD_HOST_NAMES = {"../../escaped": "not a host name", "a/b": "not a host name",
                  "..": "not a host name", ".hidden": "not a host name",
                  "-rf": "not a host name", "h 1": "not a host name",
                  "h\x1b[31m": "control", "h\u2028x": "control", "x" * 200: "characters"}


@pytest.mark.parametrize("name", sorted(BAD_HOST_NAMES))
def test_a_host_name_that_is_no_safe_file_name_part_is_refused(name, place) -> None:
    says = [r"line 3, field 'host'", BAD_HOST_NAMES[name]]
    hosts = _write(place, _csv(_hosts([GOOD_HOSTS[0], [name, "127.0.0.3"]])))
    _all_refused(_launch_commands("--hosts", hosts, place["out"]), place, says)
    ssh = _write(place, _csv(_ssh([GOOD_SSH[0], [name, "u@node2", "10.0.0.2", "", ""]])))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place, says)


@pytest.mark.parametrize("name", ["../../escaped", "a/b"])
def test_a_host_name_that_is_no_safe_file_name_part_is_refused_by_the_imports(name,
                                                                              place) -> None:
    hosts = _write(place, _csv(_hosts([["a", "10.0.0.1"], [name, "10.0.0.2"]])))
    _all_refused(_import_commands(hosts, place["out"], place["results"]), place,
                 [r"field 'host'"])


BAD_COMMANDS = {"python3 -m measure.agent\ntouch {marker}": "control",
                "python3\rtouch {marker}": "control", "python3\x7f": "control",
                "-oProxyCommand=x": "begin with '-'", "p" * 5000: "characters"}


@pytest.mark.parametrize("command", sorted(BAD_COMMANDS))
def test_a_remote_command_of_more_than_one_printable_line_is_refused(command, place) -> None:
    marker = place["root"] / "command-ran"
    ssh = _write(place, _csv(_ssh([GOOD_SSH[0], ["n2", "u@node2", "10.0.0.2", "",
                                                 command.format(marker=marker)]])))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place,
                 [r"line 3, field 'command'", BAD_COMMANDS[command]])
    assert not marker.exists()


@pytest.mark.parametrize("option,value", [("--remote-command", "python3\ntouch x"),
                                          ("--remote-python", "-oProxyCommand=x"),
                                          ("--ssh-identity", "/nonexistent/key"),
                                          ("--ssh-config", "/nonexistent/config"),
                                          ("--ssh-option", "-oProxyCommand=x")])
def test_an_ssh_option_of_the_command_line_is_checked_like_the_file(option, value,
                                                                    place) -> None:
    ssh = _write(place, _csv(_ssh(GOOD_SSH)))
    for argv in _launch_commands("--ssh", ssh, place["out"]):
        refused_here([*argv, f"{option}={value}"], says=[option], watch=[place["root"]])


@pytest.mark.parametrize("label", ["a\nb", "a\x01", "\x1b]0;title\x07", "l" * 300])
def test_a_label_that_is_not_one_printable_line_is_refused(label, place) -> None:
    says = [r"line 3, field 'label'"]
    hosts = _write(place, _csv(_hosts([GOOD_HOSTS[0] + [""], ["h2", "127.0.0.3", label]],
                                      "host,address,label")))
    _all_refused(_launch_commands("--hosts", hosts, place["out"]), place, says)
    ssh = _write(place, _csv(_ssh([GOOD_SSH[0], ["n2", "u@node2", "10.0.0.2", label, ""]])))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place, says)


# --- class: the CSV itself is malformed ------------------------------------------------------

MALFORMED = {"no header": b"", "only blank lines": b"\n\n\n",
             "no rows": b"host,address\n", "header twice": b"host,host,address\nh,h,1.2.3.4\n",
             "missing column": b"name,address\nh1,127.0.0.2\n",
             "extra field": b"host,address\nh1,127.0.0.2,x,y\n",
             "open quote": b'host,address\nh1,"127.0.0.2\n',
             "duplicate host": b"host,address\nh1,127.0.0.2\nh1,127.0.0.3\n"}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_hosts_file_is_refused_naming_the_file(kind, place) -> None:
    body = MALFORMED[kind]
    f = _write(place, body)
    _all_refused(_launch_commands("--hosts", f, place["out"]), place, [])
    ssh = _write(place, body.replace(b"host,address", b"host,ssh,address")
                 .replace(b",127.0.0", b",u@n,10.0.0").replace(b"h,h,", b"h,h,u@n,"))
    _all_refused(_launch_commands("--ssh", ssh, place["out"]), place, [])
