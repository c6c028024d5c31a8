#!/usr/bin/env python3
"""Writes a C++ example of a documentation page to a file, for the build to compile.

    tests/doc_example_extract.py PAGE NAME OUT

The example is the ```cpp block right after the line `<!-- compiled example: NAME ... -->` of
PAGE. Exit status 1 (and nothing written) when PAGE has no such block, so that a page edited
without its example fails the build rather than dropping the test.
"""
import pathlib
import re
import sys


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    page, name, out = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
    lines = page.read_text(encoding="utf-8").splitlines()
    marker = re.compile(r"<!--\s*compiled example:\s*" + re.escape(name) + r"\b")
    for i, line in enumerate(lines):
        if not marker.search(line):
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```cpp":
            break
        body = []
        for code in lines[i + 2:]:
            if code.strip() == "```":
                text = f"// Extracted from {page.name} (example {name}); edit it there.\n"
                text += "\n".join(body) + "\n"
                if not out.exists() or out.read_text(encoding="utf-8") != text:
                    out.write_text(text, encoding="utf-8")
                return 0
            body.append(code)
        break
    print(f"{page}: no ```cpp block after '<!-- compiled example: {name} -->'", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
