//! `/ws/v1/cluster/*` as YARN's RMWebServices answers it, and the `/cluster` page.

use std::borrow::Cow;
use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use fairloom_model::user::check_user_name;

use super::auth::{caller, cookie_for, user_param, Reader};
use super::{json_response, parse_body, Ctx};
use crate::core::{AppState, KillOutcome};
use crate::dao::{self, ContainerInfo, List, NodeInfo, Wrapped};
use crate::error::RmError;
use crate::service::{wall_ms, AppSnap, Command, Snapshot};
use crate::submission::Submission;

pub fn web_router(ctx: Ctx) -> Router {
    Router::new()
        .route("/ws/v1/cluster", get(info))
        .route("/ws/v1/cluster/info", get(info))
        .route("/ws/v1/cluster/metrics", get(metrics))
        .route("/ws/v1/cluster/scheduler", get(scheduler))
        .route("/ws/v1/cluster/apps", get(apps).post(submit))
        .route("/ws/v1/cluster/apps/new-application", post(new_application))
        .route("/ws/v1/cluster/apps/{id}", get(app))
        .route("/ws/v1/cluster/apps/{id}/state", get(app_state).put(kill))
        .route("/ws/v1/cluster/apps/{id}/queue", get(app_queue).put(move_app))
        .route("/ws/v1/cluster/apps/{id}/priority", get(app_priority).put(set_priority))
        .route("/ws/v1/cluster/apps/{id}/explain", get(explain))
        .route("/ws/v1/cluster/apps/{id}/timeouts", get(timeouts))
        .route("/ws/v1/cluster/apps/{id}/timeouts/{kind}", get(timeout))
        .route("/ws/v1/cluster/apps/{id}/timeout", axum::routing::put(update_timeout))
        .route("/ws/v1/cluster/apps/{id}/appattempts", get(attempts))
        .route("/ws/v1/cluster/apps/{id}/appattempts/{attempt}", get(attempt))
        .route("/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers", get(attempt_containers))
        .route("/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers/{cid}", get(attempt_container))
        .route("/ws/v1/cluster/appstatistics", get(app_statistics))
        .route("/ws/v1/cluster/nodes", get(nodes))
        .route("/ws/v1/cluster/nodes/{id}", get(node))
        .route("/ws/v1/cluster/nodes/{id}/resource", post(update_node_resource))
        .route("/ws/v1/cluster/containers/{cid}/signal/{command}", post(signal_container))
        .route("/ws/v1/cluster/admin/refresh-nodes", post(refresh_nodes))
        .route("/metrics", get(prometheus))
        .route("/proxy/{id}", get(proxy))
        .route("/proxy/{id}/", get(proxy))
        .route("/proxy/{id}/{*rest}", get(proxy_rest))
        .merge(super::web::routes())
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(too_large_as_yarn))
        .layer(axum::middleware::from_fn_with_state(ctx.clone(), around_every_call))
        .layer(axum::middleware::from_fn_with_state(ctx.clone(), super::log_refusals))
        .with_state(ctx)
}

/// YARN's `/proxy/APP/` (an application's `trackingUrl`): to the page the AM registered
/// (a path below it kept), or the RM's page of the application when the AM gave none. A
/// redirect, not a proxy: the RM does not fetch a URL an application chose.
async fn proxy(State(ctx): State<Ctx>, Path(id): Path<String>, RawQuery(query): RawQuery) -> R {
    proxy_to(&ctx, &id, "", query.as_deref())
}

async fn proxy_rest(State(ctx): State<Ctx>, Path((id, rest)): Path<(String, String)>, RawQuery(query): RawQuery) -> R {
    proxy_to(&ctx, &id, &rest, query.as_deref())
}

fn proxy_to(ctx: &Ctx, id: &str, rest: &str, query: Option<&str>) -> R {
    let snap = ctx.rm.snapshot();
    let a = find_app(&snap, id)?;
    let to = match a.figures.am_tracking_url() {
        Some(url) => {
            let query = query.filter(|q| !q.is_empty()).map(|q| format!("?{q}")).unwrap_or_default();
            format!("{}/{}{query}", url.trim_end_matches('/'), rest.trim_start_matches('/'))
        }
        None => format!("/cluster/app/{}", a.id),
    };
    let mut r = (StatusCode::FOUND, "").into_response();
    let location =
        HeaderValue::from_str(&to).map_err(|_| RmError::bad_request("the AM's tracking URL is not a valid header"))?;
    r.headers_mut().insert("location", location);
    Ok(r)
}

/// The most a REST body may hold (every body extractor applies it: the layer below sets it).
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// A body over [`MAX_BODY_BYTES`] is refused by the extractor before a handler runs, in
/// plain text: answered instead as every other refusal is, a RemoteException (413).
async fn too_large_as_yarn(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let response = next.run(req).await;
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE && response.extensions().get::<super::Refused>().is_none() {
        return RmError::too_large(format!(
            "Request Entity Too Large: the body is larger than {MAX_BODY_BYTES} bytes, the most fairloom's REST API reads"
        ))
        .into_response();
    }
    response
}

/// A REST write's body type. As YARN's resources declare (`@Consumes`), the body must be
/// `application/json` (or XML, which fairloom does not read): anything else, or no type, is
/// refused before the call is looked at (its caller too), with 415.
fn need_json(headers: &HeaderMap, what: &str) -> Result<(), RmError> {
    let given =
        headers.get(axum::http::header::CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let essence = given.as_deref().map(|t| t.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
    match essence.as_deref() {
        Some("application/json") => Ok(()),
        Some(xml @ ("application/xml" | "text/xml")) => Err(RmError::unsupported_media_type(format!(
            "Unsupported Media Type {xml}: not supported, fairloom's REST API reads JSON bodies only (Content-Type: application/json)"
        ))),
        _ => Err(RmError::unsupported_media_type(format!(
            "Unsupported Media Type {}: the {what} body must be Content-Type: application/json",
            given.as_deref().unwrap_or("(none given)")
        ))),
    }
}

/// Around every call of the web address: time the GETs (REST reads and pages) into the
/// read-latency histogram, and give a caller who named itself with `user.name` the
/// `hadoop.auth` cookie, on any answer, as Hadoop's authentication filter does (clients such as
/// yarn-api-client's SimpleAuth read it off `/cluster`).
async fn around_every_call(
    State(ctx): State<Ctx>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let read = req.method() == axum::http::Method::GET;
    let query = req.uri().query().map(str::to_string);
    let started = std::time::Instant::now();
    let response = next.run(req).await;
    if read {
        ctx.metrics.rest_read.observe(started.elapsed().as_secs_f64());
    }
    with_cookie(response, &ctx, &query)
}

async fn prometheus(State(ctx): State<Ctx>) -> Response {
    let mut r = ctx.metrics.render().into_response();
    r.headers_mut().insert("content-type", HeaderValue::from_static(fairloom_protocol::OPENMETRICS_CONTENT_TYPE));
    r
}

async fn not_found() -> Response {
    RmError::not_found("The requested resource is not available on this ResourceManager").into_response()
}

type R = Result<Response, RmError>;

fn ok(v: impl serde::Serialize) -> R {
    Ok(json_response(StatusCode::OK, &v))
}

/// The authenticated caller, or YARN's AuthorizationException.
fn need_user(ctx: &Ctx, q: &Option<String>, headers: &HeaderMap) -> Result<String, RmError> {
    caller(q.as_deref(), headers, &ctx.web, wall_ms())?.ok_or_else(RmError::unauthenticated)
}

fn with_cookie(mut r: Response, ctx: &Ctx, q: &Option<String>) -> Response {
    let valid = q.as_deref().and_then(user_param).filter(|u| check_user_name(u).is_ok());
    if let Some(user) = valid {
        if let Some(c) = cookie_for(&user, &ctx.web, wall_ms()) {
            r.headers_mut().insert("set-cookie", c);
        }
    }
    r
}

async fn info(State(ctx): State<Ctx>) -> Response {
    json_response(StatusCode::OK, &Wrapped("clusterInfo", &ctx.rm.snapshot().cluster_info))
}

async fn metrics(State(ctx): State<Ctx>) -> Response {
    json_response(StatusCode::OK, &Wrapped("clusterMetrics", &ctx.rm.snapshot().metrics))
}

async fn scheduler(State(ctx): State<Ctx>) -> Response {
    let snap = ctx.rm.snapshot();
    json_response(StatusCode::OK, &Wrapped("scheduler", &Wrapped("schedulerInfo", &*snap.scheduler)))
}

fn list(q: &HashMap<String, String>, key: &str) -> Vec<String> {
    q.get(key)
        .map(|v| v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default()
}

/// A query value, absent when empty: YARN's ApplicationsRequestBuilder ignores `user=`,
/// `queue=`, `limit=` and the time filters given empty.
fn given<'a>(q: &'a HashMap<String, String>, key: &str) -> Option<&'a str> {
    q.get(key).map(String::as_str).filter(|v| !v.is_empty())
}

/// A number parameter as YARN reads it (`Long.parseLong`, no spaces), with its message.
fn long_param(q: &HashMap<String, String>, key: &str) -> Result<Option<i64>, RmError> {
    given(q, key)
        .map(|v| v.parse::<i64>().map_err(|_| RmError::bad_request(format!("{key} value must be a number!"))))
        .transpose()
}

/// A time range: each end not negative, the beginning not after the end. `names`: the two
/// ends, then the beginning as the order message names it (YARN says `startTimeBegin` there,
/// and `finishTime…` for the finish range throughout).
fn time_range(begin: Option<i64>, end: Option<i64>, names: [&str; 3]) -> Result<(), RmError> {
    for (t, name) in [(begin, names[0]), (end, names[1])] {
        if t.is_some_and(|t| t < 0) {
            return Err(RmError::bad_request(format!("{name} must be greater than 0")));
        }
    }
    if begin.unwrap_or(0) > end.unwrap_or(i64::MAX) {
        return Err(RmError::bad_request(format!("{} must be greater than {}", names[1], names[2])));
    }
    Ok(())
}

/// YARN's FinalApplicationStatus names, as `valueOf` takes them (exact case).
const FINAL_STATUSES: [&str; 4] = ["UNDEFINED", "SUCCEEDED", "FAILED", "KILLED"];

fn parse_states(q: &HashMap<String, String>) -> Result<Vec<AppState>, RmError> {
    let mut names = list(q, "states");
    names.extend(list(q, "state"));
    names
        .iter()
        .map(|s| {
            AppState::parse(s).ok_or_else(|| {
                RmError::bad_request(format!(
                    "Invalid application-state {s} specified. It should be one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED"
                ))
            })
        })
        .collect()
}

fn queue_matches(app_queue: &str, wanted: &str) -> bool {
    app_queue == wanted || app_queue.rsplit('.').next() == Some(wanted) || format!("root.{wanted}") == app_queue
}

async fn apps(State(ctx): State<Ctx>, Query(q): Query<HashMap<String, String>>, reader: Reader) -> R {
    let states = parse_states(&q)?;
    let final_status = given(&q, "finalStatus");
    if let Some(f) = final_status.filter(|f| !FINAL_STATUSES.contains(f)) {
        return Err(RmError::bad_request(format!(
            "No enum constant org.apache.hadoop.yarn.api.records.FinalApplicationStatus.{f}"
        )));
    }
    let limit = long_param(&q, "limit")?;
    if limit.is_some_and(|l| l <= 0) {
        return Err(RmError::bad_request("limit value must be greater then 0"));
    }
    let (sb, se) = (long_param(&q, "startedTimeBegin")?, long_param(&q, "startedTimeEnd")?);
    let (fb, fe) = (long_param(&q, "finishedTimeBegin")?, long_param(&q, "finishedTimeEnd")?);
    time_range(sb, se, ["startedTimeBegin", "startedTimeEnd", "startTimeBegin"])?;
    time_range(fb, fe, ["finishTimeBegin", "finishTimeEnd", "finishTimeBegin"])?;
    let (user, queue) = (given(&q, "user"), given(&q, "queue"));
    let types: Vec<String> = list(&q, "applicationTypes").into_iter().map(|t| t.to_ascii_lowercase()).collect();
    let tags = list(&q, "applicationTags");
    let snap = ctx.rm.snapshot();
    let keep = |a: &&std::sync::Arc<AppSnap>| {
        (states.is_empty() || states.contains(&a.state))
            && final_status.is_none_or(|f| f == a.final_status)
            && user.is_none_or(|u| u == a.user)
            && queue.is_none_or(|w| queue_matches(&a.queue, w))
            && q.get("name").is_none_or(|n| n == &a.name)
            && sb.is_none_or(|b| a.started >= b)
            && se.is_none_or(|e| a.started <= e)
            && fb.is_none_or(|b| a.finished >= b)
            && fe.is_none_or(|e| a.finished <= e && a.finished > 0)
            && (types.is_empty() || types.contains(&a.app_type.to_ascii_lowercase()))
            && (tags.is_empty() || tags.iter().any(|t| a.tags.contains(t)))
    };
    let hidden = ctx.rm.hidden_from(&snap, reader.0.as_deref()).await?;
    let chosen: Vec<Cow<dao::AppInfo>> = snap
        .apps
        .iter()
        .filter(keep)
        .take(limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX)))
        .map(|a| a.info_for(&hidden))
        .collect();
    ok(Wrapped("apps", &List("app", &chosen)))
}

fn find_app<'a>(snap: &'a crate::service::Snapshot, id: &str) -> Result<&'a AppSnap, RmError> {
    id.parse::<fairloom_model::ApplicationId>()
        .map_err(|_| RmError::bad_request(format!("Invalid ApplicationId: {id}")))?;
    snap.apps
        .iter()
        .map(|a| &**a)
        .find(|a| a.id == id)
        .ok_or_else(|| RmError::not_found(format!("app with id: {id} not found")))
}

async fn app(State(ctx): State<Ctx>, Path(id): Path<String>, reader: Reader) -> R {
    let snap = ctx.rm.snapshot();
    let a = find_app(&snap, &id)?;
    let may_view = ctx.rm.may_view(&snap, reader.0.as_deref(), a.key).await?;
    ok(Wrapped("app", &a.info_seen(may_view)))
}

/// fairloom's own: why the application waits, with the numbers behind it, and its queue.
async fn explain(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    let snap = ctx.rm.snapshot();
    let a = find_app(&snap, &id)?;
    let queue = snap.queues.iter().find(|q| q.name == a.queue).map(|q| {
        json!({
            "name": q.name,
            "used": dao::resource(q.used),
            "steadyFairShare": dao::resource(q.steady),
            "fairShare": dao::resource(q.share),
            "maxResources": dao::resource(q.max),
            "demand": dao::resource(q.demand),
            "amUsed": dao::resource(q.am_used),
            "amLimit": dao::resource(q.am_limit),
            "activeApps": q.active_apps,
            "pendingApps": q.pending_apps,
            "maxApps": q.max_apps,
        })
    });
    ok(json!({ "explain": {
        "id": a.id,
        "state": a.state.name(),
        "user": a.user,
        "queue": a.queue,
        "waiting": a.wait.is_some(),
        "wait": a.wait,
        "queueStatus": queue,
    }}))
}

async fn app_state(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    let snap = ctx.rm.snapshot();
    ok(json!({ "state": find_app(&snap, &id)?.state.name() }))
}

#[derive(serde::Deserialize)]
struct StateBody {
    state: String,
}

async fn kill(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> R {
    need_json(&headers, "app state")?;
    let user = need_user(&ctx, &raw, &headers)?;
    let b: StateBody = parse_body(&body, "app state")?;
    if !b.state.eq_ignore_ascii_case("KILLED") {
        return Err(RmError::bad_request("Only 'KILLED' is allowed as a target state."));
    }
    let out = ctx.rm.call(|r| Command::Kill(id, user, r)).await?;
    let state = match out {
        KillOutcome::Killed => AppState::Killed,
        KillOutcome::AlreadyFinal(s) => s,
    };
    ok(json!({ "state": state.name() }))
}

async fn app_queue(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    let snap = ctx.rm.snapshot();
    ok(json!({ "queue": find_app(&snap, &id)?.queue }))
}

#[derive(serde::Deserialize)]
struct QueueBody {
    queue: String,
}

async fn move_app(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> R {
    need_json(&headers, "app queue")?;
    let user = need_user(&ctx, &raw, &headers)?;
    let b: QueueBody = parse_body(&body, "app queue")?;
    let target = ctx.rm.call(|r| Command::Move(id, b.queue, user, r)).await?;
    ok(json!({ "queue": target }))
}

async fn app_priority(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    let snap = ctx.rm.snapshot();
    ok(json!({ "priority": find_app(&snap, &id)?.figures.priority() }))
}

#[derive(serde::Deserialize)]
struct PriorityBody {
    priority: i32,
}

async fn set_priority(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> R {
    need_json(&headers, "app priority")?;
    let user = need_user(&ctx, &raw, &headers)?;
    let b: PriorityBody = parse_body(&body, "app priority")?;
    let p = ctx.rm.call(|r| Command::Priority(id, b.priority, user, r)).await?;
    ok(json!({ "priority": p }))
}

async fn timeouts(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    find_app(&ctx.rm.snapshot(), &id)?;
    ok(Wrapped("timeouts", &Wrapped("timeout", &[dao::lifetime()])))
}

async fn timeout(State(ctx): State<Ctx>, Path((id, kind)): Path<(String, String)>) -> R {
    find_app(&ctx.rm.snapshot(), &id)?;
    if !kind.eq_ignore_ascii_case("LIFETIME") {
        return Err(RmError::bad_request(format!("Invalid application timeout type {kind}; only LIFETIME exists")));
    }
    ok(Wrapped("timeout", &dao::lifetime()))
}

async fn update_timeout(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    find_app(&ctx.rm.snapshot(), &id)?;
    Err(RmError::bad_request(
        "not supported: application lifetimes (fairloom runs every application without a lifetime)",
    ))
}

async fn attempts(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    let snap = ctx.rm.snapshot();
    let a = find_app(&snap, &id)?;
    ok(Wrapped("appAttempts", &Wrapped("appAttempt", a.attempts())))
}

fn find_attempt<'a>(a: &'a AppSnap, attempt: &str) -> Result<&'a dao::AppAttemptInfo, RmError> {
    a.attempts()
        .iter()
        .find(|v| v.app_attempt_id == attempt || v.id.to_string() == attempt)
        .ok_or_else(|| RmError::not_found(format!("appAttempt with id: {attempt} not found")))
}

async fn attempt(State(ctx): State<Ctx>, Path((id, attempt)): Path<(String, String)>) -> R {
    let snap = ctx.rm.snapshot();
    let a = find_app(&snap, &id)?;
    ok(Wrapped("appAttempt", find_attempt(a, &attempt)?))
}

/// An attempt's containers are refused to a reader without VIEW_APP, as YARN's
/// ClientRMService refuses its container reports (the application itself stays listed).
async fn may_see_containers(
    ctx: &Ctx,
    snap: &Snapshot,
    a: &AppSnap,
    attempt: &str,
    reader: &Reader,
) -> Result<(), RmError> {
    if ctx.rm.may_view(snap, reader.0.as_deref(), a.key).await? {
        return Ok(());
    }
    let user = reader.0.as_deref().unwrap_or(crate::access::ANONYMOUS);
    Err(RmError::forbidden(format!("User {user} does not have privilege to see the containers of attempt {attempt}")))
}

async fn attempt_containers(State(ctx): State<Ctx>, Path((id, attempt)): Path<(String, String)>, reader: Reader) -> R {
    let snap = ctx.rm.snapshot();
    let a = find_app(&snap, &id)?;
    let number = find_attempt(a, &attempt)?.id;
    may_see_containers(&ctx, &snap, a, &attempt, &reader).await?;
    let rows = ctx.rm.containers(a.key).await?;
    let list: Vec<ContainerInfo> =
        rows.iter().filter(|c| c.attempt == number).map(|c| ContainerInfo::of(c, &a.user)).collect();
    ok(Wrapped("containers", &List("container", &list)))
}

async fn attempt_container(
    State(ctx): State<Ctx>,
    Path((id, attempt, cid)): Path<(String, String, String)>,
    reader: Reader,
) -> R {
    let snap = ctx.rm.snapshot();
    let a = find_app(&snap, &id)?;
    let number = find_attempt(a, &attempt)?.id;
    may_see_containers(&ctx, &snap, a, &attempt, &reader).await?;
    let rows = ctx.rm.containers(a.key).await?;
    let c = rows
        .iter()
        .find(|c| c.attempt == number && c.id == cid)
        .ok_or_else(|| RmError::not_found(format!("container with id: {cid} not found")))?;
    ok(Wrapped("container", &ContainerInfo::of(c, &a.user)))
}

async fn app_statistics(State(ctx): State<Ctx>, Query(q): Query<HashMap<String, String>>) -> R {
    let mut states = parse_states(&q)?;
    if states.is_empty() {
        states = AppState::ALL.to_vec();
    }
    let types = list(&q, "applicationTypes");
    if types.len() > 1 {
        return Err(RmError::bad_request("we temporarily support at most one applicationType"));
    }
    let kind = types.first().cloned();
    let snap = ctx.rm.snapshot();
    let items: Vec<Value> = states
        .iter()
        .map(|s| {
            let count = snap
                .apps
                .iter()
                .filter(|a| a.state == *s && kind.as_ref().is_none_or(|t| t.eq_ignore_ascii_case(&a.app_type)))
                .count();
            json!({ "state": s.name(), "type": kind.clone().unwrap_or_else(|| "*".to_string()), "count": count })
        })
        .collect();
    ok(json!({ "appStatInfo": { "statItem": items } }))
}

async fn nodes(State(ctx): State<Ctx>, Query(q): Query<HashMap<String, String>>) -> R {
    const STATES: [&str; 8] =
        ["NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING", "DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"];
    let mut wanted = list(&q, "states");
    wanted.extend(list(&q, "state"));
    let wanted: Vec<String> = wanted.into_iter().map(|s| s.to_ascii_uppercase()).collect();
    if let Some(bad) = wanted.iter().find(|s| !STATES.contains(&s.as_str())) {
        return Err(RmError::bad_request(format!(
            "Invalid node state {bad}; it should be one of {}",
            STATES.join(", ")
        )));
    }
    let snap = ctx.rm.snapshot();
    let chosen: Vec<NodeInfo> = snap
        .nodes
        .iter()
        .filter(|n| wanted.is_empty() || wanted.iter().any(|s| s == n.state))
        .map(NodeInfo::of)
        .collect();
    ok(Wrapped("nodes", &List("node", &chosen)))
}

async fn node(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    let snap = ctx.rm.snapshot();
    let n = snap
        .nodes
        .iter()
        .find(|n| n.names.id == *id)
        .ok_or_else(|| RmError::not_found(format!("nodeId, {id}, is not found")))?;
    ok(Wrapped("node", &NodeInfo::of(n)))
}

async fn update_node_resource(State(ctx): State<Ctx>, Path(id): Path<String>) -> R {
    let snap = ctx.rm.snapshot();
    snap.nodes
        .iter()
        .find(|n| n.names.id == *id)
        .ok_or_else(|| RmError::not_found(format!("nodeId, {id}, is not found")))?;
    Err(RmError::bad_request(
        "not supported: changing a node's resource at run time (restart its NodeManager with --resource)",
    ))
}

async fn signal_container(Path((cid, command)): Path<(String, String)>) -> R {
    const COMMANDS: [&str; 3] = ["OUTPUT_THREAD_DUMP", "GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN"];
    if !COMMANDS.contains(&command.as_str()) {
        return Err(RmError::bad_request(format!("Invalid command: {command}")));
    }
    Err(RmError::bad_request(format!("not supported: signalling containers ({cid}) through the ResourceManager")))
}

/// fairloom's door to `yarn rmadmin -refreshNodes` (YARN has it over IPC only).
async fn refresh_nodes(State(ctx): State<Ctx>, RawQuery(raw): RawQuery, headers: HeaderMap) -> R {
    let user = need_user(&ctx, &raw, &headers)?;
    let left = ctx.rm.call(|r| Command::RefreshNodes(user, r)).await?;
    ok(json!({ "decommissioned": left }))
}

async fn new_application(State(ctx): State<Ctx>, RawQuery(raw): RawQuery, headers: HeaderMap) -> R {
    need_user(&ctx, &raw, &headers)?;
    let (id, max) = ctx.rm.call(Command::NewApplication).await?;
    let body = json!({
        "application-id": id.to_string(),
        "maximum-resource-capability": { "memory": max.memory, "vCores": max.vcores },
    });
    ok(body)
}

async fn submit(State(ctx): State<Ctx>, RawQuery(raw): RawQuery, headers: HeaderMap, body: Bytes) -> R {
    need_json(&headers, "application submission")?;
    let user = need_user(&ctx, &raw, &headers)?;
    let sub: Submission = parse_body(&body, "application submission")?;
    let id = ctx.rm.call(|r| Command::Submit(Box::new(sub), user, r)).await?;
    let mut r = (StatusCode::ACCEPTED, "").into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("/ws/v1/cluster/apps/{id}")) {
        r.headers_mut().insert("location", v);
    }
    Ok(r)
}
