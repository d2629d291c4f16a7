//! What a NodeManager checks before it acts for anyone (YARN's NM secret managers and
//! ContainerManagerImpl): a container starts only with a container token the RM made for this
//! node, unexpired and never used before; an AM's start, stop and status calls carry an NM
//! token for this node, and reach only its own application's containers. The refusals use
//! YARN's words.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fairloom_model::{ApplicationId, ContainerId};
use fairloom_protocol::token::{ContainerTokenId, KnownKeys, MasterKey, NmTokenId, Token, TokenError, NM_TOKEN_KIND};

/// The keys the RM gave this node, and its registration's session.
#[derive(Debug, Default)]
pub struct Keys {
    pub container: KnownKeys,
    pub nm: KnownKeys,
    pub session: String,
}

/// The node's checks: its id, the keys, and the containers started with a token that has
/// not expired yet (so no token starts a container twice).
pub struct Guard {
    node_id: String,
    pub keys: Mutex<Keys>,
    started: Mutex<HashMap<ContainerId, i64>>,
}

pub type SharedGuard = Arc<Guard>;

const INVALID_NMTOKEN: &str = "Invalid NMToken";

impl Guard {
    pub fn new(node_id: &str) -> Self {
        Self { node_id: node_id.to_string(), keys: Mutex::new(Keys::default()), started: Mutex::new(HashMap::new()) }
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Take keys the RM sent (at registration, or the next ones in a heartbeat answer).
    pub fn learn(&self, container: Option<MasterKey>, nm: Option<MasterKey>) {
        let mut k = self.keys();
        if let Some(key) = container {
            k.container.set(key);
        }
        if let Some(key) = nm {
            k.nm.set(key);
        }
    }

    /// What a container token grants, when the RM made it for this node with a key the node
    /// knows and it has not expired.
    pub fn container_token(&self, token: &Token, now: i64) -> Result<ContainerTokenId, String> {
        let id: ContainerTokenId = token.identifier().map_err(|e| format!("Invalid ContainerToken: {e}"))?;
        if id.node != self.node_id {
            return Err(format!(
                "Given Container {} identifier is not valid for current Node manager. Expected : {} Found : {}",
                id.container, self.node_id, id.node
            ));
        }
        let keys = self.keys();
        match token.check::<ContainerTokenId>(|k| keys.container.find(k)) {
            Ok(_) => {}
            Err(TokenError::UnknownKey(_)) => {
                return Err(format!("Given Container {} seems to have an illegally generated token.", id.container))
            }
            Err(_) => return Err(format!("Invalid container token used for starting container on : {}", self.node_id)),
        }
        if id.expiry < now {
            return Err(format!(
                "Unauthorized request to start container.\nThis token is expired. current time is {now} found {}\nNote: System times on machines may be out of sync. Check system time and time zones.",
                id.expiry
            ));
        }
        Ok(id)
    }

    /// Whether `id` may start now: once per token (YARN's "relaunch" refusal). Entries leave
    /// when their token expires, so the record is bounded by the tokens still good.
    pub fn first_start(&self, id: &ContainerTokenId, now: i64) -> Result<(), String> {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        started.retain(|_, expiry| *expiry >= now);
        if started.contains_key(&id.container) {
            return Err(format!(
                "Unauthorized request to start container.\n Attempt to relaunch the same container with id {}.",
                id.container
            ));
        }
        started.insert(id.container, id.expiry);
        Ok(())
    }

    /// Remember containers started before a restart, so their tokens cannot start them again.
    pub fn started_before(&self, id: ContainerId, expiry: i64) {
        self.started.lock().unwrap_or_else(|p| p.into_inner()).insert(id, expiry);
    }

    /// Who calls: the NM token in `header`, made for this node with a key the node knows.
    pub fn nm_token(&self, header: Option<&str>) -> Result<NmTokenId, String> {
        let token = Token::from_header(NM_TOKEN_KIND, header.ok_or(INVALID_NMTOKEN)?).map_err(|_| INVALID_NMTOKEN)?;
        let id: NmTokenId = token.identifier().map_err(|_| INVALID_NMTOKEN)?;
        if id.node != self.node_id {
            return Err(format!(
                "Given NMToken for application : {} is not valid for current node manager.expected : {} found : {}",
                id.attempt, self.node_id, id.node
            ));
        }
        let keys = self.keys();
        match token.check::<NmTokenId>(|k| keys.nm.find(k)) {
            Ok(id) => Ok(id),
            Err(TokenError::UnknownKey(_)) => {
                Err(format!("Given NMToken for application : {} seems to have been generated illegally.", id.attempt))
            }
            Err(_) => Err(INVALID_NMTOKEN.to_string()),
        }
    }
}

/// YARN's start check: the NM token's application must be the container token's.
pub fn may_start(caller: &NmTokenId, container: &ContainerTokenId) -> Result<(), String> {
    if caller.attempt.application != container.container.attempt.application {
        return Err(format!(
            "Unauthorized request to start container.\nNMToken for application attempt : {} was used for starting container with container token issued for application attempt : {}",
            caller.attempt, container.container.attempt
        ));
    }
    Ok(())
}

/// YARN's stop and status check: only the caller's own application's containers.
pub fn may_touch(caller: &NmTokenId, container: ContainerId, stop: bool) -> Result<(), String> {
    let app: ApplicationId = caller.attempt.application;
    if container.attempt.application != app {
        let what = if stop { "stop" } else { "get status for" };
        return Err(format!("{} attempted to {what} non-application container : {container}", caller.attempt));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairloom_protocol::token::KEY_BYTES;
    use fairloom_protocol::Res;

    fn ctid(node: &str, expiry: i64, key_id: i32) -> ContainerTokenId {
        ContainerTokenId {
            container: "container_1_0001_01_000002".parse().unwrap(),
            node: node.to_string(),
            user: "alice".to_string(),
            resource: Res::new(1024, 1),
            expiry,
            key_id,
            rm_identifier: 1,
            priority: 0,
            creation_time: 5,
            is_am: false,
        }
    }

    fn guard() -> (Guard, MasterKey, MasterKey) {
        let g = Guard::new("h:1");
        let (ck, nk) = (MasterKey::new(10, vec![1; KEY_BYTES]), MasterKey::new(20, vec![2; KEY_BYTES]));
        g.learn(Some(ck.clone()), Some(nk.clone()));
        (g, ck, nk)
    }

    #[test]
    fn container_tokens_for_this_node_with_a_known_key_before_expiry_start_once() {
        let (g, ck, _) = guard();
        let t = ck.issue(&ctid("h:1", 100, 10), "h:1");
        let id = g.container_token(&t, 50).unwrap();
        assert!(g.first_start(&id, 50).is_ok());
        let again = g.first_start(&id, 60).unwrap_err();
        assert!(again.contains("Attempt to relaunch the same container"), "{again}");
        // Expired.
        let e = g.container_token(&t, 101).unwrap_err();
        assert!(e.contains("This token is expired. current time is 101 found 100"), "{e}");
        // Another node's.
        let e = g.container_token(&ck.issue(&ctid("h:2", 100, 10), "h:2"), 50).unwrap_err();
        assert!(e.contains("not valid for current Node manager. Expected : h:1 Found : h:2"), "{e}");
        // A key the node never had.
        let stranger = MasterKey::new(11, vec![9; KEY_BYTES]);
        let e = g.container_token(&stranger.issue(&ctid("h:1", 100, 11), "h:1"), 50).unwrap_err();
        assert!(e.contains("seems to have an illegally generated token"), "{e}");
        // The right key id with another secret: forged.
        let forged = MasterKey::new(10, vec![9; KEY_BYTES]);
        let e = g.container_token(&forged.issue(&ctid("h:1", 100, 10), "h:1"), 50).unwrap_err();
        assert!(e.contains("Invalid container token"), "{e}");
    }

    #[test]
    fn nm_tokens_name_this_node_and_reach_only_their_application() {
        let (g, _, nk) = guard();
        let attempt = "appattempt_1_0001_000001".parse().unwrap();
        let mine = NmTokenId { attempt, node: "h:1".into(), user: "alice".into(), key_id: 20 };
        let id = g.nm_token(Some(&nk.issue(&mine, "h:1").to_header())).unwrap();
        assert!(may_touch(&id, "container_1_0001_01_000009".parse().unwrap(), true).is_ok());
        let e = may_touch(&id, "container_1_0002_01_000001".parse().unwrap(), true).unwrap_err();
        assert_eq!(
            e,
            "appattempt_1_0001_000001 attempted to stop non-application container : container_1_0002_01_000001"
        );
        assert_eq!(g.nm_token(None).unwrap_err(), "Invalid NMToken");
        assert_eq!(g.nm_token(Some("garbage")).unwrap_err(), "Invalid NMToken");
        let elsewhere = NmTokenId { node: "h:2".into(), ..mine.clone() };
        let e = g.nm_token(Some(&nk.issue(&elsewhere, "h:2").to_header())).unwrap_err();
        assert!(e.contains("is not valid for current node manager.expected : h:1 found : h:2"), "{e}");
        let forged = MasterKey::new(20, vec![7; KEY_BYTES]);
        assert_eq!(g.nm_token(Some(&forged.issue(&mine, "h:1").to_header())).unwrap_err(), "Invalid NMToken");
        let other_app = NmTokenId { attempt: "appattempt_1_0002_000001".parse().unwrap(), ..mine };
        let e = may_start(&other_app, &ctid("h:1", 100, 10)).unwrap_err();
        assert!(e.contains("was used for starting container with container token issued for application attempt : appattempt_1_0001_000001"), "{e}");
    }
}
