# append-to-solution
# Tries to reach the network: a public address, and a server the grading machine's test
# listens on (the test writes its port in place of __PORT__).
import socket as _socket


def reach():
    reached = []
    for host, port in (("1.1.1.1", 53), ("127.0.0.1", int("__PORT__"))):
        try:
            with _socket.create_connection((host, port), timeout=1):
                reached.append(f"{host}:{port}")
        except OSError:
            pass
    return reached
