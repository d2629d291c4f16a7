//! Container and AM tokens: an HMAC-SHA256 over what the token grants, keyed by a secret the
//! RM makes at start and gives its NodeManagers at registration (YARN's master keys).

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::Res;

type HmacSha256 = Hmac<Sha256>;

/// A signing key, hex-encoded on the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenKey(Vec<u8>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid token key: {0}")]
pub struct KeyError(String);

impl TokenKey {
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    pub fn from_hex(text: &str) -> Result<Self, KeyError> {
        if !text.len().is_multiple_of(2) || text.is_empty() {
            return Err(KeyError("odd or empty hex".to_string()));
        }
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|e| KeyError(e.to_string())))
            .collect::<Result<Vec<u8>, _>>()
            .map(Self)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    fn sign(&self, message: &str) -> String {
        // A key of any length is accepted by HMAC, so this cannot fail.
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(message.as_bytes());
        hex(&mac.finalize().into_bytes())
    }

    fn verify(&self, message: &str, token: &str) -> bool {
        let Ok(expected) = Self::from_hex(token) else { return false };
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(message.as_bytes());
        mac.verify_slice(&expected.0).is_ok()
    }

    /// The token that lets `container` of `user` with `resource` start on `node`.
    pub fn container_token(&self, container: &str, node: &str, user: &str, resource: Res) -> String {
        self.sign(&container_message(container, node, user, resource))
    }

    pub fn check_container_token(&self, container: &str, node: &str, user: &str, resource: Res, token: &str) -> bool {
        self.verify(&container_message(container, node, user, resource), token)
    }

    /// The AMRM token of an attempt.
    pub fn am_token(&self, attempt: &str) -> String {
        self.sign(&format!("amrm|{attempt}"))
    }

    pub fn check_am_token(&self, attempt: &str, token: &str) -> bool {
        self.verify(&format!("amrm|{attempt}"), token)
    }

    /// A signature over any text (the web's `hadoop.auth` cookie).
    pub fn sign_text(&self, text: &str) -> String {
        self.sign(text)
    }

    pub fn check_text(&self, text: &str, signature: &str) -> bool {
        self.verify(text, signature)
    }
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

fn container_message(container: &str, node: &str, user: &str, resource: Res) -> String {
    format!("container|{container}|{node}|{user}|{}|{}", resource.memory, resource.vcores)
}

fn hex(bytes: &[u8]) -> String {
    // Every allocated container is signed: no formatter per byte.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_bound_to_what_it_grants() {
        let key = TokenKey::new(b"secret".to_vec());
        let r = Res::new(1024, 1);
        let t = key.container_token("container_1_0001_01_000001", "h:1", "alice", r);
        assert!(key.check_container_token("container_1_0001_01_000001", "h:1", "alice", r, &t));
        assert!(!key.check_container_token("container_1_0001_01_000002", "h:1", "alice", r, &t));
        assert!(!key.check_container_token("container_1_0001_01_000001", "h:2", "alice", r, &t));
        assert!(!key.check_container_token("container_1_0001_01_000001", "h:1", "alice", Res::new(2048, 1), &t));
        assert!(!key.check_container_token("container_1_0001_01_000001", "h:1", "alice", r, "zz"));
        let other = TokenKey::new(b"other".to_vec());
        assert!(!other.check_container_token("container_1_0001_01_000001", "h:1", "alice", r, &t));
    }

    #[test]
    fn keys_round_trip_through_hex() {
        let key = TokenKey::new(vec![0, 1, 254, 255]);
        assert_eq!(key.to_hex(), "0001feff");
        assert_eq!(TokenKey::from_hex("0001feff").unwrap(), key);
        assert!(TokenKey::from_hex("abc").is_err());
        assert!(TokenKey::from_hex("zz").is_err());
    }
}
