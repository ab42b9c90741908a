"""The results of the checks. A check adds (passed, name, detail); the command line prints them as
"PASS<TAB>name" / "FAIL<TAB>name<TAB>detail" lines, which helm/verify.sh counts."""

# One list per collect() in progress; the first gathers what the command line prints.
_results = [[]]


def check(name, cond, detail=""):
    _results[-1].append((bool(cond), name, "" if cond else str(detail)))


def collect(run, *args):
    """Runs run(*args) and returns the results of the checks it made, apart from everyone else's."""
    _results.append([])
    try:
        run(*args)
        return _results[-1]
    finally:
        _results.pop()


def failed_names(results):
    return [name for ok, name, _ in results if not ok]


def lines(results):
    return ["PASS\t%s" % name if ok else "FAIL\t%s\t%s" % (name, detail.replace("\n", " "))
            for ok, name, detail in results]


def printed():
    """What the command line prints: every check made outside a collect()."""
    return lines(_results[0])
