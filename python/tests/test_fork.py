"""A child made by os.fork() must never repeat its parent's ids: it draws its own random value
(bytes 4-8) instead of continuing the parent's block of counters."""

import os

import pytest

import oid

if not hasattr(os, "fork"):
    pytest.skip("no os.fork on this platform", allow_module_level=True)


def ids_in_child(make):
    """The ids `make()` returns (one bytes object of 12-byte ids) in a forked child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: write the ids, leave without running the parent's cleanup
        try:
            os.close(r)
            data = make()
            with os.fdopen(w, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    return [oid.ObjectId(data[k : k + 12]) for k in range(0, len(data), 12)]


def one_by_one():
    return b"".join(oid.generate().binary for _ in range(1000))


def batch():
    return oid.generate_batch(1000, as_bytes=True)


def constructor():
    return b"".join(oid.ObjectId().binary for _ in range(1000))


@pytest.mark.parametrize("make", [one_by_one, batch, constructor])
def test_child_never_repeats_parent_ids(make):
    before = [oid.generate() for _ in range(10)]  # the parent has a seed and a block
    child = ids_in_child(make)
    after = [oid.ObjectId(make()[k : k + 12]) for k in range(0, 12000, 12)]
    assert len(child) == 1000
    parent_random = {i.binary[4:9] for i in before + after}
    child_random = {i.binary[4:9] for i in child}
    assert len(parent_random) == 1 and len(child_random) == 1
    assert parent_random != child_random
    assert not set(child) & set(before + after)


def test_two_children_differ_from_each_other():
    oid.generate()
    first = ids_in_child(one_by_one)
    second = ids_in_child(one_by_one)
    assert first[0].binary[4:9] != second[0].binary[4:9]
    assert not set(first) & set(second)
