# The fake E2B's network inside a sandbox: for each address given
# ("127.0.0.2:8080"), listen there and join every connection to the fake's
# unix socket for it.
import socket, sys, threading

def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass

def serve(l, name):
    while True:
        c, _ = l.accept()
        u = socket.socket(socket.AF_UNIX)
        try:
            u.connect("/run/fakee2b/" + name)
        except OSError:
            c.close()
            continue
        threading.Thread(target=pipe, args=(c, u), daemon=True).start()
        threading.Thread(target=pipe, args=(u, c), daemon=True).start()

for a in sys.argv[1:]:
    host, port = a.rsplit(":", 1)
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind((host, int(port)))
    l.listen(64)
    threading.Thread(target=serve, args=(l, a.replace(":", "_") + ".sock"), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
