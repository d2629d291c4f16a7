//! The RM's three listeners: the web address (REST API and `/cluster`), the resource
//! tracker (node protocol) and the scheduler address (AM protocol). Handlers only translate
//! HTTP to loop commands and back; they never touch the core.

pub mod auth;
mod protocol;
mod rest;
mod web;

use fairloom_serve::refusal_may_be_logged;
use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::RmError;
use crate::service::LoopClient;

pub use protocol::{am_router, tracker_router};
pub use rest::web_router;

/// What every handler holds.
#[derive(Clone)]
pub struct Ctx {
    pub rm: LoopClient,
    /// The secret of the web's `hadoop.auth` cookies (theirs alone).
    pub web: std::sync::Arc<auth::WebSecret>,
    pub metrics: std::sync::Arc<crate::metrics::RmMetrics>,
}

impl IntoResponse for RmError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = json_response(status, &self.body());
        r.extensions_mut().insert(Refused(self.message));
        r
    }
}

/// Why a call was refused, carried on its answer to [`log_refusals`].
#[derive(Clone)]
struct Refused(String);

/// Log every refused call: at warn with who asked and why (an ACL, bad input, a bad token),
/// unknown paths at debug (browsers ask for icons), failures of the RM itself at error.
/// Accepted calls are not logged here: heartbeats and allocations would flood the log.
pub async fn log_refusals(
    State(ctx): State<Ctx>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    // Only what names the caller is kept, cheaply (shared bytes): nearly every call is
    // accepted, so who it was is worked out for a refusal alone.
    let method = req.method().clone();
    let uri = req.uri().clone();
    let mut cookies = HeaderMap::new();
    for v in req.headers().get_all(header::COOKIE) {
        cookies.append(header::COOKIE, v.clone());
    }
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
    let response = next.run(req).await;
    let status = response.status();
    if status.is_success() || status.is_redirection() {
        return response;
    }
    // Under a flood of bad calls, the budget is checked before the caller is worked out.
    if status.as_u16() != 404 && !refusal_may_be_logged() {
        return response;
    }
    let why = response.extensions().get::<Refused>().map_or_else(|| status.to_string(), |r| r.0.clone());
    let who = auth::caller(uri.query(), &cookies, &ctx.web, crate::service::wall_ms()).ok().flatten();
    let who = who.as_deref().unwrap_or(crate::access::ANONYMOUS);
    let (path, peer) = (uri.path(), peer.map(|p| p.to_string()).unwrap_or_default());
    match status.as_u16() {
        404 => tracing::debug!(%method, %path, user = %who, %peer, "refused ({status}): {why}"),
        400..=499 => tracing::warn!(%method, %path, user = %who, %peer, "refused ({status}): {why}"),
        _ => tracing::error!(%method, %path, user = %who, %peer, "failed ({status}): {why}"),
    }
    response
}

pub fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
    let mut r = (status, bytes).into_response();
    r.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    r
}

/// Parse a JSON body, or the 400 YARN answers with naming where it is malformed.
pub fn parse_body<T: DeserializeOwned>(body: &Bytes, what: &str) -> Result<T, RmError> {
    serde_json::from_slice(body).map_err(|e| RmError::bad_request(format!("malformed {what} body: {e}")))
}
