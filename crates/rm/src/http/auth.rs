//! Hadoop's pseudo authentication for the web: `?user.name=U` names the caller and earns a
//! signed `hadoop.auth` cookie that names it on later requests. No user means anonymous
//! (`dr.who`), which may read (what `dr.who` may view, with ACLs on) but not change anything.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};

use fairloom_model::user::check_user_name;
use fairloom_protocol::token::TokenKey;

use super::Ctx;
use crate::error::RmError;
use crate::service::wall_ms;

const COOKIE: &str = "hadoop.auth";
/// How long a cookie is good for (Hadoop's default token validity, 10 hours).
const VALIDITY_MS: i64 = 36_000_000;

/// The caller: from `user.name`, else from a valid cookie. A `user.name` that is not a valid
/// user name is refused (400) before anything is done for it.
pub fn caller(query: Option<&str>, headers: &HeaderMap, key: &TokenKey, now: i64) -> Result<Option<String>, RmError> {
    if let Some(u) = query.and_then(user_param) {
        check_user_name(&u).map_err(|e| RmError::bad_request(e.to_string()))?;
        return Ok(Some(u));
    }
    let cookies = headers.get_all("cookie");
    for value in cookies.iter().filter_map(|v| v.to_str().ok()) {
        for part in value.split(';') {
            let Some((name, v)) = part.trim().split_once('=') else { continue };
            if name == COOKIE {
                if let Some(u) = check_cookie(v.trim_matches('"'), key, now) {
                    return Ok(Some(u));
                }
            }
        }
    }
    Ok(None)
}

/// Who reads: the caller when it named itself, `None` for an anonymous reader. An extractor,
/// so that every read handler states it in its signature.
pub struct Reader(pub Option<String>);

impl FromRequestParts<Ctx> for Reader {
    type Rejection = RmError;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Self::Rejection> {
        Ok(Self(caller(parts.uri.query(), &parts.headers, &ctx.key, wall_ms())?))
    }
}

/// `user.name`, percent-decoded as every other query parameter is (`al%69ce` is `alice`).
pub(super) fn user_param(query: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find_map(|(k, v)| (k == "user.name" && !v.is_empty()).then(|| v.into_owned()))
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
    // Only valid names are ever signed; a cookie naming another is not one of ours.
    (expiry > now).then_some(user).flatten().filter(|u| check_user_name(u).is_ok())
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
        let who = |q: Option<&str>, h: &HeaderMap, now| caller(q, h, &key, now).unwrap();
        assert_eq!(who(None, &h, 2000).as_deref(), Some("alice"));
        assert_eq!(who(None, &h, 1000 + VALIDITY_MS + 1), None);
        let forged = value.replace("u=alice&p=alice", "u=root&p=root");
        h.insert("cookie", HeaderValue::from_str(&forged).unwrap());
        assert_eq!(who(None, &h, 2000), None);
        assert_eq!(who(Some("a=1&user.name=bob"), &h, 2000).as_deref(), Some("bob"));
    }

    #[test]
    fn user_names_are_decoded_then_checked() {
        let key = TokenKey::new(b"k".to_vec());
        let h = HeaderMap::new();
        assert_eq!(caller(Some("user.name=al%69ce"), &h, &key, 0).unwrap().as_deref(), Some("alice"));
        for bad in ["user.name=../../../x", "user.name=..%2Fx", "user.name=a+b", "user.name=%00", "user.name=a%0Ab"] {
            let e = caller(Some(bad), &h, &key, 0).unwrap_err();
            assert_eq!(e.status(), 400, "{bad}");
            assert!(e.message.starts_with("Invalid user name"), "{e}");
        }
        // A signed cookie for a name that is not valid is not taken (only valid names are signed).
        let c = cookie_for("../x", &key, 0).unwrap();
        let mut with = HeaderMap::new();
        with.insert("cookie", HeaderValue::from_str(c.to_str().unwrap().split(';').next().unwrap()).unwrap());
        assert_eq!(caller(None, &with, &key, 1).unwrap(), None);
    }
}
