#!/usr/bin/env python3
"""How unique ObjectIds are: the formula of docs/uniqueness.md, its tables and plot, and its check
against a simulation.

    scripts/uniqueness_model.py docs            # rewrite the tables in docs/uniqueness.md and
                                                # docs/uniqueness.svg from the formula
    scripts/uniqueness_model.py docs --check    # exit 1 if they are not what the formula gives
    scripts/uniqueness_model.py expect -P 4096 -n 4096 -b 4
    scripts/uniqueness_model.py simulate --worker W --oid OID [-P 4096 -n 4096 -b 4]
                                                # run the fleet worker with the random value cut
                                                # to b bits, count the colliding pairs with
                                                # `oid check-unique`, compare with the formula

Standard library only (the plot is written as SVG by hand).

The model (derived step by step in docs/uniqueness.md). A process seeds once: a random value R0
(40 bits) and a counter start c0 (24 bits), both uniform. Its id number s (0, 1, 2, ...) has the
counter bytes (c0 + s) mod 2^24 and the random bytes R0 + (s // 2^24) * STRIDE mod 2^40: oid's
generator moves the random value on after every 2^24 ids ("blocks"), so one process never repeats
an id. Ids of two processes p and q are equal when they carry the same second, the blocks they
come from have the same random value, and their counters meet. For a pair of ids in the same
second, the counters meet with probability exactly 2^-24 (c0_p - c0_q is uniform), independently
of the random values, so by linearity of expectation

    E[colliding pairs] = sum over seconds, pairs p < q, blocks k of p and l of q of
                         P(R0_p + k*S = R0_q + l*S mod 2^40) * m_pk * m_ql / 2^24

where m_pk is the number of ids of block k of process p made in that second. With R0 uniform on
40 bits the probability is 2^-40 for every k, l, so the sum is C(P, 2) * r^2 / 2^64 per second for
P processes making r ids per second each, at any rate.
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

COUNTER = 2**24  # counter values
RANDOM = 2**40  # random values
STRIDE = 0x9E3779B97F  # src/generator.cpp: random_stride, the step between blocks
YEAR = 31_557_600  # seconds in a Julian year

# ---- The modern layout --------------------------------------------------------------------------


def match_probability(bits, dk):
    """P(R0_p + k*S == R0_q + (k + dk)*S mod 2^40) when R0 is uniform on [0, 2^bits).

    The difference R0_p - R0_q must equal d = dk*S mod 2^40. For x, y uniform on [0, 2^bits) the
    number of pairs with x - y = d' is 2^bits - |d'| for |d'| < 2^bits; d' runs over the two
    integers congruent to d that can be in range (they coincide in range only when bits = 40)."""
    size = 2**bits
    d = (dk * STRIDE) % RANDOM
    hits = sum(size - abs(e) for e in (d, d - RANDOM) if abs(e) < size)
    return hits / size**2


def blocks(n, first=0):
    """Ids per block for a process that makes ids first .. first + n - 1: {block: count}."""
    out = {}
    s = first
    while s < first + n:
        k = s // COUNTER
        end = min(first + n, (k + 1) * COUNTER)
        out[k] = out.get(k, 0) + end - s
        s = end
    return out


def expected_pairs(processes, n, bits=40, first=0):
    """Expected colliding pairs among `processes` processes that each make n ids in one second,
    starting at id number `first`, with R0 uniform on `bits` bits. Exact (linearity)."""
    b = blocks(n, first)
    per_pair = sum(
        match_probability(bits, l - k) * mk * ml / COUNTER
        for k, mk in b.items()
        for l, ml in b.items())
    return math.comb(processes, 2) * per_pair


def overlap_square_sum(a, b):
    """sum over offsets d of |A cap (B + d)|^2 for counter arcs of lengths a <= b, a + b <= 2^24:
    the number of (x, x', y, y') with x - x' = y - y', i.e. sum over |delta| < a of
    (a - |delta|) * (b - |delta|)."""
    assert a <= b and a + b <= COUNTER
    j = a - 1  # sum_{t=1..j} (a - t)(b - t) = j*a*b - (a + b) j(j+1)/2 + j(j+1)(2j+1)/6
    tail = j * a * b - (a + b) * j * (j + 1) // 2 + j * (j + 1) * (2 * j + 1) // 6
    return a * b + 2 * tail


def variance_pairs(processes, n, bits, first=0):
    """Variance of the colliding pairs in the setting of expected_pairs, for processes whose n ids
    lie in one block (no rotation) with 2n <= 2^24.

    For one pair, X = M * O with M = 1[random values equal] (probability p = 2^-bits) and O the
    overlap of the two counter arcs at a uniform offset: E[O] = n^2 / 2^24 and
    E[O^2] = overlap_square_sum(n, n) / 2^24. The X of different pairs are pairwise independent
    (each depends on the differences of the pair's R0 and c0, which are uniform and independent
    of any one other difference), so the variances add."""
    assert len(blocks(n, first)) == 1 and 2 * n <= COUNTER
    p = match_probability(bits, 0)
    mean_o = n * n / COUNTER
    mean_o2 = overlap_square_sum(n, n) / COUNTER
    per_pair = p * mean_o2 - (p * mean_o) ** 2
    return math.comb(processes, 2) * per_pair


def modern_per_year(processes, rate):
    """Expected duplicate ids per year: P processes making `rate` ids per second each, all year."""
    return YEAR * math.comb(processes, 2) * rate * rate / 2**64


# ---- Other layouts, at the same rates -----------------------------------------------------------


def legacy_containers_per_year(processes, rate):
    """Legacy ObjectIds in containers: every process is pid 1 on a host called "localhost", so
    bytes 4-8 are the same everywhere and only the counter start (24 random bits) tells two
    processes apart. Valid for rate <= 2^24 (beyond it a process repeats itself)."""
    return YEAR * math.comb(processes, 2) * rate * rate / COUNTER


def uuid4_per_year(processes, rate):
    """UUIDv4: 122 random bits, no time: every pair of the year's ids may collide."""
    m = processes * rate * YEAR
    return m * (m - 1) / 2 / 2**122


def uuid7_per_year(processes, rate):
    """UUIDv7 (RFC 9562) with rand_a and rand_b random: 74 random bits, and only ids of the same
    millisecond can collide. With a Poisson stream of lambda ids per millisecond the expected
    number of pairs in one is lambda^2 / 2."""
    lam = processes * rate / 1000
    return YEAR * 1000 * lam * lam / 2 / 2**74


# ---- 64-bit ids: machine ids drawn at random -----------------------------------------------------
#
# A 64-bit id has no random part: two processes with the same machine id make the same ids whenever
# they make ids in the same time unit (both counters start at 0). So with machine ids drawn at random
# the question is the birthday problem: the probability that two of k processes draw the same id
# out of N = 2^bits.

MACHINE_LAYOUTS = [("compact64", 8), ("Snowflake", 10), ("Sonyflake", 16)]
BIRTHDAY_K = [2, 5, 10, 20, 38, 50, 100, 200, 302, 500, 1000]
BIRTHDAY_TRIALS = 100_000
BIRTHDAY_SEED = 17


def birthday(k, bits):
    """P(two of k processes share a machine id drawn uniformly from 2^bits) =
    1 - prod_{i=1}^{k-1} (1 - i / 2^bits)."""
    n = 2**bits
    p = 1.0
    for i in range(1, k):
        p *= 1 - i / n
    return 1 - p


def first_shared(bits, trials, seed):
    """Simulation: for each trial, draw machine ids (getrandbits, fixed seed: the same numbers on
    every run) until one repeats; return the sorted list of how many processes that took. k
    processes share an id exactly when that number is <= k."""
    import random
    rng = random.Random(seed * 100 + bits)
    out = []
    for _ in range(trials):
        seen = set()
        while True:
            m = rng.getrandbits(bits)
            if m in seen:
                break
            seen.add(m)
        out.append(len(seen) + 1)
    out.sort()
    return out


def birthday_table():
    import bisect
    sims = {bits: first_shared(bits, BIRTHDAY_TRIALS, BIRTHDAY_SEED) for _, bits in MACHINE_LAYOUTS}
    head = "| processes k | " + " | ".join(
        f"{name_} (2^{bits}): formula | simulated" for name_, bits in MACHINE_LAYOUTS) + " |"
    rule = "|---:|" + "---:|---:|" * len(MACHINE_LAYOUTS)

    def pct(x):
        if x >= 0.99995:
            return "100%" if x == 1 else "> 99.99%"
        if x > 0.99:
            return f"{100 * x:.2f}%"
        return f"{100 * x:.3g}%" if x >= 0.001 else f"{100 * x:.2g}%"

    rows = []
    for k in BIRTHDAY_K:
        cells = []
        for _, bits in MACHINE_LAYOUTS:
            measured = bisect.bisect_right(sims[bits], k) / BIRTHDAY_TRIALS
            cells += [pct(birthday(k, bits)), pct(measured)]
        rows.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule] + rows)


# ---- Tables and plot ----------------------------------------------------------------------------

FLEETS = [10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
RATES = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]


def fmt(x):
    if x == 0:
        return "0"
    if x >= 1e6 or x < 1e-2:
        m, e = f"{x:.1e}".split("e")
        return f"{m}e{int(e)}"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.2g}"


def name(n):
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= div:
            return f"{n // div}{suffix}"
    return str(n)


def modern_table():
    head = "| processes \\ ids/s per process | " + " | ".join(name(r) for r in RATES) + " |"
    rule = "|---|" + "---:|" * len(RATES)
    rows = [f"| {name(p)} | " + " | ".join(fmt(modern_per_year(p, r)) for r in RATES) + " |"
            for p in FLEETS]
    return "\n".join([head, rule] + rows)


COMPARE = [(10, 1_000), (1_000, 100), (1_000, 10_000), (100_000, 1_000), (1_000_000, 1_000),
           (10_000_000, 10_000)]


def compare_table():
    head = ("| processes | ids/s each | ObjectId (oid) | ObjectId legacy in containers | "
            "UUIDv4 | UUIDv7 |")
    rule = "|---:|---:|---:|---:|---:|---:|"
    rows = []
    for p, r in COMPARE:
        cells = [modern_per_year(p, r), legacy_containers_per_year(p, r), uuid4_per_year(p, r),
                 uuid7_per_year(p, r)]
        rows.append(f"| {name(p)} | {name(r)} | " + " | ".join(fmt(c) for c in cells) + " |")
    return "\n".join([head, rule] + rows)


def svg_plot():
    # The legend sits right of the plot: 240 px holds its longest label ("ObjectId legacy,
    # containers", about 170 px at 12 px) after the 51 px of its line sample.
    w, h = 820, 520
    left, right, top, bottom = 80, 240, 30, 60
    xmin, xmax = 1, 7  # log10 processes
    ymin, ymax = -30, 30  # log10 duplicates per year
    pw, ph = w - left - right, h - top - bottom

    def x(v):
        return left + (math.log10(v) - xmin) / (xmax - xmin) * pw

    def y(v):
        lv = max(ymin, min(ymax, math.log10(v) if v > 0 else ymin))
        return top + (ymax - lv) / (ymax - ymin) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left + pw / 2}" y="18" text-anchor="middle" font-size="14">'
           'Expected duplicate ids per year of continuous operation</text>']
    for e in range(ymin, ymax + 1, 10):
        yy = top + (ymax - e) / (ymax - ymin) * ph
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + pw}" y2="{yy:.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">1e{e}</text>')
    for e in range(xmin, xmax + 1):
        xx = left + (e - xmin) / (xmax - xmin) * pw
        out.append(f'<line x1="{xx:.1f}" y1="{top}" x2="{xx:.1f}" y2="{top + ph}" stroke="#ddd"/>')
        out.append(f'<text x="{xx:.1f}" y="{top + ph + 18}" text-anchor="middle">'
                   f'{name(10**e)}</text>')
    out.append(f'<line x1="{left}" y1="{y(1):.1f}" x2="{left + pw}" y2="{y(1):.1f}" '
               'stroke="black" stroke-width="1.5"/>')
    out.append(f'<text x="{left + 4}" y="{y(1) - 4:.1f}">one duplicate a year</text>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 20}" text-anchor="middle">'
               'processes making ids at the same time</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
               'stroke="black"/>')
    # Lines of different layouts can coincide (ObjectId at 1M ids/s lies on legacy at 1 id/s, and
    # UUIDv7 at 1M on ObjectId at 1k), so each layout also has its own marker, and the markers of
    # different layouts sit at different x positions: a line hidden under another still shows
    # its markers.
    layouts = [("ObjectId (oid)", modern_per_year, "", "circle"),
               ("ObjectId legacy, containers", legacy_containers_per_year, "2,3,8,3", "square"),
               ("UUIDv7", uuid7_per_year, "8,4", "triangle"),
               ("UUIDv4", uuid4_per_year, "2,3", "diamond")]
    rates = [(1, "#1b9e77"), (1_000, "#d95f02"), (1_000_000, "#7570b3")]
    xs = [10 ** (xmin + i * (xmax - xmin) / 60) for i in range(61)]

    def marker(shape, cx, cy, colour):
        if shape == "circle":
            return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{colour}"/>'
        pts = {"square": [(-3.5, -3.5), (3.5, -3.5), (3.5, 3.5), (-3.5, 3.5)],
               "triangle": [(0, -5), (4.5, 3.5), (-4.5, 3.5)],
               "diamond": [(0, -5), (5, 0), (0, 5), (-5, 0)]}[shape]
        p = " ".join(f"{cx + dx:.1f},{cy + dy:.1f}" for dx, dy in pts)
        return f'<polygon points="{p}" fill="white" stroke="{colour}" stroke-width="1.5"/>'

    for i, (label, f, dash, shape) in enumerate(layouts):
        for r, colour in rates:
            pts = " ".join(f"{x(p):.1f},{y(f(max(2, round(p)), r)):.1f}" for p in xs)
            d = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                       f'stroke-width="2"{d}/>')
            for e in range(xmin, xmax):  # one marker a decade, shifted per layout
                p = 10 ** (e + (i + 1) / (len(layouts) + 1))
                out.append(marker(shape, x(p), y(f(max(2, round(p)), r)), colour))
    ly = top + 10
    lx = left + pw + 15
    for r, colour in rates:
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 30}" y2="{ly}" stroke="{colour}" '
                   'stroke-width="3"/>')
        out.append(f'<text x="{lx + 36}" y="{ly + 4}">{name(r)} ids/s each</text>')
        ly += 20
    ly += 10
    for label, _, dash, shape in layouts:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 30}" y2="{ly}" stroke="black" '
                   f'stroke-width="2"{d}/>')
        out.append(marker(shape, lx + 15, ly, "black"))
        out.append(f'<text x="{lx + 36}" y="{ly + 4}">{label}</text>')
        ly += 20
    out.append("</svg>")
    return "\n".join(out) + "\n"


def replace_block(text, tag, body):
    pattern = re.compile(rf"(<!-- {tag}: begin[^>]*-->\n)(?:.*?\n)?(<!-- {tag}: end -->)", re.S)
    if not pattern.search(text):
        sys.exit(f"uniqueness_model: docs/uniqueness.md has no {tag} block")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


def cmd_docs(args):
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")
    md_path, svg_path = os.path.join(docs, "uniqueness.md"), os.path.join(docs, "uniqueness.svg")
    with open(md_path) as f:
        md = f.read()
    new_md = replace_block(replace_block(md, "modern-table", modern_table()), "compare-table",
                           compare_table())
    new_md = replace_block(new_md, "id64-birthday-table", birthday_table())
    new_svg = svg_plot()
    if args.check:
        old_svg = open(svg_path).read() if os.path.exists(svg_path) else ""
        stale = [p for p, old, new in ((md_path, md, new_md), (svg_path, old_svg, new_svg))
                 if old != new]
        if stale:
            print("uniqueness_model: out of date (run scripts/uniqueness_model.py docs): "
                  + ", ".join(stale))
            return 1
        print("uniqueness_model: docs/uniqueness.md and docs/uniqueness.svg match the formula")
        return 0
    with open(md_path, "w") as f:
        f.write(new_md)
    with open(svg_path, "w") as f:
        f.write(new_svg)
    return 0


# ---- Formula against simulation -----------------------------------------------------------------


def cmd_expect(args):
    mean = expected_pairs(args.processes, args.ids, args.bits)
    sd = math.sqrt(variance_pairs(args.processes, args.ids, args.bits))
    print(f"expected colliding pairs {mean:.1f}, standard deviation {sd:.1f}")
    return 0


def cmd_simulate(args):
    P, n, bits = args.processes, args.ids, args.bits
    # Process 0 makes ids number 0 .. n-1; each child continues the parent's numbering from n with
    # its own R0 and c0, so its ids are numbers n .. 2n-1. With 2n <= 2^24 all are in block 0, the
    # random values are never rotated, and every pair of processes is alike.
    if 2 * n > COUNTER:
        sys.exit("uniqueness_model: simulate needs 2n <= 2^24 (one block per process)")
    mean = expected_pairs(P, n, bits)
    sd = math.sqrt(variance_pairs(P, n, bits))
    band = args.sigmas * sd
    if mean - band <= 0:
        sys.exit(f"uniqueness_model: parameters too weak: expected {mean:.0f} +- {band:.0f}")
    with tempfile.TemporaryDirectory(prefix="oid-formula-") as work:
        out = os.path.join(work, "ids.bin")
        cmd = [args.worker, "--out", out, "--processes", str(P), "--threads", "1", "--ids", str(n),
               "--batch", str(n), "--random-bits", str(bits), "--time", str(args.time),
               "--concurrency", str(args.concurrency)]
        subprocess.run(cmd, check=True)
        check = subprocess.run([args.oid, "check-unique", "--binary", "--limit", "0",
                                "--temp-dir", work, out], capture_output=True, text=True)
    summary = check.stdout.strip().splitlines()[-1] if check.stdout.strip() else ""
    m = re.search(r"(\d+) colliding pairs", summary)
    if check.returncode not in (0, 1) or not summary.startswith("checked"):
        sys.exit(f"uniqueness_model: oid check-unique failed: {check.stderr}")
    observed = int(m.group(1)) if m else 0
    z = (observed - mean) / sd
    print(f"formula check: {P} processes x {n} ids in one second, random value cut to {bits} bits")
    print(f"  {summary}")
    print(f"  expected colliding pairs {mean:.0f}, standard deviation {sd:.0f} "
          f"(+-{args.sigmas:g} sigma: {mean - band:.0f} .. {mean + band:.0f})")
    print(f"  observed {observed}: {z:+.2f} sigma")
    # What a broken generator would give, for the record: a counter start that is not random
    # (every matching pair overlaps completely) or a random value that is not cut (no pairs).
    fixed_start = math.comb(P, 2) * match_probability(bits, 0) * n
    print(f"  (counter start not random would give about {fixed_start:.0f}; "
          f"a 40-bit random value about {expected_pairs(P, n, 40):.2g})")
    if abs(z) > args.sigmas:
        print("formula check: FAIL")
        return 1
    print("formula check: PASS")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("docs", help="write (or --check) the tables and the plot")
    d.add_argument("--check", action="store_true")
    for nm in ("expect", "simulate"):
        s = sub.add_parser(nm)
        s.add_argument("-P", "--processes", type=int, default=4096)
        s.add_argument("-n", "--ids", type=int, default=4096, help="ids per process")
        s.add_argument("-b", "--bits", type=int, default=4, help="bits left in the random value")
        if nm == "simulate":
            s.add_argument("--worker", required=True)
            s.add_argument("--oid", required=True)
            s.add_argument("--time", type=int, default=1_700_000_000, help="the frozen second")
            s.add_argument("--concurrency", type=int, default=4)
            s.add_argument("--sigmas", type=float, default=5.0)
    args = ap.parse_args()
    return {"docs": cmd_docs, "expect": cmd_expect, "simulate": cmd_simulate}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
