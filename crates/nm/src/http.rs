//! The NodeManager's web server: YARN's `/ws/v1/node` REST, and ContainerManagementProtocol
//! (start and stop containers) for AMs, which must show the RM's container token.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use fairloom_protocol::node::{StartContainersRequest, StartContainersResponse, StopContainersRequest};
use fairloom_protocol::{exit, paths, ContainerState, RemoteException, RemoteExceptionBody};

use crate::container::{self, Ctr};
use crate::Node;

pub fn router(node: Node) -> Router {
    Router::new()
        .route("/ws/v1/node", get(info))
        .route("/ws/v1/node/info", get(info))
        .route("/ws/v1/node/containers", get(containers))
        .route("/ws/v1/node/containers/{id}", get(one_container))
        .route("/ws/v1/node/apps", get(apps))
        .route(paths::START_CONTAINERS, post(start))
        .route(paths::STOP_CONTAINERS, post(stop))
        .route("/metrics", get(prometheus))
        .with_state(node)
}

async fn prometheus(State(node): State<Node>) -> Response {
    let mut r = node.env.metrics.render(&node.table).into_response();
    r.headers_mut()
        .insert("content-type", axum::http::HeaderValue::from_static(fairloom_protocol::OPENMETRICS_CONTENT_TYPE));
    r
}

fn json_response(status: StatusCode, v: &impl serde::Serialize) -> Response {
    let mut r = (status, serde_json::to_vec(v).unwrap_or_default()).into_response();
    r.headers_mut().insert("content-type", axum::http::HeaderValue::from_static("application/json"));
    r
}

fn error(status: StatusCode, exception: &str, message: String) -> Response {
    let body = RemoteExceptionBody {
        remote_exception: RemoteException {
            exception: exception.to_string(),
            message,
            java_class_name: format!("org.apache.hadoop.yarn.webapp.{exception}"),
        },
    };
    json_response(status, &body)
}

async fn info(State(node): State<Node>) -> Response {
    let (used_mb, used_vc) = node
        .table
        .lock()
        .map(|t| {
            t.values()
                .filter(|c| c.state != ContainerState::Complete)
                .fold((0, 0), |(m, v), c| (m + c.resource.memory, v + c.resource.vcores))
        })
        .unwrap_or((0, 0));
    let v = json!({ "nodeInfo": {
        "id": node.id,
        "nodeHostName": node.env.host,
        "healthReport": "",
        "nodeHealthy": true,
        "lastNodeUpdateTime": super::now_ms(),
        "totalVmemAllocatedContainersMB": node.conf.resource.memory * 21 / 10,
        "totalPmemAllocatedContainersMB": node.conf.resource.memory,
        "totalVCoresAllocatedContainers": node.conf.resource.vcores,
        "vmemCheckEnabled": false,
        "pmemCheckEnabled": false,
        "nodeManagerVersion": env!("CARGO_PKG_VERSION"),
        "nodeManagerBuildVersion": concat!("fairloom ", env!("CARGO_PKG_VERSION")),
        "nodeManagerVersionBuiltOn": "",
        "hadoopVersion": "3.4.0 (fairloom-compatible)",
        "hadoopBuildVersion": "",
        "hadoopVersionBuiltOn": "",
        "nmStartupTime": node.started_on,
        "usedMemoryMB": used_mb,
        "usedVirtualCores": used_vc,
    }});
    json_response(StatusCode::OK, &v)
}

fn container_info(node: &Node, c: &Ctr) -> Value {
    let state = match c.state {
        ContainerState::New => "NEW",
        ContainerState::Running if c.kill_status.is_some() => "KILLING",
        ContainerState::Running => "RUNNING",
        ContainerState::Complete => "COMPLETE",
    };
    json!({
        "id": c.id,
        "state": state,
        "exitCode": c.exit_status,
        "diagnostics": c.diagnostics,
        "user": c.user,
        "totalMemoryNeededMB": c.resource.memory,
        "totalVCoresNeeded": c.resource.vcores,
        "containerLogsLink": format!("http://{}/node/containerlogs/{}/{}", node.http_address, c.id, c.user),
        "nodeId": node.id,
        "containerLogFiles": ["stdout", "stderr"],
        "containerLogDir": c.log_dir.display().to_string(),
        "workDir": c.work_dir.display().to_string(),
    })
}

async fn containers(State(node): State<Node>) -> Response {
    let list: Vec<Value> =
        node.table.lock().map(|t| t.values().map(|c| container_info(&node, c)).collect()).unwrap_or_default();
    let v =
        if list.is_empty() { json!({ "containers": null }) } else { json!({ "containers": { "container": list } }) };
    json_response(StatusCode::OK, &v)
}

async fn one_container(State(node): State<Node>, Path(id): Path<String>) -> Response {
    let found = node.table.lock().ok().and_then(|t| t.get(&id).map(|c| container_info(&node, c)));
    match found {
        Some(c) => json_response(StatusCode::OK, &json!({ "container": c })),
        None if id.parse::<fairloom_model::ContainerId>().is_err() => {
            error(StatusCode::BAD_REQUEST, "BadRequestException", format!("invalid container id, {id}"))
        }
        None => error(StatusCode::NOT_FOUND, "NotFoundException", format!("container with id, {id}, not found")),
    }
}

async fn apps(State(node): State<Node>) -> Response {
    let mut ids: Vec<(String, String)> =
        node.table.lock().map(|t| t.values().map(|c| (c.app.clone(), c.user.clone())).collect()).unwrap_or_default();
    ids.sort();
    ids.dedup();
    let list: Vec<Value> = ids.iter().map(|(a, u)| json!({ "id": a, "state": "RUNNING", "user": u })).collect();
    let v = if list.is_empty() { json!({ "apps": null }) } else { json!({ "apps": { "app": list } }) };
    json_response(StatusCode::OK, &v)
}

async fn start(State(node): State<Node>, body: Bytes) -> Response {
    let req: StartContainersRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "BadRequestException",
                format!("malformed startContainers body: {e}"),
            )
        }
    };
    let key = node.key.lock().ok().and_then(|k| k.clone());
    let mut out = StartContainersResponse { started: Vec::new(), failed: Vec::new() };
    for s in &req.containers {
        let valid = key
            .as_ref()
            .is_some_and(|k| k.check_container_token(&s.container_id, &node.id, &s.user, s.resource, &s.token));
        if !valid {
            tracing::warn!("refused to start container {}: invalid container token", s.container_id);
            out.failed.push((
                s.container_id.clone(),
                format!("Unauthorized request to start container {}: invalid container token", s.container_id),
            ));
            continue;
        }
        // The blocking work (directories, links, archives, fork) stays off the async workers.
        let (table, env, spec) = (node.table.clone(), node.env.clone(), s.clone());
        let launched = tokio::task::spawn_blocking(move || container::launch(&table, &env, &spec)).await;
        match launched {
            Ok(Ok(())) => out.started.push(s.container_id.clone()),
            Ok(Err(e)) => out.failed.push((s.container_id.clone(), e)),
            Err(e) => out.failed.push((s.container_id.clone(), e.to_string())),
        }
    }
    let status = if out.started.is_empty() && !out.failed.is_empty() { StatusCode::FORBIDDEN } else { StatusCode::OK };
    json_response(status, &out)
}

async fn stop(State(node): State<Node>, body: Bytes) -> Response {
    let req: StopContainersRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(StatusCode::BAD_REQUEST, "BadRequestException", format!("malformed stopContainers body: {e}"))
        }
    };
    for id in &req.container_ids {
        container::kill(
            &node.table,
            id,
            exit::KILLED_BY_APPMASTER,
            "Container killed by the ApplicationMaster.",
            node.env.kill_delay,
        );
    }
    json_response(StatusCode::OK, &json!({}))
}
