#!/usr/bin/env python3
"""Runs the shell examples of README.md and docs/*.md and compares their output exactly.

    tests/doc_examples_test.py --oid build/ci/cli/oid [--root .] [-v]

An example is a ```console block. In it, a line starting with "$ " is a command; a command
whose line ends with "\\" or "|" goes on over the next lines. The lines after a command, up to
the next command or the end of the block, are what it prints. The commands of one block run in
order in one bash shell, in a fresh empty directory, with the `oid` given by --oid first on
PATH, so a block may make its own input files (`printf ... > people.json`) for the commands
after it. A command's standard output must equal its lines that do not start with "oid: ", and
its standard error its lines that do (every error line of the command starts so); the order
between the two is not checked, since stdout is buffered and stderr is not.

Exceptions, so that a page can also show what cannot be compared exactly:
  - A new id differs on every run: for `oid` with no arguments, `oid new ...` and a command
    with `--ensure-id`, each printed
    line must have the shape of its example line (any 24 hex digits where the example has 24,
    any 16 base64 characters where it has a 16-character base64 word; the rest exactly, and as
    many lines).
  - `<!-- doc-test: skip REASON -->` on the line before a block's opening fence: the block is not
    run (it needs a MongoDB server, say); the reason is printed.

Links between the pages (`[text](command.md#oid-bson)`) must lead to a file, and to a heading of
it when they name one.

Exit status 0 when every example matched, 1 when one did not (each mismatch is printed with the
file and line of its command), 2 when the test cannot run (no oid, no examples found).
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

SKIP = re.compile(r"<!--\s*doc-test:\s*skip\b\s*(.*?)\s*-->")
HEX_ID = re.compile(r"\b[0-9a-f]{24}\b")
BASE64_ID = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16}(?![A-Za-z0-9+/_-])")


class Command:
    def __init__(self, path, line, text):
        self.path, self.line, self.text = path, line, text
        self.output = []  # the lines the page says it prints

    def where(self):
        return f"{self.path}:{self.line}"

    def varies(self):
        """True for the commands that make new ids: `oid` alone, `oid new ...` and any with
        --ensureId (which gives a document without an _id a new one)."""
        words = self.text.split("#", 1)[0].split()
        return (words == ["oid"] or words[:2] == ["oid", "new"] or "--ensureId" in words
                or "--ensure-id" in words)


class Block:
    def __init__(self, path, line, skip):
        self.path, self.line, self.skip = path, line, skip
        self.commands = []


def parse(path, text):
    """The console blocks of one Markdown file."""
    blocks, block, command = [], None, None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if block is None:
            if line.strip() == "```console":
                skip = SKIP.search(lines[i - 1]) if i > 0 else None
                block = Block(path, i + 1, skip.group(1) or "no reason given" if skip else None)
            i += 1
            continue
        if line.strip() == "```":
            blocks.append(block)
            block, command = None, None
        elif line.startswith("$ "):
            start, cmd = i + 1, line[2:]
            while cmd.rstrip().endswith(("\\", "|")) and i + 1 < len(lines):
                i += 1
                cmd += "\n" + lines[i]
            command = Command(path, start, cmd)
            block.commands.append(command)
        elif command is None:
            raise SystemExit(f"{path}:{i + 1}: output before the first command of the block")
        else:
            command.output.append(line)
        i += 1
    if block is not None:
        raise SystemExit(f"{path}:{block.line}: console block without its closing fence")
    return blocks


LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.lstrip("#").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def broken_links(root, pages):
    """Links from one page to another (or to a file of the repository) that lead nowhere."""
    problems = []
    for page in pages:
        for n, line in enumerate(page.read_text().split("\n"), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, https:, mailto:
                path, _, anchor = target.partition("#")
                dest = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(root)}:{n}: link {target}"
                if not dest.exists():
                    problems.append(f"{where}: no such file")
                elif anchor and dest.suffix == ".md":
                    headings = [l for l in dest.read_text().split("\n") if l.startswith("#")]
                    if anchor not in {slug(h) for h in headings}:
                        problems.append(f"{where}: no such heading in {path or 'this page'}")
    return problems


def shape(example):
    """A regular expression for the lines an id-making command may print instead of `example`."""
    pattern, last = "", 0
    spans = sorted([m.span() for m in HEX_ID.finditer(example)] +
                   [m.span() for m in BASE64_ID.finditer(example) if not HEX_ID.fullmatch(m.group())])
    for start, end in spans:
        if start < last:
            continue
        pattern += re.escape(example[last:start])
        pattern += "[0-9a-f]{24}" if end - start == 24 else "[A-Za-z0-9+/_-]{16}"
        last = end
    return re.compile(pattern + re.escape(example[last:]))


def run_block(block, oid_dir):
    """Runs the commands of a block in one shell; returns their (stdout, stderr) texts."""
    with tempfile.TemporaryDirectory(prefix="oid-doc-") as tmp:
        work = pathlib.Path(tmp, "work")
        outs = pathlib.Path(tmp, "outs")
        work.mkdir()
        outs.mkdir()
        script = []
        for n, c in enumerate(block.commands):
            script.append(f"{{\n{c.text}\n}} >'{outs}/{n}.out' 2>'{outs}/{n}.err'")
        env = dict(os.environ, PATH=f"{oid_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                   LC_ALL="C.UTF-8", TZ="UTC")
        subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(script)], cwd=work,
                       env=env, stdin=subprocess.DEVNULL, check=False, timeout=120)
        results = []
        for n in range(len(block.commands)):
            pair = []
            for ext in ("out", "err"):
                f = pathlib.Path(outs, f"{n}.{ext}")
                pair.append(f.read_text(errors="replace") if f.exists() else "<not run>\n")
            results.append(tuple(pair))
        return results


def lines_of(text):
    """The lines of a command's output (a last line without its newline counts too)."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def check(command, out, err):
    """What is wrong with one command's output, or None."""
    want_out = [l for l in command.output if not l.startswith("oid: ")]
    want_err = [l for l in command.output if l.startswith("oid: ")]
    got_out, got_err = lines_of(out), lines_of(err)
    problems = []
    if command.varies():
        if len(got_out) != len(want_out) or not all(
                shape(w).fullmatch(g) for w, g in zip(want_out, got_out)):
            problems.append(("stdout (shape)", want_out, got_out))
    elif got_out != want_out:
        problems.append(("stdout", want_out, got_out))
    if got_err != want_err:
        problems.append(("stderr", want_err, got_err))
    if not problems:
        return None
    text = f"{command.where()}: $ {command.text}\n"
    for what, want, got in problems:
        text += f"  {what} differs\n    the page says:\n"
        text += "".join(f"      {l}\n" for l in want) or "      (nothing)\n"
        text += "    oid printed:\n"
        text += "".join(f"      {l}\n" for l in got) or "      (nothing)\n"
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--oid", required=True, help="the built oid command")
    ap.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                    type=pathlib.Path, help="the source tree (default: this file's)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every command checked")
    args = ap.parse_args()

    oid = pathlib.Path(args.oid).resolve()
    if not os.access(oid, os.X_OK):
        print(f"doc_examples: no oid command at {oid}", file=sys.stderr)
        return 2
    # A directory with the binary under the name the examples use.
    bindir = tempfile.TemporaryDirectory(prefix="oid-doc-bin-")
    os.symlink(oid, pathlib.Path(bindir.name, "oid"))

    pages = [args.root / "README.md"] + sorted((args.root / "docs").glob("*.md"))
    blocks = []
    for page in pages:
        blocks += parse(page.relative_to(args.root), page.read_text())

    failures, checked, shaped, skipped = broken_links(args.root, pages), 0, 0, 0
    for block in blocks:
        if block.skip is not None:
            skipped += 1
            print(f"{block.path}:{block.line}: skipped: {block.skip}")
            continue
        for command, (out, err) in zip(block.commands, run_block(block, bindir.name)):
            checked += 1
            shaped += command.varies()
            problem = check(command, out, err)
            if problem:
                failures.append(problem)
            elif args.verbose:
                print(f"{command.where()}: ok: $ {command.text.splitlines()[0]}")

    if checked == 0:
        print("doc_examples: no example found to check", file=sys.stderr)
        return 2
    for f in failures:
        print(f, file=sys.stderr)
    print(f"doc_examples: {len(pages)} pages, {len(blocks)} console blocks ({skipped} skipped), "
          f"{checked} commands checked ({shaped} by shape), {len(failures)} wrong (links included)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
