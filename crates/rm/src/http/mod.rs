//! The RM's three listeners: the web address (REST API and `/cluster`), the resource
//! tracker (node protocol) and the scheduler address (AM protocol). Handlers only translate
//! HTTP to loop commands and back; they never touch the core.

mod auth;
mod protocol;
mod rest;
mod web;

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode};
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
    pub key: fairloom_protocol::token::TokenKey,
    pub metrics: std::sync::Arc<crate::metrics::RmMetrics>,
}

impl IntoResponse for RmError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        json_response(status, &self.body())
    }
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
