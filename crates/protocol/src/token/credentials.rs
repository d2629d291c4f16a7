//! Hadoop's credentials file (`Credentials.writeTokenStorageToStream`): the magic `HDTS`, a
//! version byte, then the tokens and secrets. What a container finds at
//! `HADOOP_TOKEN_FILE_LOCATION`; an AM reads its AMRM token from it. Written in version 0 (the
//! Writable layout, Hadoop's own default); read in version 0 or 1 (protobuf).

use prost::Message;

use super::wire::CredentialsProto;
use super::Token;

const MAGIC: &[u8; 4] = b"HDTS";
/// Larger than any token file a container needs: what a reader refuses to allocate for.
const MAX_ITEMS: i64 = 4096;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("credentials: {0}")]
pub struct CredentialsError(String);

fn bad(why: impl Into<String>) -> CredentialsError {
    CredentialsError(why.into())
}

/// Tokens and secrets by alias.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub tokens: Vec<(String, Token)>,
    pub secrets: Vec<(String, Vec<u8>)>,
}

impl Credentials {
    /// The first token of `kind`.
    pub fn token(&self, kind: &str) -> Option<&Token> {
        self.tokens.iter().map(|(_, t)| t).find(|t| t.kind == kind)
    }

    /// Version 0, Writable: vint counts and lengths, Text (vint length + UTF-8) strings.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(0);
        write_vlong(&mut out, self.tokens.len() as i64);
        for (alias, t) in &self.tokens {
            write_bytes(&mut out, alias.as_bytes());
            write_bytes(&mut out, &t.identifier);
            write_bytes(&mut out, &t.password);
            write_bytes(&mut out, t.kind.as_bytes());
            write_bytes(&mut out, t.service.as_bytes());
        }
        write_vlong(&mut out, self.secrets.len() as i64);
        for (alias, s) in &self.secrets {
            write_bytes(&mut out, alias.as_bytes());
            write_bytes(&mut out, s);
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CredentialsError> {
        let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or_else(|| bad("no HDTS magic"))?;
        let (&version, rest) = rest.split_first().ok_or_else(|| bad("no version"))?;
        match version {
            0 => Reader { bytes: rest }.credentials(),
            1 => from_proto(rest),
            v => Err(bad(format!("unknown version {v}"))),
        }
    }
}

fn from_proto(bytes: &[u8]) -> Result<Credentials, CredentialsError> {
    let p = CredentialsProto::decode_length_delimited(bytes).map_err(|e| bad(e.to_string()))?;
    let tokens = p
        .tokens
        .into_iter()
        .map(|kv| Ok((kv.alias, Token::from_proto(kv.token.ok_or_else(|| bad("a token entry without a token"))?))))
        .collect::<Result<_, CredentialsError>>()?;
    let secrets = p.secrets.into_iter().map(|kv| (kv.alias, kv.secret.unwrap_or_default())).collect();
    Ok(Credentials { tokens, secrets })
}

/// Hadoop's `WritableUtils.writeVLong`: -112..=127 in one byte, otherwise a length byte and
/// the big-endian bytes (of the one's complement, for negatives).
fn write_vlong(out: &mut Vec<u8>, value: i64) {
    if (-112..=127).contains(&value) {
        out.push(value as i8 as u8);
        return;
    }
    let (v, mut len) = if value < 0 { (!value, -120i32) } else { (value, -112i32) };
    let mut tmp = v;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as i8 as u8);
    let n = if len < -120 { -(len + 120) } else { -(len + 112) };
    for i in (0..n).rev() {
        out.push(((v >> (i * 8)) & 0xff) as u8);
    }
}

fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    write_vlong(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, CredentialsError> {
        let (&b, rest) = self.bytes.split_first().ok_or_else(|| bad("truncated"))?;
        self.bytes = rest;
        Ok(b)
    }

    /// `WritableUtils.readVLong`.
    fn vlong(&mut self) -> Result<i64, CredentialsError> {
        let first = self.byte()? as i8 as i64;
        let len = if first >= -112 {
            return Ok(first);
        } else if first < -120 {
            -119 - first
        } else {
            -111 - first
        };
        let mut v: i64 = 0;
        for _ in 0..len - 1 {
            v = (v << 8) | self.byte()? as i64;
        }
        Ok(if first < -120 { !v } else { v })
    }

    fn count(&mut self) -> Result<usize, CredentialsError> {
        let n = self.vlong()?;
        if !(0..=MAX_ITEMS).contains(&n) {
            return Err(bad(format!("a count of {n}")));
        }
        Ok(n as usize)
    }

    fn bytes(&mut self) -> Result<Vec<u8>, CredentialsError> {
        let n = self.vlong()?;
        if n < 0 || n as usize > self.bytes.len() {
            return Err(bad(format!("a length of {n} with {} bytes left", self.bytes.len())));
        }
        let (head, rest) = self.bytes.split_at(n as usize);
        self.bytes = rest;
        Ok(head.to_vec())
    }

    fn text(&mut self) -> Result<String, CredentialsError> {
        String::from_utf8(self.bytes()?).map_err(|_| bad("a string that is not UTF-8"))
    }

    fn credentials(mut self) -> Result<Credentials, CredentialsError> {
        let mut c = Credentials::default();
        for _ in 0..self.count()? {
            let alias = self.text()?;
            let token = Token {
                identifier: self.bytes()?,
                password: self.bytes()?,
                kind: self.text()?.into(),
                service: self.text()?,
            };
            c.tokens.push((alias, token));
        }
        for _ in 0..self.count()? {
            let alias = self.text()?;
            c.secrets.push((alias, self.bytes()?));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::wire::CredentialsKvProto;

    #[test]
    fn hadoop_vlongs() {
        for (v, bytes) in [
            (0i64, vec![0u8]),
            (127, vec![0x7f]),
            (-112, vec![0x90]),
            (128, vec![0x8f, 0x80]),
            (256, vec![0x8e, 0x01, 0x00]),
            (-113, vec![0x87, 0x70]),
        ] {
            let mut out = Vec::new();
            write_vlong(&mut out, v);
            assert_eq!(out, bytes, "{v}");
            assert_eq!(Reader { bytes: &out }.vlong().unwrap(), v);
        }
        for v in [i64::MAX, i64::MIN, -1, 1 << 40, -(1 << 33)] {
            let mut out = Vec::new();
            write_vlong(&mut out, v);
            assert_eq!(Reader { bytes: &out }.vlong().unwrap(), v, "{v}");
        }
    }

    #[test]
    fn the_empty_file_and_a_token_round_trip_in_both_versions() {
        assert_eq!(Credentials::default().to_bytes(), b"HDTS\x00\x00\x00");
        let t = Token {
            identifier: vec![1; 17],
            password: vec![2; 20],
            kind: "YARN_AM_RM_TOKEN".into(),
            service: "".into(),
        };
        let c = Credentials { tokens: vec![(String::new(), t.clone())], secrets: vec![("s".into(), vec![9])] };
        let back = Credentials::from_bytes(&c.to_bytes()).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.token("YARN_AM_RM_TOKEN"), Some(&t));
        let proto = CredentialsProto {
            tokens: vec![CredentialsKvProto { alias: String::new(), token: Some(t.to_proto()), secret: None }],
            secrets: vec![],
        };
        let mut v1 = b"HDTS\x01".to_vec();
        v1.extend(proto.encode_length_delimited_to_vec());
        assert_eq!(Credentials::from_bytes(&v1).unwrap().token("YARN_AM_RM_TOKEN"), Some(&t));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic_or_an_allocation() {
        for junk in [&b""[..], b"HDTX\x00", b"HDTS", b"HDTS\x07", b"HDTS\x00\x05", b"HDTS\x00\x01\x8c\x7f\xff\xff\xff"]
        {
            assert!(Credentials::from_bytes(junk).is_err(), "{junk:?}");
        }
    }
}
