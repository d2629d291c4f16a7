//! Hadoop's pseudo authentication for the web: `?user.name=U` names the caller and earns a
//! signed `hadoop.auth` cookie that names it on later requests. No user means anonymous
//! (`dr.who`), which may read (what `dr.who` may view, with ACLs on) but not change anything.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};

use fairloom_protocol::token::TokenKey;

use super::Ctx;
use crate::service::wall_ms;

const COOKIE: &str = "hadoop.auth";
/// How long a cookie is good for (Hadoop's default token validity, 10 hours).
const VALIDITY_MS: i64 = 36_000_000;

/// The caller: from `user.name`, else from a valid cookie.
pub fn caller(query: Option<&str>, headers: &HeaderMap, key: &TokenKey, now: i64) -> Option<String> {
    if let Some(u) = query.and_then(user_param) {
        return Some(u);
    }
    let cookies = headers.get_all("cookie");
    for value in cookies.iter().filter_map(|v| v.to_str().ok()) {
        for part in value.split(';') {
            let Some((name, v)) = part.trim().split_once('=') else { continue };
            if name == COOKIE {
                if let Some(u) = check_cookie(v.trim_matches('"'), key, now) {
                    return Some(u);
                }
            }
        }
    }
    None
}

/// Who reads: the caller when it named itself, `None` for an anonymous reader. An extractor,
/// so that every read handler states it in its signature.
pub struct Reader(pub Option<String>);

impl FromRequestParts<Ctx> for Reader {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Self::Rejection> {
        Ok(Self(caller(parts.uri.query(), &parts.headers, &ctx.key, wall_ms())))
    }
}

pub(super) fn user_param(query: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == "user.name" && !v.is_empty()).then(|| v.to_string())
    })
}

fn check_cookie(value: &str, key: &TokenKey, now: i64) -> Option<String> {
    let (signed, sig) = value.rsplit_once("&s=")?;
    if !key.check_text(signed, sig) {
        return None;
    }
    let mut user = None;
    let mut expiry = 0i64;
    for kv in signed.split('&') {
        match kv.split_once('=') {
            Some(("u", u)) => user = Some(u.to_string()),
            Some(("e", e)) => expiry = e.parse().ok()?,
            _ => {}
        }
    }
    (expiry > now).then_some(user).flatten()
}

/// The `Set-Cookie` value naming `user`.
pub fn cookie_for(user: &str, key: &TokenKey, now: i64) -> Option<HeaderValue> {
    let signed = format!("u={user}&p={user}&t=simple&e={}", now + VALIDITY_MS);
    let sig = key.sign_text(&signed);
    HeaderValue::from_str(&format!("{COOKIE}=\"{signed}&s={sig}\"; Path=/; HttpOnly")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_names_its_user_until_it_expires_and_cannot_be_forged() {
        let key = TokenKey::new(b"k".to_vec());
        let c = cookie_for("alice", &key, 1000).unwrap();
        let text = c.to_str().unwrap();
        let value = text.split(';').next().unwrap().to_string();
        let mut h = HeaderMap::new();
        h.insert("cookie", HeaderValue::from_str(&value).unwrap());
        assert_eq!(caller(None, &h, &key, 2000).as_deref(), Some("alice"));
        assert_eq!(caller(None, &h, &key, 1000 + VALIDITY_MS + 1), None);
        let forged = value.replace("u=alice&p=alice", "u=root&p=root");
        h.insert("cookie", HeaderValue::from_str(&forged).unwrap());
        assert_eq!(caller(None, &h, &key, 2000), None);
        assert_eq!(caller(Some("a=1&user.name=bob"), &h, &key, 2000).as_deref(), Some("bob"));
    }
}
