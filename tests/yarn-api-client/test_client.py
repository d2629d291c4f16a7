"""yarn-api-client 1.0.3 against `fairloom up` (Capacity Scheduler, two queues): every
ResourceManager method of the client except reservations, delegation tokens, scheduler-conf
and activities. Submits a DistributedShell app and watches it to FINISHED/SUCCEEDED, kills
another. Bounded: every wait has a deadline; fairloom is stopped at the end."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from rm_site import CAPACITY, configuration, write_site  # noqa: E402
from yarn_api_client.base import APIError  # noqa: E402
from yarn_api_client.auth import SimpleAuth  # noqa: E402
from yarn_api_client.resource_manager import ResourceManager  # noqa: E402


def write_conf(d):
    cs = {
        "yarn.scheduler.capacity.root.queues": "default,batch",
        "yarn.scheduler.capacity.root.default.capacity": "60",
        "yarn.scheduler.capacity.root.batch.capacity": "40",
        "yarn.scheduler.capacity.root.batch.maximum-capacity": "100",
    }
    return write_site(d, CAPACITY, {"capacity-scheduler.xml": configuration(cs)})


def wait(what, f, within=60):
    deadline = time.time() + within
    while time.time() < deadline:
        v = f()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def submit(rm, command, n, queue, name):
    app_id = rm.cluster_new_application().data["application-id"]
    body = {
        "application-id": app_id,
        "application-name": name,
        "application-type": "DISTRIBUTEDSHELL",
        "queue": queue,
        "am-container-spec": {
            "local-resources": {"entry": [{"key": "fairloom", "value": {
                "resource": "file://" + BIN, "type": "FILE", "visibility": "APPLICATION"}}]},
            "environment": {"entry": [{"key": "DISTRIBUTEDSHELL_COMMAND", "value": command}]},
            "commands": {"command": f"./fairloom shell-am --num-containers {n} --memory 1024 --vcores 1"
                                    " 1><LOG_DIR>/AppMaster.stdout 2><LOG_DIR>/AppMaster.stderr"},
        },
        "resource": {"memory": 1024, "vCores": 1},
        "application-tags": {"tag": ["yarn-api-client"]},
    }
    r = rm.cluster_submit_application(body)
    assert r.data == {}, r.data  # 202 with an empty body
    return app_id


def main():
    tmp = tempfile.mkdtemp(prefix="fairloom-yac-")
    conf = os.path.join(tmp, "conf")
    url = write_conf(conf)
    up = subprocess.Popen([BIN, "up", "--nodes", "2", "--conf", conf, "--dir", os.path.join(tmp, "state")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        run(url)
    finally:
        up.send_signal(signal.SIGINT)
        try:
            out, _ = up.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            out, _ = up.communicate()
        print(out)
    print("yarn-api-client: all calls passed")


def run(url):
    wait("the RM", lambda: _probe(url), 30)
    rm = ResourceManager(service_endpoints=[url], auth=SimpleAuth("alice"), timeout=30)
    info = rm.cluster_information().data["clusterInfo"]
    assert info["state"] == "STARTED" and info["haState"] == "ACTIVE", info
    wait("two nodes", lambda: rm.cluster_metrics().data["clusterMetrics"]["activeNodes"] == 2)
    sched = rm.cluster_scheduler().data["scheduler"]["schedulerInfo"]
    assert sched["type"] == "capacityScheduler", sched
    queue = rm.cluster_scheduler_queue("batch")
    assert queue["queuePath"] == "root.batch" and queue["capacity"] == 40.0, queue
    assert rm.cluster_queue_partition(queue, "")["partitionName"] == ""
    assert rm.cluster_scheduler_queue_availability(queue, 90) is True

    ok_id = submit(rm, "echo hello", 3, "default", "ok-app")
    kill_id = submit(rm, "sleep 60", 1, "batch", "to-kill")

    app = rm.cluster_application(ok_id).data["app"]
    assert app["user"] == "alice" and app["applicationType"] == "DISTRIBUTEDSHELL", app
    assert rm.cluster_application_state(ok_id).data["state"] in ("ACCEPTED", "RUNNING", "FINISHED")
    apps = rm.cluster_applications(states=["ACCEPTED", "RUNNING", "FINISHED"], user="alice",
                                   application_tags=["yarn-api-client"]).data["apps"]["app"]
    assert {a["id"] for a in apps} >= {ok_id, kill_id}, apps
    assert rm.cluster_applications(queue="batch").data["apps"]["app"][0]["id"] == kill_id
    assert rm.cluster_applications(user="nobody").data["apps"] is None

    final = wait("the shell app to finish", lambda: _final(rm, ok_id), 90)
    assert final == ("FINISHED", "SUCCEEDED"), final
    attempts = rm.cluster_application_attempts(ok_id).data["appAttempts"]["appAttempt"]
    assert len(attempts) == 1, attempts
    attempt_id = attempts[0]["appAttemptId"]
    assert rm.cluster_application_attempt_info(ok_id, attempt_id).data["appAttempt"]["id"] == 1

    # The app to kill runs: its containers are listed under its attempt.
    wait("the app to kill to run its container",
         lambda: rm.cluster_application(kill_id).data["app"]["runningContainers"] == 2)
    k_attempt = rm.cluster_application_attempts(kill_id).data["appAttempts"]["appAttempt"][0]["appAttemptId"]
    containers = rm.cluster_application_attempt_containers(kill_id, k_attempt).data["containers"]["container"]
    assert len(containers) == 2, containers
    one = containers[0]["containerId"]
    got = rm.cluster_application_attempt_container_info(kill_id, k_attempt, one).data["container"]
    assert got["containerId"] == one
    assert rm.cluster_get_application_queue(kill_id).data["queue"] == "root.batch"
    assert rm.cluster_change_application_queue(kill_id, "default").data["queue"] == "root.default"
    assert rm.cluster_get_application_priority(kill_id).data["priority"] == 0
    assert rm.cluster_change_application_priority(kill_id, 5).data["priority"] == 5
    assert rm.cluster_application_timeouts(kill_id).data["timeouts"]["timeout"][0]["type"] == "LIFETIME"
    assert rm.cluster_application_timeout(kill_id, "LIFETIME").data["timeout"]["expiryTime"] == "UNLIMITED"
    expect_error(lambda: rm.cluster_update_application_timeout(kill_id, "LIFETIME", "2030-01-01T00:00:00.000+0000"),
                 "not supported")
    expect_error(lambda: rm.cluster_container_signal(one, "OUTPUT_THREAD_DUMP"), "not supported")
    rm.cluster_application_kill(kill_id)
    assert wait("the kill", lambda: _final(rm, kill_id)) == ("KILLED", "KILLED")

    stats = rm.cluster_application_statistics(states=["FINISHED", "KILLED"]).data["appStatInfo"]["statItem"]
    assert {(s["state"], s["count"]) for s in stats} == {("FINISHED", 1), ("KILLED", 1)}, stats
    nodes = rm.cluster_nodes().data["nodes"]["node"]
    assert len(nodes) == 2 and all(n["state"] == "RUNNING" for n in nodes), nodes
    node = rm.cluster_node(nodes[0]["id"]).data["node"]
    assert node["id"] == nodes[0]["id"]
    expect_error(lambda: rm.cluster_node_update_resource(node["id"], {"resource": {"memory": 1, "vCores": 1}}),
                 "not supported")
    expect_error(lambda: rm.cluster_application("application_1_9999"), "not found")


def expect_error(f, text):
    try:
        f()
    except APIError as e:
        assert text in str(e), str(e)
        return
    raise AssertionError(f"expected an error containing '{text}'")


def _final(rm, app_id):
    a = rm.cluster_application(app_id).data["app"]
    return (a["state"], a["finalStatus"]) if a["state"] in ("FINISHED", "FAILED", "KILLED") else None


def _probe(url):
    import urllib.request
    try:
        return urllib.request.urlopen(url + "/cluster", timeout=2).status == 200
    except Exception:
        return False


if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv[1])
    main()
