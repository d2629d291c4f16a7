//! The node protocol (resource tracker address) and the AM protocol (scheduler address) as
//! JSON over HTTP: each handler parses, forwards to the loop, and answers.

use std::time::Instant;

use axum::body::Bytes;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;

use fairloom_protocol::node::RegisterNodeRequest;
use fairloom_protocol::paths;
use fairloom_protocol::token::{Token, AMRM_TOKEN_KIND};

use super::{json_response, parse_body, Ctx};
use crate::error::RmError;
use crate::service::Command;

type R = Result<Response, RmError>;

pub fn tracker_router(ctx: Ctx) -> Router {
    Router::new()
        .route(paths::REGISTER_NODE, post(register_node))
        .route(paths::NODE_HEARTBEAT, post(node_heartbeat))
        .route(paths::UNREGISTER_NODE, post(unregister_node))
        .fallback(|| async { RmError::not_found("unknown resource-tracker call").into_response() })
        .layer(axum::middleware::from_fn_with_state(ctx.clone(), super::log_refusals))
        .with_state(ctx)
}

pub fn am_router(ctx: Ctx) -> Router {
    Router::new()
        .route(paths::REGISTER_AM, post(register_am))
        .route(paths::ALLOCATE, post(allocate))
        .route(paths::FINISH_AM, post(finish_am))
        .fallback(|| async { RmError::not_found("unknown application-master call").into_response() })
        .layer(axum::middleware::from_fn_with_state(ctx.clone(), super::log_refusals))
        .with_state(ctx)
}

async fn register_node(State(ctx): State<Ctx>, ConnectInfo(peer): ConnectInfo<SocketAddr>, body: Bytes) -> R {
    let req: RegisterNodeRequest = parse_body(&body, "node registration")?;
    // The host lists may name the node's address: resolved here, off the loop, when there
    // are lists.
    let ip = if ctx.rm.snapshot().host_lists { resolve(&req.node_id).await } else { None };
    let peer = Some(peer.ip());
    let out = ctx.rm.call(|r| Command::RegisterNode(req, ip, peer, r)).await?;
    Ok(json_response(StatusCode::OK, &out))
}

/// What the host of `node` (`host:port`) resolves to, given a few seconds.
async fn resolve(node: &str) -> Option<String> {
    let (host, _) = node.rsplit_once(':')?;
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Some(ip.to_string());
    }
    let lookup = tokio::net::lookup_host((host, 0));
    let found = tokio::time::timeout(std::time::Duration::from_secs(5), lookup).await.ok()?.ok()?;
    found.map(|a| a.ip().to_string()).next()
}

async fn unregister_node(State(ctx): State<Ctx>, body: Bytes) -> R {
    let req = parse_body(&body, "node unregistration")?;
    let out = ctx.rm.call(|r| Command::UnregisterNode(req, r)).await?;
    Ok(json_response(StatusCode::OK, &out))
}

async fn node_heartbeat(State(ctx): State<Ctx>, body: Bytes) -> R {
    let started = Instant::now();
    let req = parse_body(&body, "node heartbeat")?;
    let (out, req) = ctx.rm.call(|r| Command::NodeHeartbeat(req, r)).await?;
    drop(req);
    let response = json_response(StatusCode::OK, &out);
    ctx.metrics.node_heartbeat.observe(started.elapsed().as_secs_f64());
    Ok(response)
}

/// The caller's AMRM token; the loop checks it.
fn token(headers: &HeaderMap) -> Result<Token, RmError> {
    let text = headers.get(paths::AMRM_TOKEN_HEADER).and_then(|v| v.to_str().ok()).ok_or_else(|| {
        RmError::invalid_token(format!("no AMRMToken: the {} header is missing", paths::AMRM_TOKEN_HEADER))
    })?;
    Token::from_header(AMRM_TOKEN_KIND, text).map_err(|e| RmError::invalid_token(format!("Invalid AMRMToken: {e}")))
}

async fn register_am(State(ctx): State<Ctx>, headers: HeaderMap, body: Bytes) -> R {
    // Who calls first: nothing is said of the body to a caller without a token.
    let token = token(&headers)?;
    let req = parse_body(&body, "registerApplicationMaster")?;
    let out = ctx.rm.call(|r| Command::RegisterAm(req, token, r)).await?;
    Ok(json_response(StatusCode::OK, &out))
}

async fn allocate(State(ctx): State<Ctx>, headers: HeaderMap, body: Bytes) -> R {
    let started = Instant::now();
    // Who calls first: nothing is said of the body to a caller without a token.
    let token = token(&headers)?;
    let req = parse_body(&body, "allocate")?;
    let out = ctx.rm.call(|r| Command::Allocate(req, token, r)).await?;
    let response = json_response(StatusCode::OK, &*out.response);
    drop(out); // the superseded answer is freed here, off the scheduling loop
    ctx.metrics.am_allocate.observe(started.elapsed().as_secs_f64());
    Ok(response)
}

async fn finish_am(State(ctx): State<Ctx>, headers: HeaderMap, body: Bytes) -> R {
    // Who calls first: nothing is said of the body to a caller without a token.
    let token = token(&headers)?;
    let req = parse_body(&body, "finishApplicationMaster")?;
    let out = ctx.rm.call(|r| Command::FinishAm(req, token, r)).await?;
    Ok(json_response(StatusCode::OK, &out))
}
