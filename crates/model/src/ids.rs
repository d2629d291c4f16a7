//! YARN's textual ids: `application_<clusterTs>_<seq>`, `appattempt_…`, `container_…`.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} id '{text}'")]
pub struct IdParseError {
    pub kind: &'static str,
    pub text: String,
}

/// `application_<clusterTimestamp>_<sequence>`, the sequence zero-padded to 4 digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApplicationId {
    pub cluster_timestamp: i64,
    pub id: u32,
}

/// `appattempt_<clusterTimestamp>_<sequence>_<attempt>`, the attempt padded to 6 digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApplicationAttemptId {
    pub application: ApplicationId,
    pub attempt: u32,
}

/// `container_[e<epoch>_]<clusterTimestamp>_<sequence>_<attempt>_<container>`:
/// attempt padded to 2 digits, container number to 6, epoch to 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContainerId {
    pub attempt: ApplicationAttemptId,
    pub epoch: u32,
    pub id: u64,
}

impl fmt::Display for ApplicationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "application_{}_{:04}", self.cluster_timestamp, self.id)
    }
}

impl fmt::Display for ApplicationAttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let app = self.application;
        write!(f, "appattempt_{}_{:04}_{:06}", app.cluster_timestamp, app.id, self.attempt)
    }
}

impl fmt::Display for ContainerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let app = self.attempt.application;
        f.write_str("container_")?;
        if self.epoch > 0 {
            write!(f, "e{:02}_", self.epoch)?;
        }
        write!(f, "{}_{:04}_{:02}_{:06}", app.cluster_timestamp, app.id, self.attempt.attempt, self.id)
    }
}

/// The `_`-separated fields after `prefix`, without allocating: an RM parses the id of
/// every container each node reports, every heartbeat. No id has more than five.
fn parts<'a>(text: &'a str, prefix: &str, kind: &'static str) -> Result<Fields<'a>, IdParseError> {
    let err = || IdParseError { kind, text: text.to_string() };
    let rest = text.strip_prefix(prefix).ok_or_else(err)?;
    let mut fields = Fields { items: [""; 5], len: 0 };
    for part in rest.split('_') {
        *fields.items.get_mut(fields.len).ok_or_else(err)? = part;
        fields.len += 1;
    }
    Ok(fields)
}

struct Fields<'a> {
    items: [&'a str; 5],
    len: usize,
}

impl<'a> Fields<'a> {
    fn as_slice(&self) -> &[&'a str] {
        &self.items[..self.len]
    }
}

fn num<T: FromStr>(s: &str, kind: &'static str, text: &str) -> Result<T, IdParseError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(IdParseError { kind, text: text.to_string() });
    }
    s.parse().map_err(|_| IdParseError { kind, text: text.to_string() })
}

impl FromStr for ApplicationId {
    type Err = IdParseError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const KIND: &str = "application";
        match parts(text, "application_", KIND)?.as_slice() {
            [ts, id] => Ok(Self { cluster_timestamp: num(ts, KIND, text)?, id: num(id, KIND, text)? }),
            _ => Err(IdParseError { kind: KIND, text: text.to_string() }),
        }
    }
}

impl FromStr for ApplicationAttemptId {
    type Err = IdParseError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const KIND: &str = "application attempt";
        match parts(text, "appattempt_", KIND)?.as_slice() {
            [ts, id, attempt] => Ok(Self {
                application: ApplicationId { cluster_timestamp: num(ts, KIND, text)?, id: num(id, KIND, text)? },
                attempt: num(attempt, KIND, text)?,
            }),
            _ => Err(IdParseError { kind: KIND, text: text.to_string() }),
        }
    }
}

impl FromStr for ContainerId {
    type Err = IdParseError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const KIND: &str = "container";
        let fields = parts(text, "container_", KIND)?;
        let p = fields.as_slice();
        let (epoch, rest) = match p.first() {
            Some(e) if e.starts_with('e') => (num(&e[1..], KIND, text)?, &p[1..]),
            _ => (0, p),
        };
        match rest {
            [ts, id, attempt, cid] => Ok(Self {
                attempt: ApplicationAttemptId {
                    application: ApplicationId { cluster_timestamp: num(ts, KIND, text)?, id: num(id, KIND, text)? },
                    attempt: num(attempt, KIND, text)?,
                },
                epoch,
                id: num(cid, KIND, text)?,
            }),
            _ => Err(IdParseError { kind: KIND, text: text.to_string() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_yarn() {
        let app = ApplicationId { cluster_timestamp: 1_700_000_000_000, id: 7 };
        assert_eq!(app.to_string(), "application_1700000000000_0007");
        let attempt = ApplicationAttemptId { application: app, attempt: 1 };
        assert_eq!(attempt.to_string(), "appattempt_1700000000000_0007_000001");
        let c = ContainerId { attempt, epoch: 0, id: 42 };
        assert_eq!(c.to_string(), "container_1700000000000_0007_01_000042");
        let e = ContainerId { epoch: 3, ..c };
        assert_eq!(e.to_string(), "container_e03_1700000000000_0007_01_000042");
    }

    #[test]
    fn parses_what_it_formats() {
        for text in ["container_1_0002_01_000003", "container_e17_1_0002_01_000003"] {
            assert_eq!(text.parse::<ContainerId>().unwrap().to_string(), text);
        }
        assert_eq!("application_5_12345".parse::<ApplicationId>().unwrap().id, 12345);
        assert!("application_x_1".parse::<ApplicationId>().is_err());
        assert!("container_1_2".parse::<ContainerId>().is_err());
        assert!("appattempt_1_2_".parse::<ApplicationAttemptId>().is_err());
        for too_many in ["container_e1_1_2_3_4_5", "container_1_2_3_4_5_6_7_8", "application_1_2"] {
            let err = too_many.parse::<ContainerId>().expect_err(too_many);
            assert_eq!(err.text, too_many, "the error names the text");
        }
    }
}
