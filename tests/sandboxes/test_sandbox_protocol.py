"""The parent's pipe reader against a scripted peer: framing, deadlines, caps, violations."""

from __future__ import annotations

import os
import time

import pytest

from sandboxes.protocol import (
    Channel,
    OutputLimitExceeded,
    OversizedMessage,
    ProtocolViolation,
    WorkerExited,
    WorkerTimeout,
    encode,
)


@pytest.fixture
def pipes():
    to_worker_r, to_worker_w = os.pipe()
    from_worker_r, from_worker_w = os.pipe()
    channel = Channel(
        to_worker_w, from_worker_r, max_message_bytes=1000, max_total_output_bytes=5000
    )
    yield channel, from_worker_w, to_worker_r
    for fd in (to_worker_r, to_worker_w, from_worker_r, from_worker_w):
        try:
            os.close(fd)
        except OSError:
            pass


def soon(seconds: float = 0.2) -> float:
    return time.monotonic() + seconds


def test_lines_split_across_reads_and_several_lines_per_read(pipes):
    channel, peer, _ = pipes
    os.write(peer, b'{"id":1,"ok":tr')
    os.write(peer, b'ue}\n{"id":2}\n{"id":3}')
    assert channel.receive(soon()) == {"id": 1, "ok": True}
    assert channel.receive(soon()) == {"id": 2}
    os.write(peer, b"\n")
    assert channel.receive(soon()) == {"id": 3}
    channel.expect_drained()


def test_read_without_reply_times_out_at_the_deadline(pipes):
    channel, _, _ = pipes
    start = time.monotonic()
    with pytest.raises(WorkerTimeout):
        channel.receive(soon(0.1))
    assert 0.09 < time.monotonic() - start < 0.5


def test_long_line_is_rejected_before_it_is_buffered_whole(pipes):
    channel, peer, _ = pipes
    os.write(peer, b"x" * 3000)
    with pytest.raises(OversizedMessage):
        channel.receive(soon())


@pytest.mark.parametrize(
    "payload",
    [
        b"[" * 5000 + b"\n",
        b'{"a":1e999}\n',
        b'{"a":"\xff"}\n',
        b'{"a":NaN}\n',
        b"[1,2]\n",
        b'{"a":1}{"b":2}\n',
        b"\n",
    ],
)
def test_malformed_replies_are_protocol_violations(pipes, payload):
    channel, peer, _ = pipes
    channel.max_message_bytes = 10_000
    os.write(peer, payload)
    with pytest.raises(ProtocolViolation):
        channel.receive(soon())


def test_trailing_data_after_a_reply_is_a_violation(pipes):
    channel, peer, _ = pipes
    os.write(peer, b'{"id":1}\n{"id":2}\n')
    channel.receive(soon())
    with pytest.raises(ProtocolViolation):
        channel.expect_drained()


def test_end_of_file_means_the_worker_exited(pipes):
    channel, peer, _ = pipes
    os.write(peer, b'{"id":1}')
    os.close(peer)
    with pytest.raises(WorkerExited):
        channel.receive(soon())


def test_counted_output_is_capped(pipes):
    channel, peer, _ = pipes
    line = b'{"r":"' + b"y" * 900 + b'"}\n'
    for _ in range(5):
        os.write(peer, line)
        channel.receive(soon(), count_output=True)
    os.write(peer, line)
    with pytest.raises(OutputLimitExceeded):
        channel.receive(soon(), count_output=True)


def test_send_to_a_worker_that_stops_reading_times_out(pipes):
    channel, _, _ = pipes
    with pytest.raises(WorkerTimeout):
        channel.send(b"x" * (4 << 20), soon(0.1))


def test_encode_is_one_compact_line():
    assert encode({"op": "call", "args": {1: "a"}}) == b'{"op":"call","args":{"1":"a"}}\n'
