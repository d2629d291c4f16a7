//! Tokens as YARN makes them: an identifier (a protobuf record saying what the token grants,
//! with the id of the master key it was made with) and a password, `HmacSHA1(master key,
//! identifier)` as Hadoop's secret managers compute it. Three kinds:
//!
//! - the AMRM token, one per application attempt: how an AM proves which attempt it is to the
//!   RM's scheduler address;
//! - the NM token, one per attempt and node: how an AM proves itself to a NodeManager, for its
//!   own application's containers only;
//! - the container token, one per allocated container: what a NodeManager starts, with the
//!   user, resource and expiry the RM signed.
//!
//! Each kind has its own master key, and keys roll ([`MasterKey::key_id`] tells which one
//! made a token). Types and arithmetic only: who keeps which keys is the RM's and NM's.

mod credentials;
mod hex;
pub mod wire;

use std::borrow::Cow;

use hmac::{Hmac, Mac};
use prost::Message;
use serde::{Deserialize, Serialize};
use sha1::Sha1;

use fairloom_model::{ApplicationAttemptId, ApplicationId, ContainerId};

use crate::Res;

pub use credentials::{Credentials, CredentialsError};

/// `n` bytes from the system's randomness (getrandom(2), which waits only until the
/// kernel's pool is first seeded at boot). Keys, secrets and sessions come from nowhere else.
pub fn random_bytes(n: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; n];
    let mut filled = 0;
    while filled < n {
        // SAFETY: getrandom writes at most `n - filled` bytes into the rest of `buf`.
        let got = unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), n - filled, 0) };
        if got > 0 {
            filled += got as usize;
        } else {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    Ok(buf)
}
pub use hex::{from_hex, to_hex};

pub const AMRM_TOKEN_KIND: &str = "YARN_AM_RM_TOKEN";
pub const NM_TOKEN_KIND: &str = "NMToken";
pub const CONTAINER_TOKEN_KIND: &str = "ContainerToken";

/// Hadoop's master keys are 64 bytes (`hadoop.security.secret-manager.key-length`).
pub const KEY_BYTES: usize = 64;

type HmacSha1 = Hmac<Sha1>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("not a {expected} token (its kind is '{found}')")]
    Kind { expected: &'static str, found: String },
    #[error("malformed {kind} identifier: {why}")]
    Malformed { kind: &'static str, why: String },
    #[error("malformed token: {0}")]
    Text(String),
    /// No key the checker knows has this id (too old, or never issued).
    #[error("no master key with id {0}")]
    UnknownKey(i32),
    #[error("the password does not match the identifier")]
    BadPassword,
}

/// A master key (YARN's `MasterKey`): its id, which tokens carry, and its secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasterKey {
    pub key_id: i32,
    #[serde(with = "hex::serde_bytes")]
    bytes: Vec<u8>,
}

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MasterKey({}, ..)", self.key_id)
    }
}

impl MasterKey {
    pub fn new(key_id: i32, bytes: Vec<u8>) -> Self {
        Self { key_id, bytes }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn mac(&self) -> HmacSha1 {
        // HMAC takes a key of any length, so this cannot fail.
        HmacSha1::new_from_slice(&self.bytes).expect("HMAC takes any key length")
    }

    /// Hadoop's `SecretManager.createPassword`: HmacSHA1 of the identifier's bytes.
    pub fn password(&self, identifier: &[u8]) -> Vec<u8> {
        let mut mac = self.mac();
        mac.update(identifier);
        mac.finalize().into_bytes().to_vec()
    }

    /// Whether `password` is this key's for `identifier` (compared in constant time).
    pub fn verify(&self, identifier: &[u8], password: &[u8]) -> bool {
        let mut mac = self.mac();
        mac.update(identifier);
        mac.verify_slice(password).is_ok()
    }

    /// A token for `id`, which must name this key.
    pub fn issue<I: Identifier>(&self, id: &I, service: impl Into<String>) -> Token {
        debug_assert_eq!(id.key_id(), self.key_id, "a token names the key that made it");
        let identifier = id.encode();
        Token {
            password: self.password(&identifier),
            identifier,
            kind: Cow::Borrowed(I::KIND),
            service: service.into(),
        }
    }
}

/// A token as it travels (Hadoop's `TokenProto`); the bytes are hex in JSON.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    #[serde(with = "hex::serde_bytes")]
    pub identifier: Vec<u8>,
    #[serde(with = "hex::serde_bytes")]
    pub password: Vec<u8>,
    /// Borrowed for the tokens fairloom issues (one per allocated container: no copy of a
    /// constant each time).
    pub kind: Cow<'static, str>,
    pub service: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token({}, {}, ..)", self.kind, self.service)
    }
}

impl Token {
    /// The token as one header value: `hex(identifier).hex(password)` (its kind is the
    /// header's, its service the server's).
    pub fn to_header(&self) -> String {
        format!("{}.{}", to_hex(&self.identifier), to_hex(&self.password))
    }

    /// A token of `kind` from [`Token::to_header`]'s text.
    pub fn from_header(kind: &'static str, text: &str) -> Result<Self, TokenError> {
        let (id, pw) =
            text.trim().split_once('.').ok_or_else(|| TokenError::Text("no '.' between the parts".into()))?;
        let bytes = |s: &str| from_hex(s).map_err(|e| TokenError::Text(e.to_string()));
        Ok(Self { identifier: bytes(id)?, password: bytes(pw)?, kind: Cow::Borrowed(kind), service: String::new() })
    }

    /// What the token grants, read without checking its password (see [`Token::check`]).
    pub fn identifier<I: Identifier>(&self) -> Result<I, TokenError> {
        if self.kind != I::KIND {
            return Err(TokenError::Kind { expected: I::KIND, found: self.kind.to_string() });
        }
        I::decode(&self.identifier)
    }

    /// What the token grants, once its password is checked against the key its identifier
    /// names; `key` finds a key by id among those the checker knows.
    pub fn check<'k, I: Identifier>(&self, key: impl Fn(i32) -> Option<&'k MasterKey>) -> Result<I, TokenError> {
        let id: I = self.identifier()?;
        let k = key(id.key_id()).ok_or(TokenError::UnknownKey(id.key_id()))?;
        if !k.verify(&self.identifier, &self.password) {
            return Err(TokenError::BadPassword);
        }
        Ok(id)
    }

    pub fn to_proto(&self) -> wire::TokenProto {
        wire::TokenProto {
            identifier: self.identifier.clone(),
            password: self.password.clone(),
            kind: self.kind.to_string(),
            service: self.service.clone(),
        }
    }

    pub fn from_proto(p: wire::TokenProto) -> Self {
        Self { identifier: p.identifier, password: p.password, kind: Cow::Owned(p.kind), service: p.service }
    }
}

/// A token identifier: its protobuf bytes and the key id it names.
pub trait Identifier: Sized {
    const KIND: &'static str;
    fn key_id(&self) -> i32;
    fn encode(&self) -> Vec<u8>;
    fn decode(bytes: &[u8]) -> Result<Self, TokenError>;
}

fn malformed(kind: &'static str, why: impl Into<String>) -> TokenError {
    TokenError::Malformed { kind, why: why.into() }
}

fn app_proto(a: ApplicationId) -> wire::ApplicationIdProto {
    wire::ApplicationIdProto { id: Some(a.id as i32), cluster_timestamp: Some(a.cluster_timestamp) }
}

fn attempt_proto(a: ApplicationAttemptId) -> wire::ApplicationAttemptIdProto {
    wire::ApplicationAttemptIdProto {
        application_id: Some(app_proto(a.application)),
        attempt_id: Some(a.attempt as i32),
    }
}

fn app_of(kind: &'static str, p: Option<wire::ApplicationIdProto>) -> Result<ApplicationId, TokenError> {
    let p = p.ok_or_else(|| malformed(kind, "no application id"))?;
    let id = p.id.filter(|i| *i >= 0).ok_or_else(|| malformed(kind, "no application number"))?;
    let ts = p.cluster_timestamp.ok_or_else(|| malformed(kind, "no cluster timestamp"))?;
    Ok(ApplicationId { cluster_timestamp: ts, id: id as u32 })
}

fn attempt_of(
    kind: &'static str,
    p: Option<wire::ApplicationAttemptIdProto>,
) -> Result<ApplicationAttemptId, TokenError> {
    let p = p.ok_or_else(|| malformed(kind, "no application attempt id"))?;
    let attempt = p.attempt_id.filter(|i| *i >= 0).ok_or_else(|| malformed(kind, "no attempt number"))?;
    Ok(ApplicationAttemptId { application: app_of(kind, p.application_id)?, attempt: attempt as u32 })
}

/// YARN's container id number: the RM's epoch above bit 40, the sequence below.
const EPOCH_SHIFT: u32 = 40;

#[cfg(test)]
fn container_proto(c: ContainerId) -> wire::ContainerIdProto {
    wire::ContainerIdProto {
        app_id: Some(app_proto(c.attempt.application)),
        app_attempt_id: Some(attempt_proto(c.attempt)),
        id: Some(((c.epoch as i64) << EPOCH_SHIFT) | (c.id as i64 & ((1 << EPOCH_SHIFT) - 1))),
    }
}

fn container_of(kind: &'static str, p: Option<wire::ContainerIdProto>) -> Result<ContainerId, TokenError> {
    let p = p.ok_or_else(|| malformed(kind, "no container id"))?;
    let attempt = attempt_of(kind, p.app_attempt_id)?;
    let n = p.id.filter(|n| *n >= 0).ok_or_else(|| malformed(kind, "no container number"))?;
    Ok(ContainerId { attempt, epoch: (n >> EPOCH_SHIFT) as u32, id: (n & ((1 << EPOCH_SHIFT) - 1)) as u64 })
}

/// `host:port` as YARN's NodeIdProto.
fn node_proto(node: &str) -> wire::NodeIdProto {
    let (host, port) = node.rsplit_once(':').unwrap_or((node, ""));
    wire::NodeIdProto { host: Some(host.to_string()), port: port.parse().ok() }
}

fn node_of(kind: &'static str, p: Option<wire::NodeIdProto>) -> Result<String, TokenError> {
    let p = p.ok_or_else(|| malformed(kind, "no node id"))?;
    match (p.host, p.port) {
        (Some(h), Some(port)) => Ok(format!("{h}:{port}")),
        _ => Err(malformed(kind, "the node id needs a host and a port")),
    }
}

fn decode_proto<M: Message + Default>(kind: &'static str, bytes: &[u8]) -> Result<M, TokenError> {
    M::decode(bytes).map_err(|e| malformed(kind, e.to_string()))
}

/// What an AMRM token grants: speaking for one application attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmrmTokenId {
    pub attempt: ApplicationAttemptId,
    pub key_id: i32,
}

impl Identifier for AmrmTokenId {
    const KIND: &'static str = AMRM_TOKEN_KIND;

    fn key_id(&self) -> i32 {
        self.key_id
    }

    fn encode(&self) -> Vec<u8> {
        wire::AmrmTokenIdentifierProto { app_attempt_id: Some(attempt_proto(self.attempt)), key_id: Some(self.key_id) }
            .encode_to_vec()
    }

    fn decode(bytes: &[u8]) -> Result<Self, TokenError> {
        let p: wire::AmrmTokenIdentifierProto = decode_proto(Self::KIND, bytes)?;
        Ok(Self { attempt: attempt_of(Self::KIND, p.app_attempt_id)?, key_id: p.key_id.unwrap_or(-1) })
    }
}

/// What an NM token grants: an attempt's calls on one node, for its application's containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NmTokenId {
    pub attempt: ApplicationAttemptId,
    /// `host:port`.
    pub node: String,
    pub user: String,
    pub key_id: i32,
}

impl Identifier for NmTokenId {
    const KIND: &'static str = NM_TOKEN_KIND;

    fn key_id(&self) -> i32 {
        self.key_id
    }

    fn encode(&self) -> Vec<u8> {
        wire::NmTokenIdentifierProto {
            app_attempt_id: Some(attempt_proto(self.attempt)),
            node_id: Some(node_proto(&self.node)),
            app_submitter: Some(self.user.clone()),
            key_id: Some(self.key_id),
        }
        .encode_to_vec()
    }

    fn decode(bytes: &[u8]) -> Result<Self, TokenError> {
        let p: wire::NmTokenIdentifierProto = decode_proto(Self::KIND, bytes)?;
        Ok(Self {
            attempt: attempt_of(Self::KIND, p.app_attempt_id)?,
            node: node_of(Self::KIND, p.node_id)?,
            user: p.app_submitter.unwrap_or_default(),
            key_id: p.key_id.unwrap_or(-1),
        })
    }
}

/// What a container token grants: starting one container on one node, as one user, with one
/// resource, until it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerTokenId {
    pub container: ContainerId,
    /// The node's id, `host:port`.
    pub node: String,
    pub user: String,
    pub resource: Res,
    /// Epoch milliseconds after which no NodeManager starts it.
    pub expiry: i64,
    pub key_id: i32,
    /// The RM's start time (its cluster timestamp).
    pub rm_identifier: i64,
    pub priority: i32,
    /// When the RM allocated it (epoch ms): what its usage is counted from.
    pub creation_time: i64,
    pub is_am: bool,
}

impl Identifier for ContainerTokenId {
    const KIND: &'static str = CONTAINER_TOKEN_KIND;

    fn key_id(&self) -> i32 {
        self.key_id
    }

    fn decode(bytes: &[u8]) -> Result<Self, TokenError> {
        Self::decode_proto(bytes)
    }

    /// Written field by field from the identifier itself: one is made for every allocated
    /// container, and building the protobuf record first cost two string copies and a
    /// third of the RM's time in issuing it. The bytes are prost's (a test compares them).
    fn encode(&self) -> Vec<u8> {
        use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};
        fn field_varint(out: &mut Vec<u8>, tag: u32, v: u64) {
            encode_key(tag, WireType::Varint, out);
            encode_varint(v, out);
        }
        fn field_bytes(out: &mut Vec<u8>, tag: u32, b: &[u8]) {
            encode_key(tag, WireType::LengthDelimited, out);
            encode_varint(b.len() as u64, out);
            out.extend_from_slice(b);
        }
        // Nested messages are written into `out` after their length, known in advance.
        fn field_message(out: &mut Vec<u8>, tag: u32, len: usize, body: impl FnOnce(&mut Vec<u8>)) {
            encode_key(tag, WireType::LengthDelimited, out);
            encode_varint(len as u64, out);
            body(out);
        }
        let vlen = |v: u64| 1 + encoded_len_varint(v);
        let app = self.container.attempt.application;
        let app_len = vlen(app.id as i32 as i64 as u64) + vlen(app.cluster_timestamp as u64);
        let attempt_len = 1
            + encoded_len_varint(app_len as u64)
            + app_len
            + vlen(self.container.attempt.attempt as i32 as i64 as u64);
        let number =
            ((self.container.epoch as i64) << EPOCH_SHIFT) | (self.container.id as i64 & ((1 << EPOCH_SHIFT) - 1));
        let cid_len = (1 + encoded_len_varint(app_len as u64) + app_len)
            + (1 + encoded_len_varint(attempt_len as u64) + attempt_len)
            + vlen(number as u64);
        let vcores = self.resource.vcores.clamp(0, i32::MAX as i64) as i32;
        let res_len = vlen(self.resource.memory as u64) + vlen(vcores as i64 as u64);
        let prio_len = vlen(self.priority as i64 as u64);
        let mut out = Vec::with_capacity(96 + self.node.len() + self.user.len());
        let write_app = |out: &mut Vec<u8>| {
            field_varint(out, 1, app.id as i32 as i64 as u64);
            field_varint(out, 2, app.cluster_timestamp as u64);
        };
        field_message(&mut out, 1, cid_len, |out| {
            field_message(out, 1, app_len, write_app);
            field_message(out, 2, attempt_len, |out| {
                field_message(out, 1, app_len, write_app);
                field_varint(out, 2, self.container.attempt.attempt as i32 as i64 as u64);
            });
            field_varint(out, 3, number as u64);
        });
        field_bytes(&mut out, 2, self.node.as_bytes());
        field_bytes(&mut out, 3, self.user.as_bytes());
        field_message(&mut out, 4, res_len, |out| {
            field_varint(out, 1, self.resource.memory as u64);
            field_varint(out, 2, vcores as i64 as u64);
        });
        field_varint(&mut out, 5, self.expiry as u64);
        field_varint(&mut out, 6, self.key_id as i64 as u64);
        field_varint(&mut out, 7, self.rm_identifier as u64);
        field_message(&mut out, 8, prio_len, |out| field_varint(out, 1, self.priority as i64 as u64));
        field_varint(&mut out, 9, self.creation_time as u64);
        let kind = if self.is_am { wire::CONTAINER_TYPE_APPLICATION_MASTER } else { wire::CONTAINER_TYPE_TASK };
        field_varint(&mut out, 12, kind as u64);
        out
    }
}

impl ContainerTokenId {
    /// The same bytes as [`Identifier::encode`], through prost's generated code (for tests).
    #[cfg(test)]
    fn encode_with_prost(&self) -> Vec<u8> {
        wire::ContainerTokenIdentifierProto {
            container_id: Some(container_proto(self.container)),
            nm_host_addr: Some(self.node.clone()),
            app_submitter: Some(self.user.clone()),
            resource: Some(wire::ResourceProto {
                memory: Some(self.resource.memory),
                virtual_cores: Some(self.resource.vcores.clamp(0, i32::MAX as i64) as i32),
            }),
            expiry_time_stamp: Some(self.expiry),
            master_key_id: Some(self.key_id),
            rm_identifier: Some(self.rm_identifier),
            priority: Some(wire::PriorityProto { priority: Some(self.priority) }),
            creation_time: Some(self.creation_time),
            container_type: Some(if self.is_am {
                wire::CONTAINER_TYPE_APPLICATION_MASTER
            } else {
                wire::CONTAINER_TYPE_TASK
            }),
        }
        .encode_to_vec()
    }
}

impl ContainerTokenId {
    fn decode_proto(bytes: &[u8]) -> Result<Self, TokenError> {
        let kind = Self::KIND;
        let p: wire::ContainerTokenIdentifierProto = decode_proto(kind, bytes)?;
        let r = p.resource.ok_or_else(|| malformed(kind, "no resource"))?;
        Ok(Self {
            container: container_of(kind, p.container_id)?,
            node: p.nm_host_addr.ok_or_else(|| malformed(kind, "no node"))?,
            user: p.app_submitter.ok_or_else(|| malformed(kind, "no user"))?,
            resource: Res::new(r.memory.unwrap_or(0), r.virtual_cores.unwrap_or(0) as i64),
            expiry: p.expiry_time_stamp.ok_or_else(|| malformed(kind, "no expiry"))?,
            key_id: p.master_key_id.unwrap_or(-1),
            rm_identifier: p.rm_identifier.unwrap_or(0),
            priority: p.priority.and_then(|q| q.priority).unwrap_or(0),
            creation_time: p.creation_time.unwrap_or(0),
            is_am: p.container_type == Some(wire::CONTAINER_TYPE_APPLICATION_MASTER),
        })
    }
}

/// What a NodeManager shows at registration when the cluster has a registration secret (a file
/// readable by the NodeManagers and the RM only): HMAC-SHA256 of its node id, hex. Without
/// Kerberos this is what tells a NodeManager from a process that merely reaches the port.
pub fn registration_proof(secret: &[u8], node_id: &str) -> String {
    use sha2::Sha256;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(b"register|");
    mac.update(node_id.as_bytes());
    to_hex(&mac.finalize().into_bytes())
}

/// Whether `proof` is [`registration_proof`]'s for `node_id` (compared in constant time).
pub fn check_registration_proof(secret: &[u8], node_id: &str, proof: &str) -> bool {
    use sha2::Sha256;
    let Ok(bytes) = from_hex(proof) else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(b"register|");
    mac.update(node_id.as_bytes());
    mac.verify_slice(&bytes).is_ok()
}

/// The keys of one kind a NodeManager knows (YARN's NM secret managers keep two): the RM's
/// current key and the one before it, so tokens made just before a roll still work.
#[derive(Debug, Clone, Default)]
pub struct KnownKeys {
    current: Option<MasterKey>,
    previous: Option<MasterKey>,
}

impl KnownKeys {
    /// Take `key` as current (YARN's `setMasterKey`); the current one becomes the previous.
    /// A key already current changes nothing.
    pub fn set(&mut self, key: MasterKey) {
        if self.current.as_ref().is_some_and(|c| c.key_id == key.key_id) {
            return;
        }
        self.previous = self.current.replace(key);
    }

    pub fn find(&self, key_id: i32) -> Option<&MasterKey> {
        [&self.current, &self.previous].into_iter().flatten().find(|k| k.key_id == key_id)
    }

    /// The current key's id, or -1 (YARN's "none") before the first.
    pub fn current_id(&self) -> i32 {
        self.current.as_ref().map_or(-1, |k| k.key_id)
    }

    /// Both keys, current first (what a NodeManager keeps across its restarts).
    pub fn keys(&self) -> Vec<MasterKey> {
        [&self.current, &self.previous].into_iter().flatten().cloned().collect()
    }

    /// The keys [`KnownKeys::keys`] gave.
    pub fn from_keys(keys: Vec<MasterKey>) -> Self {
        let mut it = keys.into_iter();
        Self { current: it.next(), previous: it.next() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt() -> ApplicationAttemptId {
        "appattempt_1700000000000_0007_000002".parse().unwrap()
    }

    #[test]
    fn identifiers_round_trip_and_tokens_check() {
        let key = MasterKey::new(41, vec![7; KEY_BYTES]);
        let amrm = AmrmTokenId { attempt: attempt(), key_id: 41 };
        let t = key.issue(&amrm, "");
        assert_eq!(t.kind, "YARN_AM_RM_TOKEN");
        assert_eq!(t.password.len(), 20, "HmacSHA1");
        assert_eq!(t.check::<AmrmTokenId>(|id| (id == 41).then_some(&key)).unwrap(), amrm);

        let c = ContainerTokenId {
            container: "container_e03_1700000000000_0007_02_000009".parse().unwrap(),
            node: "10.0.0.1:45454".to_string(),
            user: "alice".to_string(),
            resource: Res::new(2048, 2),
            expiry: 1_700_000_600_000,
            key_id: 41,
            rm_identifier: 1_700_000_000_000,
            priority: 3,
            creation_time: 1_700_000_000_123,
            is_am: true,
        };
        let t = key.issue(&c, "10.0.0.1:45454");
        assert_eq!(t.identifier::<ContainerTokenId>().unwrap(), c);
        // The hand-written encoding is prost's, byte for byte, over the fields' ranges.
        for (epoch, id, prio, vcores, attempt, app) in [
            (0u32, 1u64, 0i32, 0i64, 1u32, 1u32),
            (3, 999_999, -1, 2, 2, 7),
            (0xff, (1 << 40) - 1, i32::MAX, i64::MAX, 127, 1 << 20),
        ] {
            let mut d = c.clone();
            d.container.epoch = epoch;
            d.container.id = id;
            d.container.attempt.attempt = attempt;
            d.container.attempt.application.id = app;
            d.priority = prio;
            d.resource.vcores = vcores;
            d.is_am = !d.is_am;
            d.key_id = -1;
            assert_eq!(d.encode(), d.encode_with_prost(), "{d:?}");
        }
        let nm = NmTokenId { attempt: attempt(), node: "10.0.0.1:45454".into(), user: "alice".into(), key_id: 41 };
        let t = key.issue(&nm, "10.0.0.1:45454");
        let back = Token::from_header(NM_TOKEN_KIND, &t.to_header()).unwrap();
        assert_eq!(back.check::<NmTokenId>(|id| (id == 41).then_some(&key)).unwrap(), nm);
    }

    #[test]
    fn a_forged_or_foreign_token_is_refused() {
        let key = MasterKey::new(1, vec![1; KEY_BYTES]);
        let other = MasterKey::new(1, vec![2; KEY_BYTES]);
        let amrm = AmrmTokenId { attempt: attempt(), key_id: 1 };
        let t = other.issue(&amrm, "");
        assert_eq!(t.check::<AmrmTokenId>(|_| Some(&key)), Err(TokenError::BadPassword));
        // The identifier changed after signing (another attempt): the password no longer fits.
        let mut t = key.issue(&amrm, "");
        let mut changed = amrm;
        changed.attempt.attempt = 1;
        t.identifier = changed.encode();
        assert_eq!(t.check::<AmrmTokenId>(|_| Some(&key)), Err(TokenError::BadPassword));
        // A key the checker does not know.
        let t = key.issue(&amrm, "");
        assert_eq!(t.check::<AmrmTokenId>(|_| None), Err(TokenError::UnknownKey(1)));
        // A token of another kind is not taken for this one.
        let mut wrong = key.issue(&amrm, "");
        wrong.kind = Cow::Borrowed(NM_TOKEN_KIND);
        assert!(matches!(wrong.check::<AmrmTokenId>(|_| Some(&key)), Err(TokenError::Kind { .. })));
        // Garbage.
        assert!(Token::from_header(AMRM_TOKEN_KIND, "zz.00").is_err());
        assert!(Token::from_header(AMRM_TOKEN_KIND, "").is_err());
        let junk = Token::from_header(AMRM_TOKEN_KIND, "ffff.00").unwrap();
        assert!(junk.check::<AmrmTokenId>(|_| Some(&key)).is_err());
    }

    #[test]
    fn a_registration_proof_names_its_node() {
        let p = registration_proof(b"s", "h:1");
        assert!(check_registration_proof(b"s", "h:1", &p));
        assert!(!check_registration_proof(b"s", "h:2", &p));
        assert!(!check_registration_proof(b"t", "h:1", &p));
        assert!(!check_registration_proof(b"s", "h:1", "zz"));
    }

    #[test]
    fn a_node_keeps_the_current_key_and_the_one_before() {
        let mut k = KnownKeys::default();
        assert_eq!(k.current_id(), -1);
        k.set(MasterKey::new(5, vec![5]));
        k.set(MasterKey::new(6, vec![6]));
        assert!(k.find(5).is_some() && k.find(6).is_some());
        k.set(MasterKey::new(6, vec![6]));
        assert!(k.find(5).is_some(), "setting the current key again drops nothing");
        k.set(MasterKey::new(7, vec![7]));
        assert!(k.find(5).is_none() && k.find(6).is_some() && k.find(7).is_some());
        assert_eq!(k.current_id(), 7);
        let again = KnownKeys::from_keys(k.keys());
        assert_eq!(again.current_id(), 7);
        assert!(again.find(6).is_some());
    }
}
