//! Errors the RM answers with, as YARN's REST layer does: an HTTP status and a
//! `RemoteException` naming the Java exception a YARN client expects.

use fairloom_protocol::{RemoteException, RemoteExceptionBody};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    BadRequest,
    Forbidden,
    /// No authenticated user where YARN needs one (AuthorizationException, 403).
    Unauthenticated,
    NotFound,
    Internal,
    /// An RPC-level refusal (InvalidResourceRequest, InvalidApplicationMasterRequest…): 400.
    Yarn(&'static str),
    /// A token that is not one of ours, or of a key no longer good (Hadoop's InvalidToken): 403.
    InvalidToken,
    /// What Jersey refuses before a resource method runs (a body of the wrong media type,
    /// 415; one too large, 413), as YARN's GenericExceptionHandler shows a
    /// WebApplicationException: with its status.
    Web(u16),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RmError {
    pub kind: Kind,
    pub message: String,
}

impl RmError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self { kind: Kind::BadRequest, message: message.into() }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self { kind: Kind::NotFound, message: message.into() }
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self { kind: Kind::Forbidden, message: message.into() }
    }
    pub fn unauthenticated() -> Self {
        Self { kind: Kind::Unauthenticated, message: "Unable to obtain user name, user not authenticated".into() }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self { kind: Kind::Internal, message: message.into() }
    }
    pub fn yarn(exception: &'static str, message: impl Into<String>) -> Self {
        Self { kind: Kind::Yarn(exception), message: message.into() }
    }
    pub fn invalid_token(message: impl Into<String>) -> Self {
        Self { kind: Kind::InvalidToken, message: message.into() }
    }
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self { kind: Kind::Web(415), message: message.into() }
    }
    pub fn too_large(message: impl Into<String>) -> Self {
        Self { kind: Kind::Web(413), message: message.into() }
    }

    pub fn status(&self) -> u16 {
        match self.kind {
            Kind::BadRequest | Kind::Yarn(_) => 400,
            Kind::Forbidden | Kind::Unauthenticated | Kind::InvalidToken => 403,
            Kind::NotFound => 404,
            Kind::Internal => 500,
            Kind::Web(status) => status,
        }
    }

    pub fn body(&self) -> RemoteExceptionBody {
        let (exception, class) = match self.kind {
            Kind::BadRequest => {
                ("BadRequestException", "org.apache.hadoop.yarn.webapp.BadRequestException".to_string())
            }
            Kind::Forbidden => ("ForbiddenException", "org.apache.hadoop.yarn.webapp.ForbiddenException".to_string()),
            Kind::Unauthenticated => {
                ("AuthorizationException", "org.apache.hadoop.security.authorize.AuthorizationException".to_string())
            }
            Kind::NotFound => ("NotFoundException", "org.apache.hadoop.yarn.webapp.NotFoundException".to_string()),
            Kind::Internal | Kind::Web(_) => {
                ("WebApplicationException", "javax.ws.rs.WebApplicationException".to_string())
            }
            Kind::Yarn(name) => (name, format!("org.apache.hadoop.yarn.exceptions.{name}")),
            Kind::InvalidToken => {
                ("InvalidToken", "org.apache.hadoop.security.token.SecretManager$InvalidToken".to_string())
            }
        };
        RemoteExceptionBody {
            remote_exception: RemoteException {
                exception: exception.to_string(),
                message: self.message.clone(),
                java_class_name: class,
            },
        }
    }
}

impl From<crate::store::StoreError> for RmError {
    fn from(e: crate::store::StoreError) -> Self {
        Self::internal(e.to_string())
    }
}
