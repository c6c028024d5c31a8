#!/usr/bin/env python3
"""Writes the zero-key inputs of fuzz_hostile_server (see the input format at the top of
fuzz/fuzz_hostile_server.cpp): a SCRAM conversation whose server-first message names an iteration
count and whose server-final message is signed with an all-zero salted password (strategy 1).
They are in fuzz/corpus/fuzz_hostile_server/ (zero-key-*): before the client refused iteration
counts of 2^31 and more, such a count made PBKDF2 fail and leave an all-zero key, so a server
signing with it passed mutual authentication without the password, and the harness trapped.

    make_zero_key_inputs.py DIR
"""
import os
import sys


def rec(kind, b):
    return bytes([kind, len(b) & 255, len(b) >> 8]) + bytes(b)


# A generated hello: not an error, isWritablePrimary, maxWireVersion 17 as int32, `fields`, then
# `spec` (the speculativeAuthenticate bytes when fields has 0x80), ok 1.0, no extras.
def hello(fields=0, spec=None):
    return [0, 0, 4, 3, fields] + (spec or []) + [5, 0]


# A server-first message: the client's nonce and 8 printable characters, a 16-byte salt, the
# iteration count at `count_index` of the harness's list (0: 4096, 8: 2147483648, 9: 4294967295).
def server_first(count_index):
    return [3, 7] + [ord(c) for c in "ABCDEFGH"] + [16] + list(range(16)) + [count_index, 0]


def sasl_start(count_index):  # conversationId 1 (int32), done false, binary payload
    return [0, 1, 3, 0] + server_first(count_index) + [5, 0]


def sasl_continue():  # conversationId 1, done true, 32 unused random bytes
    return [0, 1, 3, 0] + [0] * 32 + [5, 0]


def write(path, auth, count_index, speculative=False):
    head = bytes([auth, 0x02, 0, 0])  # auth (1 SCRAM-SHA-1, 2 SCRAM-SHA-256); find
    if speculative:
        records = rec(0, hello(0x80, server_first(count_index) + [1, 3, 0x10]))
    else:
        records = rec(0, hello()) + rec(0, sasl_start(count_index))
    records += rec(1 << 2, sasl_continue())  # strategy 1: the all-zero salted password
    with open(path, "wb") as f:
        f.write(head + records)


out = sys.argv[1]
write(os.path.join(out, "zero-key-sha256-2147483648"), 2, 8)
write(os.path.join(out, "zero-key-sha1-4294967295"), 1, 9)
write(os.path.join(out, "zero-key-speculative-2147483648"), 2, 8, True)
write(os.path.join(out, "zero-key-sha256-4096"), 2, 0)
