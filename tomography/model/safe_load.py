"""Bounded reading of structured documents: JSON, YAML and XML that cannot exhaust a machine.

Every document the toolkit reads from outside (a topology, a dataset's
``meta.json``, a pScheduler result, a Gauge file, a document on standard
input) goes through one of these functions, which refuse, in one line naming
the document, before the work starts:

* a file larger than ``max_bytes`` (checked by ``stat`` before reading; a
  pipe or standard input is read in chunks and refused as soon as it passes
  the limit, never read to its end);
* anything that is not a regular file or a pipe (a directory, a device such
  as ``/dev/zero``);
* nesting deeper than ``max_depth`` (a document nested 100,000 deep would
  otherwise overflow the parser's recursion);
* more than ``max_nodes`` values (elements in XML), counting every YAML
  alias as the whole of what it stands for: a "billion laughs" alias bomb
  is refused from its few hundred bytes, before anything expands it;
* a DOCTYPE in XML (its entities are never expanded, nothing outside the
  file is read).

The error is :class:`DocumentError`, a :class:`~tomography.model.errors.DatasetError`
with the ``path`` (or the name given as ``what``) and, where known, the line.

============  ==============  ===========================================
limit         default         why no real document reaches it
============  ==============  ===========================================
bytes         64 MiB (YAML:   a topology counts its hosts, a dataset's
              16 MiB)         tables are CSV, not JSON
depth         100             the deepest document the toolkit writes
                              nests fewer than 10 levels
values        1,000,000       (YAML: aliases expanded)
============  ==============  ===========================================

Examples
--------
>>> load_json(b'{"name": "N1", "hosts": [1, 2]}', what="meta.json")
{'name': 'N1', 'hosts': [1, 2]}
>>> load_json(b"[" * 1000 + b"]" * 1000, what="meta.json")
Traceback (most recent call last):
...
tomography.model.safe_load.DocumentError: meta.json, line 1: nested deeper than 100 levels: not a document the toolkit reads
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import IO, Any, Mapping, Union

import numpy as np
import yaml

from tomography.model import files
from tomography.model.errors import DatasetError

__all__ = ["DocumentError", "MAX_BYTES", "MAX_YAML_BYTES", "MAX_DEPTH", "MAX_NODES",
           "read_bounded", "read_stream", "load_json", "load_yaml", "parse_xml"]

MAX_BYTES = 64 * 2**20
"""The largest JSON or XML document read by default (bytes)."""

MAX_YAML_BYTES = 16 * 2**20
"""The largest YAML document read by default (bytes): YAML parses far slower than JSON."""

MAX_DEPTH = 100
"""The deepest nesting of lists, mappings or elements read by default."""

MAX_NODES = 1_000_000
"""The most values (JSON, YAML with aliases expanded) or elements (XML) read by default."""

_CHUNK = 1 << 16

Source = Union[str, os.PathLike, bytes, bytearray, memoryview, IO[bytes]]


class DocumentError(DatasetError):
    """A structured document is too large, too deep, malformed, or not a file.

    A :class:`~tomography.model.errors.DatasetError` (``path``, ``line``, ``field``);
    readers of their own documents catch it and raise their own error with the
    same text (a topology's :class:`~tomography.model.topology.TopologyError`).

    Examples
    --------
    >>> str(DocumentError("nested deeper than 100 levels", path="t.yaml", line=3))
    't.yaml, line 3: nested deeper than 100 levels'
    """


def _size_text(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


def _too_large(what: str, max_bytes: int, kind: str) -> DocumentError:
    return DocumentError(f"larger than {_size_text(max_bytes)}: not a {kind} the toolkit "
                         "reads", path=what)


def read_stream(stream: IO[bytes], *, what: str, max_bytes: int = MAX_BYTES,
                kind: str = "document") -> bytes:
    """At most ``max_bytes`` of a stream, read in chunks; refused as soon as it passes them.

    For standard input and pipes: an endless stream is refused after
    ``max_bytes + 1`` bytes, never read to its end.

    Parameters
    ----------
    stream : binary file object
        ``sys.stdin.buffer``, an open pipe, a ``BytesIO``.
    what : str
        The name of the stream in messages (``"standard input"``).
    max_bytes : int, default :data:`MAX_BYTES`
    kind : str, default "document"
        What the stream should hold, for the message (``"Gauge document"``).

    Returns
    -------
    bytes

    Raises
    ------
    DocumentError
        When the stream holds more than ``max_bytes``.

    Examples
    --------
    >>> import io
    >>> read_stream(io.BytesIO(b"<a/>"), what="standard input")
    b'<a/>'
    >>> read_stream(io.BytesIO(b"x" * 100), what="standard input", max_bytes=10)
    Traceback (most recent call last):
    ...
    tomography.model.safe_load.DocumentError: standard input: larger than 10 bytes: not a document the toolkit reads
    """
    chunks, total = [], 0
    while total <= max_bytes:
        chunk = stream.read(min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise _too_large(what, max_bytes, kind)


def read_bounded(source: Source, *, what: str | None = None, max_bytes: int = MAX_BYTES,
                 kind: str = "document", pipes: bool = True) -> tuple[bytes, str]:
    """The bytes of a file, pipe, stream or bytes, refused beyond ``max_bytes``.

    A regular file's size is checked by ``stat`` before it is read; a pipe
    (``<(...)`` of the shell) or a stream is read in chunks up to the limit.
    A directory, a device (``/dev/zero``) or a socket is refused unread.

    Parameters
    ----------
    source : path, bytes or binary file object
    what : str, optional
        The name in messages; default the path (``"<bytes>"`` for bytes,
        ``"<stream>"`` for a stream).
    max_bytes : int, default :data:`MAX_BYTES`
    kind : str, default "document"
        What the file should hold, for the messages (``"topology file"``).
    pipes : bool, default True
        Whether a path may name a pipe (read in chunks up to the limit).

    Returns
    -------
    data : bytes
    what : str
        The name used in messages.

    Raises
    ------
    DocumentError
        No such file, not a regular file or a pipe, not readable, or too large.

    Examples
    --------
    >>> read_bounded(b"name: N1", what="t.yaml")
    (b'name: N1', 't.yaml')
    >>> read_bounded("/dev/zero")
    Traceback (most recent call last):
    ...
    tomography.model.safe_load.DocumentError: /dev/zero: is not a regular file (a character device), expected a file
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        name = what or "<bytes>"
        data = bytes(source)
        if len(data) > max_bytes:
            raise _too_large(name, max_bytes, kind)
        return data, name
    if not isinstance(source, (str, os.PathLike)):
        name = what or "<stream>"
        return read_stream(source, what=name, max_bytes=max_bytes, kind=kind), name
    name = what or str(source)
    try:     # a regular file within the limit, or a pipe (read in bounded chunks below)
        fh = files.open_regular(source, max_bytes, pipes=pipes, kind=kind)
    except DocumentError:
        raise
    except DatasetError as exc:
        raise DocumentError(exc.reason, path=name) from None
    with fh:
        return read_stream(fh, what=name, max_bytes=max_bytes, kind=kind), name


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", path=name, line=line) from None


def _deep(name: str, max_depth: int, line: int | None = None) -> DocumentError:
    return DocumentError(f"nested deeper than {max_depth} levels: not a document the toolkit "
                         "reads", path=name, line=line)


def _many(name: str, max_nodes: int, what: str = "values", line: int | None = None
          ) -> DocumentError:
    return DocumentError(f"more than {max_nodes:,} {what}: not a document the toolkit reads",
                         path=name, line=line)


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def load_json(source: Source, *, what: str | None = None, max_bytes: int = MAX_BYTES,
              max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
              kind: str = "JSON document", strict: bool = False, pipes: bool = True) -> Any:
    """Parse a JSON document within limits of size, nesting and number of values.

    The nesting and the number of values are counted on the bytes before
    anything is parsed.  JSON that ends early is said to be cut short.

    Parameters
    ----------
    source : path, bytes or binary file object
    what : str, optional
        The name in messages (default the path).
    max_bytes, max_depth, max_nodes : int
        See :data:`MAX_BYTES`, :data:`MAX_DEPTH`, :data:`MAX_NODES`.
    kind : str, default "JSON document"
        What the file should hold, for the messages.
    strict : bool, default False
        The toolkit's own documents (a dataset's ``meta.json``): also refuse
        a key given twice in one object (which one would count?), ``NaN``
        and ``Infinity``, and numbers of more than :data:`MAX_DIGITS` digits.
    pipes : bool, default True
        Whether a path may name a pipe (``<(...)`` of the shell).

    Returns
    -------
    object
        What :func:`json.loads` gives (``NaN`` and ``Infinity`` as floats, unless
        ``strict``).

    Raises
    ------
    DocumentError
        Naming the document and, for malformed JSON, the line.

    Examples
    --------
    >>> load_json(b'{"a": [1, 2.5, null]}')
    {'a': [1, 2.5, None]}
    >>> load_json(b'{"a": [1, 2, 3]}', what="result.json", max_nodes=2)
    Traceback (most recent call last):
    ...
    tomography.model.safe_load.DocumentError: result.json: more than 2 values: not a document the toolkit reads
    >>> load_json(b'{"a": 1, "a": 2}', what="meta.json", strict=True)
    Traceback (most recent call last):
    ...
    tomography.model.safe_load.DocumentError: meta.json, field 'a': key given twice in one object (which one counts?)
    """
    data, name = read_bounded(source, what=what, max_bytes=max_bytes, kind=kind, pipes=pipes)
    text = _text(data, name)
    bare = _JSON_STRING.sub(b'""', data)          # brackets inside strings do not nest
    codes = np.frombuffer(bare, dtype=np.uint8)
    opens = (codes == ord("[")) | (codes == ord("{"))
    step = opens.astype(np.int32) - ((codes == ord("]")) | (codes == ord("}")))
    if len(step):
        depth = np.cumsum(step)
        if int(depth.max()) > max_depth:
            first = int(np.argmax(depth > max_depth))
            raise _deep(name, max_depth, bare.count(b"\n", 0, first) + 1)
    if int(opens.sum()) + int(np.count_nonzero(codes == ord(","))) + 1 > max_nodes:
        raise _many(name, max_nodes)
    hooks = _strict_hooks(name) if strict else {}
    try:
        return json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        raise DocumentError(f"not valid JSON: {exc.msg} (column {exc.colno})"
                            + (" (the file ends early: cut short?)" if cut else ""),
                            path=name, line=exc.lineno) from None
    except DocumentError:    # a strict hook's refusal
        raise
    except (ValueError, RecursionError) as exc:    # an integer of more than 4300 digits
        raise DocumentError(f"not valid JSON: {str(exc).split(';')[0]}", path=name) from None


MAX_DIGITS = 40
"""The most digits of a number in a strict document (a 128-bit seed has 39)."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _strict_hooks(name: str) -> dict[str, Any]:
    """:func:`json.loads`'s hooks refusing a key twice, NaN and Infinity, and long numbers."""
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise DocumentError("key given twice in one object (which one counts?)",
                                    path=name, field=_short(key).strip("'"))
            out[key] = value
        return out

    def constant(word: str) -> None:
        raise DocumentError(f"{word} is not a JSON number", path=name)

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            raise DocumentError(f"a number of {len(digits.lstrip('-'))} digits, more than "
                                f"{MAX_DIGITS}", path=name)
        return int(digits)

    def number(digits: str) -> float:
        value = float(digits) if len(digits) <= 4 * MAX_DIGITS else math.inf
        if not math.isfinite(value):
            raise DocumentError(f"the number {digits[:20]}... is beyond any value read",
                                path=name)
        return value

    return {"object_pairs_hook": pairs, "parse_constant": constant, "parse_int": integer,
            "parse_float": number}


# --------------------------------------------------------------------------- YAML

_CLoader = getattr(yaml, "CSafeLoader", None)   # libyaml: 10 times faster, same results


class _Constructor(yaml.constructor.SafeConstructor):
    """YAML's safe constructor, refusing a key given twice in one mapping (YAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} given twice", key_node.start_mark)
                seen.add(key)
            except TypeError:    # an unhashable key: the base class says so
                break
        return super().construct_mapping(node, deep=deep)


def _yaml_events(text: str) -> Any:
    loader = _CLoader or yaml.SafeLoader
    return yaml.parse(text, Loader=loader)


def _check_events(text: str, name: str, max_depth: int, max_nodes: int,
                  max_items: Mapping[str, int]) -> None:
    """Refuse, from the parser's events alone, a document past the limits of :func:`load_yaml`.

    One pass, no node built: the nesting, the values with every alias counted
    as the whole of what it stands for (an alias bomb is refused from its few
    hundred bytes; an alias inside what its anchor marks is a document
    without end), the items of the collections ``max_items`` names.
    """
    sizes: dict[str, int] = {}        # anchor -> values it stands for (-1: still open)
    # one entry per open collection: [values so far, anchor, field, items, is a mapping,
    # next node is a key, the current key]
    stack: list[list[Any]] = []
    total = documents = 0

    def place(event: Any) -> str:
        """The field of a collection starting at ``event``, counting it as an item."""
        if not stack:
            return ""
        top = stack[-1]
        top[3] += 1
        field = top[2]
        if top[4]:
            child = f"{field}.{top[6]}" if field else str(top[6])
        else:
            child = f"{field}[{top[3] - 1}]"
        limit = max_items.get(field)
        if limit is not None and top[3] > limit:
            raise DocumentError(f"more than {limit:,} entries: not a document the toolkit "
                                "reads", path=name, line=event.start_mark.line + 1,
                                field=field)
        return child

    for event in _yaml_events(text):
        kind = type(event)
        if kind is yaml.ScalarEvent or kind is yaml.AliasEvent:
            if kind is yaml.AliasEvent:
                size = sizes.get(event.anchor, 1)
                if size < 0:
                    raise DocumentError("an alias inside what its anchor marks: a document "
                                        "without end", path=name,
                                        line=event.start_mark.line + 1)
            else:
                size = 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            total += size
            if total > max_nodes:
                raise _many(name, max_nodes, "values (aliases expanded)",
                            event.start_mark.line + 1)
            if stack:
                top = stack[-1]
                top[0] += size
                if top[4] and top[5]:
                    top[6] = getattr(event, "value", "*")
                else:
                    place(event)
                if top[4]:
                    top[5] = not top[5]
        elif kind is yaml.SequenceStartEvent or kind is yaml.MappingStartEvent:
            if len(stack) >= max_depth:
                raise _deep(name, max_depth, event.start_mark.line + 1)
            field = "?"
            if stack and stack[-1][4] and stack[-1][5]:      # a collection as a key
                stack[-1][6] = "?"
            else:
                field = place(event)
            if event.anchor is not None:
                sizes[event.anchor] = -1
            total += 1
            if total > max_nodes:
                raise _many(name, max_nodes, "values (aliases expanded)",
                            event.start_mark.line + 1)
            stack.append([1, event.anchor, field, 0, kind is yaml.MappingStartEvent, True,
                          None])
        elif kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
            size, anchor = stack.pop()[:2]
            if anchor is not None:
                sizes[anchor] = size
            if stack:
                top = stack[-1]
                top[0] += size
                if top[4]:
                    top[5] = not top[5]
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise DocumentError("more than one YAML document in one file", path=name,
                                    line=event.start_mark.line + 1)


def _yaml_error(exc: yaml.YAMLError, name: str) -> DocumentError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if "nesting depth" in problem:     # libyaml's own bound, 1000 levels
        return _deep(name, MAX_DEPTH, mark.line + 1 if mark else None)
    if isinstance(exc, yaml.constructor.ConstructorError):   # a key twice, an unknown tag
        return DocumentError(problem, path=name, line=mark.line + 1 if mark else None)
    return DocumentError(f"not valid YAML: {problem}", path=name,
                         line=mark.line + 1 if mark else None)


def load_yaml(source: Source, *, what: str | None = None, max_bytes: int = MAX_YAML_BYTES,
              max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
              max_items: Mapping[str, int] | None = None, kind: str = "YAML document") -> Any:
    """Parse a YAML document safely, within limits of size, nesting and values.

    Safe tags only (no Python objects); a key given twice in one mapping is
    refused (YAML would keep the last silently); the nesting and the number of
    values are counted on the parser's events before any node is built, and
    again with every alias expanded before any value is constructed.

    Parameters
    ----------
    source : path, bytes or binary file object
    what : str, optional
        The name in messages (default the path).
    max_bytes : int, default :data:`MAX_YAML_BYTES`
    max_depth, max_nodes : int
        See :data:`MAX_DEPTH`, :data:`MAX_NODES`.
    max_items : mapping of str to int, optional
        The most entries of the collections at these fields (``"routers"``,
        ``"links[0].between"``, ``""`` for the document itself), refused with
        the field named as soon as the parser passes them.
    kind : str, default "YAML document"
        What the file should hold, for the messages.

    Returns
    -------
    object
        The document (None when empty); a multi-document stream is refused.

    Raises
    ------
    DocumentError
        Naming the document and the line.

    Examples
    --------
    >>> load_yaml(b"name: N1\\nrouters: [R1, R2]\\n")
    {'name': 'N1', 'routers': ['R1', 'R2']}
    >>> bomb = b"a: &a [x, x, x, x, x, x, x, x, x, x]\\n" + b"".join(
    ...     b"%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\\n"
    ...     % ((c,) * 2 + (c - 1,) * 10) for c in range(ord("b"), ord("j")))
    >>> load_yaml(bomb, what="t.yaml")
    Traceback (most recent call last):
    ...
    tomography.model.safe_load.DocumentError: t.yaml, line 6: more than 1,000,000 values (aliases expanded): not a document the toolkit reads
    """
    data, name = read_bounded(source, what=what, max_bytes=max_bytes, kind=kind)
    text = _text(data, name)
    try:
        _check_events(text, name, max_depth, max_nodes, max_items or {})
        node = yaml.compose(text, Loader=_CLoader or yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, name) from None
    if node is None:
        return None
    try:
        return _Constructor().construct_document(node)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, name) from None
    except TypeError as exc:     # a list or mapping as a key ("? [a, b]: x")
        raise DocumentError(f"not a document the toolkit reads: {exc}", path=name,
                            line=node.start_mark.line + 1) from None


# --------------------------------------------------------------------------- XML

_ROOT_TAG = re.compile(rb"<[A-Za-z_:]")


def parse_xml(source: Source, *, what: str | None = None, max_bytes: int = MAX_BYTES,
              max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
              kind: str = "XML document") -> Any:
    """Parse an XML document within limits of size, nesting and elements; no DOCTYPE.

    The elements are counted while the document is parsed, chunk by chunk,
    and parsing stops at the first one past a limit.  Entities are never
    resolved and nothing outside the document is read; a DOCTYPE (the only
    place entities are declared) is refused.

    Parameters
    ----------
    source : path, bytes or binary file object
    what : str, optional
        The name in messages (default the path).
    max_bytes, max_depth : int
        See :data:`MAX_BYTES`, :data:`MAX_DEPTH`.
    max_nodes : int, default :data:`MAX_NODES`
        The most elements.
    kind : str, default "XML document"
        What the file should hold, for the messages.

    Returns
    -------
    lxml.etree._ElementTree
        With source lines (``element.sourceline``).

    Raises
    ------
    DocumentError
        Naming the document and the line.

    Examples
    --------
    >>> parse_xml(b"<a><b/><b/></a>").getroot().tag
    'a'
    >>> parse_xml(b"<a>" * 200 + b"</a>" * 200, what="g.xml")
    Traceback (most recent call last):
    ...
    tomography.model.safe_load.DocumentError: g.xml, line 1: nested deeper than 100 levels: not a document the toolkit reads
    """
    from lxml import etree

    data, name = read_bounded(source, what=what, max_bytes=max_bytes, kind=kind)
    first = _ROOT_TAG.search(data)
    if b"<!DOCTYPE" in data[:first.start() if first else len(data)].upper():
        raise DocumentError("a DOCTYPE is not allowed (its entities are not resolved: nothing "
                            "outside the file is read)", path=name, line=1)
    parser = etree.XMLPullParser(events=("start", "end"), resolve_entities=False,
                                 no_network=True, load_dtd=False, huge_tree=False,
                                 remove_comments=False)
    depth = elements = 0
    try:
        for at in range(0, max(len(data), 1), _CHUNK):
            parser.feed(data[at:at + _CHUNK])
            for event, element in parser.read_events():
                if event == "end":
                    depth -= 1
                    continue
                depth += 1
                elements += 1
                if depth > max_depth:
                    raise _deep(name, max_depth, element.sourceline)
                if elements > max_nodes:
                    raise _many(name, max_nodes, "elements", element.sourceline)
        root = parser.close()
    except etree.XMLSyntaxError as exc:
        message = re.sub(r"(, line \d+, column \d+)+$", "", exc.msg or "no element")
        if message.startswith("Excessive depth"):    # libxml2's own bound, 256 levels
            raise _deep(name, max_depth, exc.lineno or None) from None
        raise DocumentError(f"not well-formed XML: {message}", path=name,
                            line=exc.lineno or None) from None
    document = root.getroottree()
    if document.docinfo.doctype:
        raise DocumentError("a DOCTYPE is not allowed (its entities are not resolved: nothing "
                            "outside the file is read)", path=name, line=1)
    return document
