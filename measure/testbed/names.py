"""Testbed names, what belongs to each on the system, and the testbed's error.

Every namespace of testbed ``NAME`` is called ``tomo-NAME-<node>``: ``NAME``
is ``[a-z0-9]{1,8}`` (default ``tb``), ``<node>`` a host name or
``r-<router>``.  Nothing outside the prefix ``tomo-NAME-`` is ever touched.
Its files live in :data:`STATE_DIR`: the state file ``testbed-NAME.json``
(:mod:`measure.testbed.state`) and the lock ``testbed-NAME.lock``
(:mod:`measure.testbed.claims`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tomography.model.errors import TomographyError

__all__ = ["TestbedError", "PREFIX", "NETNS_DIR", "STATE_DIR", "STATE_DIR_MODE",
           "STATE_FILE_MODE", "valid", "prefix", "namespaces", "name_of", "present",
           "state_dir"]

PREFIX = "tomo-"
NETNS_DIR = Path("/run/netns")  # where iproute2 keeps named namespaces
STATE_DIR = Path("/run/tomography")  # state files and locks (a tmpfs: gone at reboot, as are
                                     # the namespaces)
STATE_DIR_MODE = 0o700   # the state directory and files: the owner's (root's) alone,
STATE_FILE_MODE = 0o600  # whatever the umask

_NAME = re.compile(r"[a-z0-9]{1,8}")


class TestbedError(TomographyError):
    """The testbed cannot be raised, found or taken down; says what and how to fix it."""

    __test__ = False  # not a pytest test class, despite its name
    __module__ = "measure.testbed"  # where users import it from (and tracebacks say so)


def valid(name: object) -> bool:
    """Whether ``name`` can name a testbed: 1 to 8 lowercase letters or digits.

    Examples
    --------
    >>> valid("demo"), valid("Demo"), valid("toolong12"), valid(None)
    (True, False, False, False)
    """
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def prefix(name: str) -> str:
    """The namespace prefix of testbed ``name``, once the name is checked.

    Raises
    ------
    TestbedError
        When ``name`` is not 1 to 8 lowercase letters or digits.

    Examples
    --------
    >>> prefix("demo")
    'tomo-demo-'
    >>> prefix("Demo")
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: testbed name must be 1 to 8 lowercase letters or digits, \
got 'Demo'
    """
    if not valid(name):
        raise TestbedError(f"testbed name must be 1 to 8 lowercase letters or digits, "
                           f"got {name!r}")
    return f"{PREFIX}{name}-"


def namespaces(start: str) -> list[str]:
    """Named namespaces whose names start with ``start`` (what ``ip netns list`` shows).

    Examples
    --------
    >>> namespaces("tomo-nosuch-")
    []
    """
    try:
        found = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in found if n.startswith(start))


def name_of(namespace: str) -> str | None:
    """The testbed a namespace belongs to, or None when it is no testbed's.

    Examples
    --------
    >>> name_of("tomo-demo-r-west"), name_of("tomo-Demo-a"), name_of("other")
    ('demo', None, None)
    """
    name, dash, _ = namespace.removeprefix(PREFIX).partition("-")
    return name if namespace.startswith(PREFIX) and dash and valid(name) else None


def present(files: str = "testbed-*.json") -> list[str]:
    """Names of the testbeds with namespaces, or with files matching ``files``, here.

    Parameters
    ----------
    files : str
        A glob in :data:`STATE_DIR`: the state files by default; ``testbed-*.*``
        adds their scratch copies and the locks.

    Examples
    --------
    >>> import tempfile
    >>> from measure.testbed import names
    >>> saved = names.STATE_DIR, names.NETNS_DIR
    >>> names.STATE_DIR, names.NETNS_DIR = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> for f in ("testbed-demo.json", "testbed-old.lock", "testbed-Bad.json"):
    ...     _ = (names.STATE_DIR / f).write_text("")
    >>> (names.NETNS_DIR / "tomo-half-a-00").touch()  # an up killed before its state file
    >>> present(), present("testbed-*.*")
    (['demo', 'half'], ['demo', 'half', 'old'])
    >>> names.STATE_DIR, names.NETNS_DIR = saved
    """
    found = {name_of(ns) for ns in namespaces(PREFIX)}
    found |= {f.name[len("testbed-"):].split(".", 1)[0] for f in STATE_DIR.glob(files)}
    return sorted(filter(valid, found))


def state_dir() -> Path:
    """:data:`STATE_DIR`, created with mode 0700 (and narrowed to it, when this user owns it).

    The state files and locks say which namespaces, addresses and processes
    a testbed holds, and ``down`` acts on what they say: nobody but their
    owner may write them, whatever the umask.

    Raises
    ------
    TestbedError
        When the directory cannot be created, naming it.

    Examples
    --------
    >>> import tempfile
    >>> from measure.testbed import names
    >>> saved, names.STATE_DIR = names.STATE_DIR, Path(tempfile.mkdtemp()) / "tomography"
    >>> oct(state_dir().stat().st_mode & 0o777)
    '0o700'
    >>> names.STATE_DIR = saved
    """
    path = STATE_DIR
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, STATE_DIR_MODE)
        except FileExistsError:
            pass
        st = os.stat(path)
        if st.st_uid == os.geteuid() and st.st_mode & 0o777 != STATE_DIR_MODE:
            os.chmod(path, STATE_DIR_MODE)
    except OSError as exc:
        raise TestbedError(f"cannot create the testbed state directory {path}: "
                           f"{exc.strerror or exc}") from None
    return path
