"""What the Python suites against `fairloom up` share: free loopback ports and a
configuration directory for them (yarn-site.xml on those ports, 100 ms node heartbeats, plus
the scheduler's own file)."""

import os
import socket

FAIR = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
CAPACITY = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def configuration(props):
    """Hadoop's <configuration> XML of a dict of properties."""
    return "<configuration>" + "".join(
        f"<property><name>{k}</name><value>{v}</value></property>" for k, v in props.items()
    ) + "</configuration>"


def write_site(d, scheduler, files, extra=None):
    """yarn-site.xml in `d` for an RM on free ports with `scheduler` (a class name), `extra`
    properties, and `files` (name -> text) beside it. Returns the RM's web address."""
    ports = [free_port() for _ in range(3)]
    props = {
        "yarn.resourcemanager.scheduler.class": scheduler,
        "yarn.resourcemanager.webapp.address": f"127.0.0.1:{ports[0]}",
        "yarn.resourcemanager.resource-tracker.address": f"127.0.0.1:{ports[1]}",
        "yarn.resourcemanager.scheduler.address": f"127.0.0.1:{ports[2]}",
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "100",
        **(extra or {}),
    }
    os.makedirs(d, exist_ok=True)
    for name, text in {"yarn-site.xml": configuration(props), **files}.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    return f"http://127.0.0.1:{ports[0]}"
