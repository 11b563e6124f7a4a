"""A MOB/Robber peer that breaks the protocol is dropped; the node goes on (no hang, no crash)."""

from __future__ import annotations

import socket

import pytest

from measure.robber import DESIRE, HEADER, REQUEST, SwarmNode

PIECES = 64


def _pair() -> tuple[socket.socket, socket.socket]:
    """Two ends of one TCP connection on loopback."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        ours = socket.create_connection(server.getsockname())
        theirs, _ = server.accept()
    return ours, theirs


def _node(events: list) -> SwarmNode:
    plan = {"run": "r", "method": "robber", "host": "me", "root": "root", "size": PIECES * 1024,
            "piece": 1024, "seed": 0, "share": [0, 16],
            "peers": [["bad", "127.0.0.1", 1, True, False, 16, 32]]}
    return SwarmNode(plan, "127.0.0.1", bytearray(PIECES * 1024), events.append)


@pytest.mark.parametrize("message", [
    HEADER.pack(DESIRE, 0, 3) + b"abc",            # a bit set of the wrong length
    HEADER.pack(REQUEST, 5, 0),                    # a piece this node does not have
    HEADER.pack(REQUEST, 2**31, 0),                # no such piece
    HEADER.pack(DESIRE, 0, 2**32 - 1),             # a length to exhaust memory
    HEADER.pack(4, 0, 1024) + b"x" * 1024,         # a piece nobody asked for
], ids=["set-length", "not-held", "no-such-piece", "huge", "unrequested-piece"])
def test_a_peer_that_breaks_the_protocol_is_dropped(message: bytes) -> None:
    events: list = []
    node = _node(events)
    ours, theirs = _pair()
    try:
        assert node.accept("bad", "127.0.0.1", theirs)
        node.start()
        ours.settimeout(10)
        ours.sendall(message)
        while ours.recv(65536):   # the node's own desire first, then the end
            pass
        assert "bad" not in node.links or node.links["bad"].closed
        assert node.loop.is_alive() and not events   # the node itself goes on
    finally:
        ours.close()
        node.close()


def test_a_stranger_is_not_taken_as_a_peer() -> None:
    node = _node([])
    ours, theirs = _pair()
    try:
        assert not node.accept("bad", "127.0.0.9", theirs)      # not the peer's address
        assert not node.accept("nobody", "127.0.0.1", theirs)   # not a peer
    finally:
        ours.close()
        theirs.close()
        node.close()
