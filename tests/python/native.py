# heaptape tests -- Python frames called from C (sorted's key) and calling C:
# `heaptape record --python=native` puts the native frames between them
# (tests/integration/python_native.sh).
keep = []


def key(i):
    keep.append("k" * 50 + str(i))  # KEY
    return -i


def main():
    return sorted(range(20000), key=key)  # SORTED


main()
