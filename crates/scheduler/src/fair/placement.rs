//! Queue placement: the rules of `<queuePlacementPolicy>` evaluated for one submission.

use fairloom_config::{RuleConfig, RuleKind};

use super::tree::valid_queue_path;
use super::FairScheduler;

/// What one rule decides.
enum Outcome {
    Place(String),
    Pass,
    Reject(String),
}

/// YARN's cleaning of a user or group name for use as a queue name.
pub fn clean_name(name: &str) -> String {
    name.trim().replace('.', "_dot_")
}

pub(crate) fn with_root(name: &str) -> String {
    if name == "root" || name.starts_with("root.") {
        name.to_string()
    } else {
        format!("root.{name}")
    }
}

impl FairScheduler {
    /// The queue a submission goes to, or why it is rejected.
    pub(crate) fn place(&self, requested: &str, user: &str) -> Result<String, String> {
        let groups = self.groups_of(user);
        for rule in &self.placement {
            match self.apply_rule(rule, requested, user, &groups) {
                Outcome::Place(q) => return Ok(q),
                Outcome::Pass => continue,
                Outcome::Reject(why) => return Err(why),
            }
        }
        Err(format!("no placement rule placed the application (requested queue '{requested}', user '{user}')"))
    }

    fn exists(&self, name: &str) -> bool {
        self.queue_id(name).is_some()
    }

    fn apply_rule(&self, rule: &RuleConfig, requested: &str, user: &str, groups: &[String]) -> Outcome {
        let create_or_exists = |q: String| {
            if rule.create || self.exists(&q) {
                Outcome::Place(q)
            } else {
                Outcome::Pass
            }
        };
        match rule.kind {
            RuleKind::Specified => {
                if requested == "default" || requested == "root.default" {
                    return Outcome::Pass;
                }
                let q = with_root(requested);
                if !valid_queue_path(&q) {
                    return Outcome::Reject(format!("specified queue name '{requested}' is not valid"));
                }
                create_or_exists(q)
            }
            RuleKind::User => create_or_exists(with_root(&clean_name(user))),
            RuleKind::PrimaryGroup => match groups.first() {
                Some(g) => create_or_exists(with_root(&clean_name(g))),
                None => Outcome::Reject(format!("user '{user}' has no groups for the primaryGroup rule")),
            },
            RuleKind::SecondaryGroupExistingQueue => groups
                .iter()
                .skip(1)
                .map(|g| with_root(&clean_name(g)))
                .find(|q| self.exists(q))
                .map_or(Outcome::Pass, Outcome::Place),
            RuleKind::NestedUserQueue => {
                let Some(nested) = rule.nested.as_deref() else {
                    return Outcome::Pass;
                };
                let parent = match self.apply_rule(nested, requested, user, groups) {
                    Outcome::Place(p) => p,
                    other => return other,
                };
                if self.queue_id(&parent).is_some_and(|p| self.q(p).leaf) {
                    // A user queue cannot go under a leaf: the rule fails (rejects if it was last).
                    return Outcome::Pass;
                }
                create_or_exists(format!("{parent}.{}", clean_name(user)))
            }
            RuleKind::Default => create_or_exists(rule.queue.clone().unwrap_or_else(|| "root.default".to_string())),
            RuleKind::Reject => Outcome::Reject("rejected by the placement policy's reject rule".to_string()),
        }
    }

    pub(crate) fn groups_of(&self, user: &str) -> Vec<String> {
        match self.groups.get(user).or_else(|| self.groups.get(user.trim())) {
            Some(g) => g.clone(),
            None => vec![user.trim().to_string()],
        }
    }
}
