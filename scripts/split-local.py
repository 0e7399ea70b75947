#!/usr/bin/python3
"""Runs split grading's two sides on this host, as one uid, the way
wrapper/split_test.go's runSplitLocally does: for measuring the protocol
on a real suite without a sandbox (docs/benchmarks.md, "Split grading").

usage: scripts/split-local.py HIDDEN_DIR REPO_DIR
       scripts/split-local.py --pyparsing MIRROR_GIT_DIR WORK_DIR

The second form lays out pyparsing's fix commit efd56db4 (the project's
list, test/testdata/realrepos.json) in WORK_DIR: the commit's tree without
its tests as the tree, tests/test_unit.py and its support as the hidden
tests, and a plain copy; then times plain pytest and the split on it.
The trees' code runs on this host: only trees you trust. PYTEST_ADDOPTS
reaches the trusted side (-k CLASS for one class)."""
import os, shutil, socket, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(HERE, "..", "wrapper", "python")
PYTHON = "/usr/bin/python3"
PYPARSING = ("efd56db4e59f36b1673ce0eb0823e3afaa9d1201", ["conftest.py", "tests/__init__.py", "tests/test_unit.py",
             "tests/json_parser_tests.py", "tests/karthik.ini", "tests/parsefiletest_input_file.txt",
             "tests/diag_embed.html", "tests/diag_no_embed.html"])


def split(hidden, repo_src, out):
    repo = tempfile.mkdtemp(prefix="split-local-")
    shutil.rmtree(repo)
    shutil.copytree(repo_src, repo)
    a, b = socket.socketpair()
    tree = subprocess.Popen([PYTHON, "-I", os.path.join(PY, "testfirst_tree.py"), str(b.fileno()), "", repo], cwd=repo,
                            pass_fds=[b.fileno()], stdout=open(out + ".tree", "w"), stderr=subprocess.STDOUT)
    b.close()
    rr, rw = os.pipe()
    code = ("import sys; sys.path[:0] = [%r]; sys.path.append('/usr/lib/python3/dist-packages'); import pytest; "
            "raise SystemExit(pytest.console_main())" % PY)
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", TESTFIRST_SPLIT_FD=str(a.fileno()),
               TESTFIRST_SPLIT_REPORT_FD=str(rw), TESTFIRST_SPLIT_HIDDEN=hidden)
    argv = [PYTHON, "-I", "-S", "-c", code, "--noconftest", "-c", "/dev/null", "--rootdir", hidden, "-p", "no:cacheprovider",
            "-p", "testfirst_split", "-p", "testfirst_syspath", "--continue-on-collection-errors", "-q", "-ra", hidden]
    began = time.time()
    p = subprocess.Popen(argv, cwd=repo, env=env, pass_fds=[a.fileno(), rw], stdout=open(out, "w"), stderr=subprocess.STDOUT)
    a.close()
    os.close(rw)
    report = b""
    while chunk := os.read(rr, 1 << 16):
        report += chunk
    p.wait()
    wall = time.time() - began
    tree.wait(timeout=30)
    open(out + ".report.json", "wb").write(report)
    shutil.rmtree(repo, ignore_errors=True)
    return wall, last_line(out)


def last_line(path):
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    return lines[-1] if lines else ""


def main(argv):
    if len(argv) == 4 and argv[1] == "--pyparsing":
        mirror, work = argv[2], os.path.abspath(argv[3])
        commit, hidden_files = PYPARSING
        shutil.rmtree(work, ignore_errors=True)
        for d in ("repo", "hidden", "plain"):
            os.makedirs(os.path.join(work, d))
        archive = subprocess.run(["git", "-C", mirror, "archive", commit], check=True, capture_output=True).stdout
        for d in ("repo", "plain"):
            subprocess.run(["tar", "-x", "-C", os.path.join(work, d)], input=archive, check=True)
        for f in hidden_files:
            os.makedirs(os.path.dirname(os.path.join(work, "hidden", f)), exist_ok=True)
            shutil.move(os.path.join(work, "repo", f), os.path.join(work, "hidden", f))
        began = time.time()
        plain = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_unit.py"],
                               cwd=os.path.join(work, "plain"), capture_output=True, text=True)
        plain_wall = time.time() - began
        print("plain  %6.1fs  %s" % (plain_wall, [l for l in plain.stdout.splitlines() if l.strip()][-1]))
        wall, summary = split(os.path.join(work, "hidden"), os.path.join(work, "repo"), os.path.join(work, "split.out"))
        print("split  %6.1fs  %s" % (wall, summary))
        print("ratio  %.2fx" % (wall / plain_wall))
        return 0
    if len(argv) == 3:
        wall, summary = split(os.path.abspath(argv[1]), os.path.abspath(argv[2]), "/tmp/split-local.out")
        print("split  %6.1fs  %s  (output: /tmp/split-local.out)" % (wall, summary))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
