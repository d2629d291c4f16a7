//! The NodeManager's web server: YARN's `/ws/v1/node` REST, and ContainerManagementProtocol
//! (start and stop containers) for AMs, which must show the RM's container token.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use fairloom_serve::{html_escape, refusal_may_be_logged};
use serde_json::{json, Value};

use fairloom_protocol::node::{
    ContainerStatusesResponse, StartContainersRequest, StartContainersResponse, StopContainersRequest,
    StopContainersResponse,
};
use fairloom_protocol::token::NmTokenId;
use fairloom_protocol::{exit, paths, ContainerState, RemoteException, RemoteExceptionBody};

use crate::auth;
use crate::container::{self, Ctr, Launch};
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
        .route(paths::CONTAINER_STATUSES, post(statuses))
        .route("/node/containerlogs/{container}/{user}", get(container_logs))
        .route("/node/containerlogs/{container}/{user}/{file}", get(container_log_file))
        .route("/metrics", get(prometheus))
        .with_state(node)
}

/// The container's log directory, if `user` may read it on this node (see [`crate::logs`]).
fn log_dir_for(node: &Node, container: &str, user: &str) -> Result<std::path::PathBuf, crate::logs::Refusal> {
    use crate::logs::refuse;
    if node.conf.acl_enabled {
        return Err(refuse(
            403,
            "not supported: with yarn.acl.enable this NodeManager cannot tell who may view an application's logs; read them on the node",
        ));
    }
    if container.parse::<fairloom_model::ContainerId>().is_err() {
        return Err(refuse(400, format!("invalid container id, {}", container.escape_debug())));
    }
    let found = node.table.lock().ok().and_then(|t| t.get(container).map(|c| (c.user.clone(), c.log_dir.clone())));
    let Some((owner, dir)) = found else {
        return Err(refuse(404, format!("container {container} is not on this node (or finished too long ago)")));
    };
    crate::logs::check_owner(container, &owner, user)?;
    Ok(dir)
}

fn log_refusal(r: crate::logs::Refusal) -> Response {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = (status, r.message).into_response();
    resp.headers_mut().insert("content-type", axum::http::HeaderValue::from_static("text/plain; charset=utf-8"));
    resp
}

/// Every log file of the container, each with (the end of) its text, as YARN's page shows.
async fn container_logs(State(node): State<Node>, Path((container, user)): Path<(String, String)>) -> Response {
    let dir = match log_dir_for(&node, &container, &user) {
        Ok(d) => d,
        Err(r) => return log_refusal(r),
    };
    let mut body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Logs of {c}</title></head><body><h1>Logs of {c}</h1>",
        c = html_escape(&container)
    );
    let files = crate::logs::files(&dir);
    if files.is_empty() {
        body.push_str("<p>No log files yet.</p>");
    }
    for (name, len) in files {
        let href = format!("/node/containerlogs/{container}/{user}/{name}");
        let shown = crate::logs::tail(&dir.join(&name), crate::logs::PAGE_TAIL_BYTES).unwrap_or_default();
        let note = if len > crate::logs::PAGE_TAIL_BYTES {
            format!(" (its last {} bytes here)", crate::logs::PAGE_TAIL_BYTES)
        } else {
            String::new()
        };
        body.push_str(&format!(
            "<h2 id=\"{n}\">{n}</h2><p>Log Length: {len}{note} · <a href=\"{h}\">whole file</a></p><pre>{t}</pre>",
            n = html_escape(&name),
            h = html_escape(&href),
            t = html_escape(&shown)
        ));
    }
    body.push_str("</body></html>");
    let mut resp = body.into_response();
    resp.headers_mut().insert("content-type", axum::http::HeaderValue::from_static("text/html; charset=utf-8"));
    resp
}

/// One log file of the container, whole, as text.
async fn container_log_file(
    State(node): State<Node>,
    Path((container, user, file)): Path<(String, String, String)>,
) -> Response {
    let path = match log_dir_for(&node, &container, &user).and_then(|d| crate::logs::file_in(&d, &file)) {
        Ok(p) => p,
        Err(r) => return log_refusal(r),
    };
    // The whole file up to a bound (a runaway log must not be read into memory whole).
    let read = tokio::task::spawn_blocking(move || crate::logs::tail(&path, crate::logs::FILE_MAX_BYTES)).await;
    match read.map_err(|e| std::io::Error::other(e.to_string())).and_then(|r| r) {
        Ok(bytes) => {
            let mut resp = bytes.into_response();
            resp.headers_mut()
                .insert("content-type", axum::http::HeaderValue::from_static("text/plain; charset=utf-8"));
            resp
        }
        Err(e) => log_refusal(crate::logs::refuse(500, format!("cannot read {file}: {e}"))),
    }
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

/// Who calls `what` (its NM token, checked before anything else: 403 without a valid one),
/// and the request in the body (400 when malformed).
fn authorized<T: serde::de::DeserializeOwned>(
    node: &Node,
    headers: &HeaderMap,
    body: &Bytes,
    what: &str,
) -> Result<(NmTokenId, T), Box<Response>> {
    let header = headers.get(paths::NM_TOKEN_HEADER).and_then(|v| v.to_str().ok());
    let who = node.guard.nm_token(header).map_err(|why| {
        if refusal_may_be_logged() {
            tracing::warn!("refused {what}: {why}");
        }
        Box::new(token_error(why))
    })?;
    let req = serde_json::from_slice(body).map_err(|e| {
        Box::new(error(StatusCode::BAD_REQUEST, "BadRequestException", format!("malformed {what} body: {e}")))
    })?;
    Ok((who, req))
}

fn token_error(message: String) -> Response {
    let body = RemoteExceptionBody {
        remote_exception: RemoteException {
            exception: "InvalidToken".to_string(),
            message,
            java_class_name: "org.apache.hadoop.security.token.SecretManager$InvalidToken".to_string(),
        },
    };
    json_response(StatusCode::FORBIDDEN, &body)
}

/// ContainerManagementProtocol.startContainers: with an NM token for this node, each
/// container of the caller's application that has a good container token starts; the others
/// are listed with why.
async fn start(State(node): State<Node>, headers: HeaderMap, body: Bytes) -> Response {
    let (who, req): (NmTokenId, StartContainersRequest) = match authorized(&node, &headers, &body, "startContainers") {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let mut out = StartContainersResponse { started: Vec::new(), failed: Vec::new() };
    for s in req.containers {
        let now = crate::now_ms();
        let checked = node
            .guard
            .container_token(&s.token, now)
            .and_then(|id| auth::may_start(&who, &id).map(|_| id))
            .and_then(|id| node.guard.first_start(&id, now).map(|_| id));
        let id = match checked {
            Ok(id) => id,
            Err(why) => {
                let cid = s.id().map(|i| i.container.to_string()).unwrap_or_else(|_| "(unreadable token)".into());
                if refusal_may_be_logged() {
                    tracing::warn!("refused to start {cid} for {}: {why}", who.attempt);
                }
                out.failed.push((cid, why));
                continue;
            }
        };
        let cid = id.container.to_string();
        // The blocking work (directories, links, archives, fork) stays off the async workers.
        let (table, env) = (node.table.clone(), node.env.clone());
        let launched = tokio::task::spawn_blocking(move || {
            container::launch(
                &table,
                &env,
                &Launch { id: &id, context: &s.launch, credentials: s.credentials.as_deref() },
            )
        })
        .await;
        match launched {
            Ok(Ok(())) => out.started.push(cid),
            Ok(Err(e)) => out.failed.push((cid, e)),
            Err(e) => out.failed.push((cid, e.to_string())),
        }
    }
    let status = if out.started.is_empty() && !out.failed.is_empty() { StatusCode::FORBIDDEN } else { StatusCode::OK };
    json_response(status, &out)
}

/// The container ids of a stop or status body, each checked against the caller's
/// application: (ids it may touch, refusals).
fn owned(node: &Node, who: &NmTokenId, ids: &[String], stop: bool) -> (Vec<String>, Vec<(String, String)>) {
    let mut mine = Vec::new();
    let mut failed = Vec::new();
    let table =
        node.table.lock().map(|t| t.keys().cloned().collect::<std::collections::HashSet<_>>()).unwrap_or_default();
    for id in ids {
        let checked = id
            .parse::<fairloom_model::ContainerId>()
            .map_err(|e| e.to_string())
            .and_then(|cid| auth::may_touch(who, cid, stop).map(|_| cid.to_string()))
            .and_then(|cid| {
                if table.contains(&cid) {
                    Ok(cid)
                } else {
                    Err(format!("Container {cid} is not handled by this NodeManager"))
                }
            });
        match checked {
            Ok(cid) => mine.push(cid),
            Err(why) => {
                if refusal_may_be_logged() {
                    tracing::warn!(
                        "refused {} {id} for {}: {why}",
                        if stop { "to stop" } else { "the status of" },
                        who.attempt
                    );
                }
                failed.push((id.clone(), why));
            }
        }
    }
    (mine, failed)
}

/// ContainerManagementProtocol.stopContainers: the caller's own containers only.
async fn stop(State(node): State<Node>, headers: HeaderMap, body: Bytes) -> Response {
    let (who, req): (NmTokenId, StopContainersRequest) = match authorized(&node, &headers, &body, "stopContainers") {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let (mine, failed) = owned(&node, &who, &req.container_ids, true);
    for id in &mine {
        container::kill(
            &node.table,
            id,
            exit::KILLED_BY_APPMASTER,
            "Container killed by the ApplicationMaster.",
            &node.env,
        );
    }
    json_response(StatusCode::OK, &StopContainersResponse { stopped: mine, failed })
}

/// ContainerManagementProtocol.getContainerStatuses: the caller's own containers only.
async fn statuses(State(node): State<Node>, headers: HeaderMap, body: Bytes) -> Response {
    let (who, req): (NmTokenId, StopContainersRequest) =
        match authorized(&node, &headers, &body, "getContainerStatuses") {
            Ok(v) => v,
            Err(r) => return *r,
        };
    let (mine, failed) = owned(&node, &who, &req.container_ids, false);
    let statuses = node
        .table
        .lock()
        .map(|t| mine.iter().filter_map(|id| t.get(id).map(Ctr::status)).collect())
        .unwrap_or_default();
    json_response(StatusCode::OK, &ContainerStatusesResponse { statuses, failed })
}
