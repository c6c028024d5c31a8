"""A Markdown table with padded columns, for the bench scripts' summaries (imported, not run)."""


def print_table(header, lines):
    """Prints `header` (a tuple of titles) and `lines` (lists of cells) as a Markdown table."""
    widths = [max(len(str(l[i])) for l in lines + [list(header)]) for i in range(len(header))]

    def show(cells):
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |")

    show(header)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for l in lines:
        show(l)
