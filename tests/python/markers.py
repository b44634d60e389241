"""Test helper: the line of a source file that ends with a marker comment."""


def line_of(path, marker):
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise SystemExit("no marker " + marker)
