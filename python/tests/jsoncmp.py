"""Extended JSON compared as the BSON corpus asks: parsed, objects as ordered lists of members
(key order and duplicates matter), doubles by their bits (so -0.0 differs from 0.0)."""

import json
import struct


def _float(text):
    return ("double", struct.pack("<d", float(text)))


def parse(text):
    return json.loads(text, object_pairs_hook=list, parse_float=_float)
