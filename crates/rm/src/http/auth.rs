//! Hadoop's pseudo authentication for the web: `?user.name=U` names the caller and earns a
//! signed `hadoop.auth` cookie that names it on later requests. No user means anonymous
//! (`dr.who`), which may read (what `dr.who` may view, with ACLs on) but not change anything.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};

use std::sync::Mutex;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use fairloom_model::user::check_user_name;
use fairloom_protocol::token::{from_hex, to_hex};

use super::Ctx;
use crate::error::RmError;
use crate::service::wall_ms;

const COOKIE: &str = "hadoop.auth";

/// Where a random secret's bytes come from.
pub type Random = Box<dyn Fn() -> Vec<u8> + Send + Sync>;

/// The secret `hadoop.auth` cookies are signed with, and nothing else is (Hadoop's signer
/// secret providers): the configured file's bytes, fixed; otherwise random, rolled every
/// token validity, with the previous secret still taken so no cookie dies at a roll.
pub struct WebSecret {
    validity_ms: i64,
    random: Option<Random>,
    secrets: Mutex<Secrets>,
}

struct Secrets {
    current: Vec<u8>,
    previous: Option<Vec<u8>>,
    roll_at: i64,
}

impl WebSecret {
    /// The file's secret when there is one (never rolled), else a random one from `random`.
    pub fn new(file: Option<Vec<u8>>, validity_ms: i64, random: Random, now: i64) -> Self {
        let (current, random) = match file {
            Some(bytes) => (bytes, None),
            None => (random(), Some(random)),
        };
        Self {
            validity_ms,
            random,
            secrets: Mutex::new(Secrets { current, previous: None, roll_at: now + validity_ms }),
        }
    }

    /// The secrets good at `now`, current first, rolled first when it is time.
    fn secrets(&self, now: i64) -> Vec<Vec<u8>> {
        let mut s = self.secrets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(random) = self.random.as_ref().filter(|_| now >= s.roll_at) {
            let next = random();
            s.previous = Some(std::mem::replace(&mut s.current, next));
            s.roll_at = now + self.validity_ms;
        }
        std::iter::once(s.current.clone()).chain(s.previous.clone()).collect()
    }

    fn sign(&self, text: &str, now: i64) -> String {
        let secret = self.secrets(now).swap_remove(0);
        to_hex(&mac(&secret, text).finalize().into_bytes())
    }

    fn verify(&self, text: &str, signature: &str, now: i64) -> bool {
        let Ok(sig) = from_hex(signature) else { return false };
        self.secrets(now).iter().any(|secret| mac(secret, text).verify_slice(&sig).is_ok())
    }
}

fn mac(secret: &[u8], text: &str) -> Hmac<Sha256> {
    // HMAC takes a key of any length, so this cannot fail.
    let mut m = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    m.update(text.as_bytes());
    m
}

/// The caller: from `user.name`, else from a valid cookie. A `user.name` that is not a valid
/// user name is refused (400) before anything is done for it.
pub fn caller(query: Option<&str>, headers: &HeaderMap, key: &WebSecret, now: i64) -> Result<Option<String>, RmError> {
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
        Ok(Self(caller(parts.uri.query(), &parts.headers, &ctx.web, wall_ms())?))
    }
}

/// `user.name`, percent-decoded as every other query parameter is (`al%69ce` is `alice`).
pub(super) fn user_param(query: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find_map(|(k, v)| (k == "user.name" && !v.is_empty()).then(|| v.into_owned()))
}

fn check_cookie(value: &str, key: &WebSecret, now: i64) -> Option<String> {
    let (signed, sig) = value.rsplit_once("&s=")?;
    if !key.verify(signed, sig, now) {
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
pub fn cookie_for(user: &str, key: &WebSecret, now: i64) -> Option<HeaderValue> {
    let signed = format!("u={user}&p={user}&t=simple&e={}", now + key.validity_ms);
    let sig = key.sign(&signed, now);
    HeaderValue::from_str(&format!("{COOKIE}=\"{signed}&s={sig}\"; Path=/; HttpOnly; SameSite=Lax")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALIDITY_MS: i64 = 36_000_000;

    #[test]
    fn a_random_secret_rolls_and_the_previous_one_still_signs_in() {
        let n = std::sync::atomic::AtomicU8::new(0);
        let random: Random = Box::new(move || vec![n.fetch_add(1, std::sync::atomic::Ordering::Relaxed); 32]);
        let key = WebSecret::new(None, 1000, random, 0);
        let value = |c: HeaderValue| c.to_str().unwrap().split(';').next().unwrap().to_string();
        let mut h = HeaderMap::new();
        // A cookie signed just before the roll (valid 1000 ms) is taken after it.
        h.insert("cookie", HeaderValue::from_str(&value(cookie_for("alice", &key, 900).unwrap())).unwrap());
        assert_eq!(caller(None, &h, &key, 1100).unwrap().as_deref(), Some("alice"));
        // Two rolls later its secret is gone (and it has expired anyway).
        let _ = key.secrets(2100);
        assert_eq!(caller(None, &h, &key, 2200).unwrap(), None);
        // Signed with another secret: refused.
        let other = WebSecret::new(Some(b"other".to_vec()), 1000, Box::new(Vec::new), 0);
        h.insert("cookie", HeaderValue::from_str(&value(cookie_for("admin", &other, 2200).unwrap())).unwrap());
        assert_eq!(caller(None, &h, &key, 2300).unwrap(), None);
    }

    #[test]
    fn the_cookie_names_its_user_until_it_expires_and_cannot_be_forged() {
        let key = WebSecret::new(Some(b"k".to_vec()), VALIDITY_MS, Box::new(Vec::new), 0);
        let c = cookie_for("alice", &key, 1000).unwrap();
        let text = c.to_str().unwrap();
        // Not sent with another site's requests, and out of reach of scripts.
        assert!(text.ends_with("; Path=/; HttpOnly; SameSite=Lax"), "{text}");
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
        let key = WebSecret::new(Some(b"k".to_vec()), VALIDITY_MS, Box::new(Vec::new), 0);
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
