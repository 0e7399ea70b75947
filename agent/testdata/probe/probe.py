#!/usr/bin/python3
"""A scripted agent that checks, from inside its sandbox, what the agent
contract promises, and reports each finding as JSON in /out/RESULT.md.

As a writer it also writes a test file and criteria.json; as an
implementer it edits /workspace."""
import json, os, socket, stat, subprocess, sys, urllib.error, urllib.request

report = {}


def run(*argv):
    p = subprocess.run(argv, capture_output=True, text=True, cwd="/workspace")
    return p.returncode, p.stdout.strip(), p.stderr.strip()


task = json.load(open("/task/task.json"))
report["task"] = task
report["task_md_has_title"] = "Add a greeting" in open("/task/TASK.md").read()
report["uid"] = os.getuid()
report["home"] = os.environ.get("HOME")
report["cwd"] = os.getcwd()

# The workspace: one commit on main, nothing else.
report["log_all"] = run("git", "log", "--all", "--format=%H %s")[1].splitlines()
report["branches"] = run("git", "branch", "-a")[1].splitlines()
report["tags"] = run("git", "tag")[1].splitlines()
report["remotes"] = run("git", "remote", "-v")[1].splitlines()
report["refs"] = run("git", "for-each-ref", "--format=%(refname)")[1].splitlines()
report["config"] = run("git", "config", "--list", "--local")[1].splitlines()
report["objects_stored"] = sorted(run("git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")[1].split())
report["objects_reachable"] = sorted(l.split()[0] for l in run("git", "rev-list", "--objects", "--all")[1].splitlines())
report["status"] = run("git", "status", "--porcelain", "--ignored")[1].splitlines()
report["head_files"] = run("git", "ls-tree", "-r", "--name-only", "HEAD")[1].splitlines()

# No credential: the environment, and every file outside the image's /usr.
report["env"] = dict(os.environ)
found = []
for top in ["/workspace", "/task", "/agent", "/out", "/tmp", "/etc", "/run", "/root", "/home", "/var", "/opt"]:
    for dirpath, dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                if not stat.S_ISREG(os.lstat(p).st_mode):
                    continue
                data = open(p, "rb").read(4 << 20)
            except OSError:
                continue
            # Joined here, so this file does not hold them.
            for marker in (b"sk-" + b"real-", b"gh" + b"p_", b"gh" + b"s_", b"github" + b"_pat_", b"AK" + b"IA"):
                if marker in data:
                    found.append([p, marker.decode()])
report["secrets_in_files"] = found

# Directories.
def writable(p):
    try:
        with open(os.path.join(p, ".probe"), "w") as f:
            f.write("x")
        os.remove(os.path.join(p, ".probe"))
        return True
    except OSError:
        return False
report["agent_writable"] = writable("/agent")
report["task_writable"] = writable("/task")
report["out_writable"] = writable("/out")
report["agent_files"] = sorted(os.listdir("/agent"))

# A direct connection goes nowhere: only loopback exists.
direct = {}
for host, port in [("1.1.1.1", 443), ("140.82.112.3", 443), ("172.17.0.1", 2375), ("169.254.169.254", 80)]:
    try:
        socket.create_connection((host, port), timeout=3).close()
        direct[f"{host}:{port}"] = "connected"
    except OSError as e:
        direct[f"{host}:{port}"] = "refused: " + str(e)
try:
    socket.getaddrinfo("github.com", 443)
    direct["dns"] = "resolved"
except OSError as e:
    direct["dns"] = "refused: " + str(e)
report["direct"] = direct
report["interfaces"] = sorted(os.listdir("/sys/class/net"))


def fetch(url, data=None, headers=None, proxy=True):
    handlers = [] if proxy else [urllib.request.ProxyHandler({})]
    opener = urllib.request.build_opener(*handlers)
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with opener.open(req, timeout=20) as r:
            return [r.status, r.read().decode(errors="replace")[:500]]
    except urllib.error.HTTPError as e:
        return [e.code, e.read().decode(errors="replace")[:500]]
    except Exception as e:
        return [0, repr(e)[:500]]


# GitHub through the proxy: refused, even though the harness lists it.
report["github_https"] = fetch("https://github.com/")
report["github_api_http"] = fetch("http://api.github.com/repos/testfirst-app/testfirst")
report["githubusercontent"] = fetch("https://raw.githubusercontent.com/testfirst-app/testfirst/main/README.md")
code, out, err = run("git", "ls-remote", "https://github.com/testfirst-app/testfirst.git")
report["git_ls_remote"] = [code, err[-300:]]
report["other_host"] = fetch("http://example.com/")

# The model API through the proxy, with the placeholder key.
base = os.environ["ANTHROPIC_BASE_URL"]
body = json.dumps({"model": "probe", "messages": [{"role": "user", "content": "hello from the sandbox"}]}).encode()
hdrs = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"}
report["model_direct"] = fetch(base + "/v1/messages", body, hdrs)

# A proxy request for the relay's own address (a client that ignores no_proxy).
saved = {k: os.environ.pop(k) for k in ("no_proxy", "NO_PROXY") if k in os.environ}
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["HTTP_PROXY"]}))
try:
    with opener.open(urllib.request.Request(base + "/v1/messages", data=body, headers=hdrs), timeout=20) as r:
        report["model_via_proxy"] = [r.status, r.read().decode()[:500]]
except Exception as e:
    report["model_via_proxy"] = [0, repr(e)]
os.environ.update(saved)

if task["role"] == "writer":
    os.makedirs("/out/tests/tests", exist_ok=True)
    with open("/out/tests/tests/test_greet.py", "w") as f:
        f.write("from greet import hello\n\n\ndef test_hello():\n    assert hello() == 'hello'\n")
    json.dump({"says hello": ["tests/test_greet.py::test_hello"]}, open("/out/criteria.json", "w"))
else:
    with open("/workspace/greet.py", "a") as f:
        f.write("\n\ndef hello():\n    return 'hello'\n")
    os.remove("/workspace/obsolete.txt")
    with open("/workspace/new_module.py", "w") as f:
        f.write("VALUE = 1\n")
    os.chmod("/workspace/tool.sh", 0o755)
    os.symlink("greet.py", "/workspace/alias.py")
    # Changes under .git are not the implementer's diff.
    with open("/workspace/.git/description", "w") as f:
        f.write("changed\n")

with open("/out/RESULT.md", "w") as f:
    json.dump(report, f, indent=1)
print("probe done")
print("to stderr", file=sys.stderr)
