//! The RM's master keys, one per purpose, each rolled as YARN rolls it:
//!
//! - AMRM tokens (`yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs`): a new
//!   key signs new AMRM tokens at once and AMs are handed tokens made with it; it becomes the
//!   only key an AM expiry and a half later. Stored, so AMs keep working across a restart.
//! - container tokens and NM tokens (`yarn.resourcemanager.container-tokens…` and
//!   `…nm-tokens.master-key-rolling-interval-secs`): a new key is sent to every NodeManager
//!   first and signs tokens only an NM expiry and a half later. Not stored, as in YARN: a
//!   restarted RM makes new ones and NodeManagers keep the one before.
//!
//! The web's cookie secret is the web layer's (`http::auth`). Nothing here reads a clock or
//! the system's randomness: `now` and a [`KeyGen`] are given.

use fairloom_model::Millis;
use fairloom_protocol::token::{MasterKey, KEY_BYTES};

/// Where new secrets come from (the system's randomness, in the service).
pub type KeyGen = Box<dyn FnMut() -> Vec<u8> + Send>;

/// YARN's activation delay: one and a half expiry intervals of whoever must learn the key.
pub fn activation_delay(expiry_ms: i64) -> Millis {
    expiry_ms.saturating_mul(3) / 2
}

/// What a [`RollingKey::tick`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roll {
    /// A next key was made.
    Made,
    /// The next key became the current one.
    Activated,
}

/// A master key with its successor while it rolls.
pub struct RollingKey {
    current: MasterKey,
    next: Option<MasterKey>,
    /// When the next key becomes current.
    activate_at: Millis,
    /// When the next key is made.
    roll_at: Millis,
    interval: Millis,
    delay: Millis,
}

/// YARN starts each key series at a random id and counts up.
fn new_key(after: Option<i32>, keygen: &mut KeyGen) -> MasterKey {
    let id = after.map_or_else(
        || {
            let mut b = keygen();
            b.resize(4, 0);
            i32::from_le_bytes([b[0], b[1], b[2], b[3]]) & i32::MAX
        },
        |id| id.wrapping_add(1),
    );
    let mut secret = keygen();
    secret.resize(KEY_BYTES, 0);
    MasterKey::new(id, secret)
}

impl RollingKey {
    /// A fresh key, rolled every `interval` ms with `delay` ms between making the next key
    /// and using it.
    pub fn new(interval: Millis, delay: Millis, keygen: &mut KeyGen, now: Millis) -> Self {
        Self::restore(new_key(None, keygen), None, interval, delay, now)
    }

    /// Keys read back from the store: a next key there is activated a whole delay from now.
    pub fn restore(current: MasterKey, next: Option<MasterKey>, interval: Millis, delay: Millis, now: Millis) -> Self {
        Self { current, next, activate_at: now + delay, roll_at: now + interval, interval, delay }
    }

    pub fn current(&self) -> &MasterKey {
        &self.current
    }

    pub fn next(&self) -> Option<&MasterKey> {
        self.next.as_ref()
    }

    /// The key with `id`, if it is the current or the next one: tokens of older keys are
    /// refused.
    pub fn find(&self, id: i32) -> Option<&MasterKey> {
        std::iter::once(&self.current).chain(&self.next).find(|k| k.key_id == id)
    }

    /// Make the next key when the interval is up, activate it when its delay is.
    pub fn tick(&mut self, now: Millis, keygen: &mut KeyGen) -> Option<Roll> {
        if let Some(next) = self.next.take_if(|_| now >= self.activate_at) {
            self.current = next;
            return Some(Roll::Activated);
        }
        if self.next.is_none() && now >= self.roll_at {
            let after = self.current.key_id;
            self.next = Some(new_key(Some(after), keygen));
            self.activate_at = now + self.delay;
            self.roll_at = now + self.interval;
            return Some(Roll::Made);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counting() -> KeyGen {
        let mut n = 0u8;
        Box::new(move || {
            n = n.wrapping_add(1);
            vec![n; KEY_BYTES]
        })
    }

    #[test]
    fn a_key_rolls_then_activates_and_old_tokens_lapse() {
        let mut g = counting();
        let mut k = RollingKey::new(10_000, 3_000, &mut g, 0);
        let first = k.current().clone();
        assert_eq!(k.tick(9_999, &mut g), None);
        assert_eq!(k.tick(10_000, &mut g), Some(Roll::Made));
        let next = k.next().unwrap().clone();
        assert_eq!(next.key_id, first.key_id.wrapping_add(1));
        assert_ne!(next.bytes(), first.bytes());
        assert!(k.find(first.key_id).is_some() && k.find(next.key_id).is_some(), "both work while it rolls");
        assert_eq!(k.tick(12_999, &mut g), None);
        assert_eq!(k.tick(13_000, &mut g), Some(Roll::Activated));
        assert_eq!(k.current(), &next);
        assert!(k.next().is_none());
        assert!(k.find(first.key_id).is_none(), "the old key is gone once the new one is active");
        assert_eq!(k.tick(19_999, &mut g), None);
        assert_eq!(k.tick(20_000, &mut g), Some(Roll::Made));
    }

    #[test]
    fn activation_waits_an_expiry_and_a_half() {
        assert_eq!(activation_delay(600_000), 900_000);
    }
}
