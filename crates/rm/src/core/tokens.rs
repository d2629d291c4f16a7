//! The tokens the RM issues and checks: AMRM tokens (which attempt an AM speaks for),
//! container tokens (what a NodeManager may start) and NM tokens (an AM's calls on a node),
//! each made with its own master key; and the keys' rolling at each tick.

use fairloom_model::{ApplicationAttemptId, ContainerId, Millis};
use fairloom_protocol::token::{AmrmTokenId, ContainerTokenId, Credentials, NmTokenId, Token, TokenError};
use fairloom_protocol::Res;

use super::Core;
use crate::error::RmError;
use crate::secrets::{activation_delay, KeyGen, Roll, RollingKey};

/// The RM's master keys, one per purpose.
pub struct Keys {
    pub amrm: RollingKey,
    pub container: RollingKey,
    pub nm: RollingKey,
}

impl Keys {
    /// Container and NM token keys are new at every start (YARN does not store them); the
    /// AMRM keys are `amrm` when the store had them.
    pub fn new(conf: &crate::conf::RmConf, amrm: Option<RollingKey>, keygen: &mut KeyGen, now: Millis) -> Self {
        let nm_delay = activation_delay(conf.nm_expiry_ms);
        Self {
            amrm: amrm.unwrap_or_else(|| {
                RollingKey::new(conf.amrm_key_rolling_ms, activation_delay(conf.am_expiry_ms), keygen, now)
            }),
            container: RollingKey::new(conf.container_key_rolling_ms, nm_delay, keygen, now),
            nm: RollingKey::new(conf.nm_token_key_rolling_ms, nm_delay, keygen, now),
        }
    }
}

impl Core {
    /// The AMRM token of `attempt`, made with the newest key (the next one while a key rolls,
    /// so the AM holds it before it becomes the only one).
    pub(super) fn amrm_token(&self, attempt: ApplicationAttemptId) -> Token {
        let key = self.keys.amrm.next().unwrap_or(self.keys.amrm.current());
        key.issue(&AmrmTokenId { attempt, key_id: key.key_id }, self.conf.scheduler_address.to_string())
    }

    /// The AM container's credentials file: its AMRM token, under the alias YARN gives it.
    pub(super) fn am_credentials(&self, attempt: ApplicationAttemptId) -> Vec<u8> {
        Credentials { tokens: vec![(String::new(), self.amrm_token(attempt))], secrets: Vec::new() }.to_bytes()
    }

    /// Which attempt an AMRM token speaks for (and its key), if one of the current keys
    /// made it.
    pub(super) fn check_amrm(&self, token: &Token) -> Result<AmrmTokenId, RmError> {
        let checked: Result<AmrmTokenId, TokenError> = token.check(|id| self.keys.amrm.find(id));
        match checked {
            Ok(id) => Ok(id),
            Err(e) => {
                let who = token.identifier::<AmrmTokenId>().map(|i| i.attempt.to_string());
                let who = who.unwrap_or_else(|_| "an unreadable token".to_string());
                Err(RmError::invalid_token(format!("Invalid AMRMToken from {who}: {e}")))
            }
        }
    }

    /// The new AMRM token an AM must switch to, when its own was made with an older key.
    pub(super) fn rolled_amrm_token(&self, attempt: ApplicationAttemptId, held: i32) -> Option<Token> {
        let newest = self.keys.amrm.next()?;
        (newest.key_id != held).then(|| self.amrm_token(attempt))
    }

    /// The container token of `container`, good until the allocation expiry.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn container_token(
        &self,
        container: ContainerId,
        node: &str,
        user: &str,
        resource: Res,
        priority: i32,
        is_am: bool,
        now: Millis,
    ) -> Token {
        let key = self.keys.container.current();
        let id = ContainerTokenId {
            container,
            node: node.to_string(),
            user: user.to_string(),
            resource,
            expiry: now.saturating_add(self.conf.container_expiry_ms),
            key_id: key.key_id,
            rm_identifier: self.cluster_ts,
            priority,
            creation_time: now,
            is_am,
        };
        key.issue(&id, node)
    }

    /// An NM token for `attempt` of `user` on `node`.
    pub(super) fn nm_token(&self, attempt: ApplicationAttemptId, node: &str, user: &str) -> Token {
        let key = self.keys.nm.current();
        key.issue(&NmTokenId { attempt, node: node.to_string(), user: user.to_string(), key_id: key.key_id }, node)
    }

    /// Roll the master keys whose time has come. A new NM token key, once active, means
    /// every AM needs new NM tokens (YARN clears what it sent); a rolled AMRM key is stored
    /// before AMs are handed tokens made with it.
    pub(super) fn roll_keys(&mut self, now: Millis) {
        if let Some(r) = self.keys.amrm.tick(now, &mut self.keygen) {
            tracing::info!("{} the AMRM token master key", verb(r));
            let (current, next) = (self.keys.amrm.current().clone(), self.keys.amrm.next().cloned());
            if let Err(e) = self.store.set_amrm_keys(&current, next.as_ref()) {
                tracing::error!("cannot store the AMRM token master keys: {e}");
            }
        }
        if let Some(r) = self.keys.container.tick(now, &mut self.keygen) {
            tracing::info!("{} the container token master key", verb(r));
        }
        if let Some(r) = self.keys.nm.tick(now, &mut self.keygen) {
            tracing::info!("{} the NM token master key", verb(r));
            if r == Roll::Activated {
                for a in self.apps.values_mut().filter_map(|a| a.attempt_mut()) {
                    a.nm_tokens_sent.clear();
                }
            }
        }
    }
}

fn verb(r: Roll) -> &'static str {
    match r {
        Roll::Made => "Rolling",
        Roll::Activated => "Activating the next",
    }
}
