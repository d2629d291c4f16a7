//! Who may do what, as YARN decides it when `yarn.acl.enable` is true: the queues' submit
//! and administer ACLs (inherited from every ancestor), `yarn.admin.acl`, the application's
//! owner and its own `MODIFY_APP` and `VIEW_APP` ACLs. With ACLs off, every authenticated
//! user may do everything, as in YARN.

use std::collections::{BTreeMap, HashMap};

use fairloom_config::properties::Properties;
use fairloom_config::Acl;
use fairloom_model::ApplicationId;
use fairloom_scheduler::{QueueAcl, Scheduler};

use crate::core::RmApp;
use crate::error::RmError;

pub const ACL_ENABLE: &str = "yarn.acl.enable";
/// Who a reader that did not name itself is: Hadoop's web servers run every request through
/// `StaticUserWebFilter` (core-default's `hadoop.http.filter.initializers`), which names an
/// anonymous caller `hadoop.http.staticuser.user`, by default `dr.who`.
pub const ANONYMOUS: &str = "dr.who";
pub const ADMIN_ACL: &str = "yarn.admin.acl";
/// Hadoop's static user → groups mapping (`user1=g1,g2;user2=;`); other users have one
/// group named after themselves.
pub const GROUP_MAPPING: &str = "hadoop.user.group.static.mapping.overrides";

/// The change a caller asks for, in the words of the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Kill,
    Move,
    Priority,
}

impl Change {
    fn verb(self) -> &'static str {
        match self {
            Self::Kill => "kill",
            Self::Move => "move",
            Self::Priority => "change the priority of",
        }
    }
}

#[derive(Debug, Clone)]
pub struct AccessPolicy {
    pub enabled: bool,
    pub admin: Acl,
    pub groups: BTreeMap<String, Vec<String>>,
}

impl Default for AccessPolicy {
    fn default() -> Self {
        Self { enabled: false, admin: Acl::everyone(), groups: BTreeMap::new() }
    }
}

impl AccessPolicy {
    /// From yarn-site; YARN's defaults are ACLs off and `yarn.admin.acl` = `*`.
    pub fn from_site(site: &Properties) -> Result<Self, String> {
        let enabled = match site.get(ACL_ENABLE).map(|v| v.trim().to_ascii_lowercase()) {
            None => false,
            Some(v) if v == "true" => true,
            Some(v) if v == "false" => false,
            Some(v) => return Err(format!("{ACL_ENABLE}: '{v}' is not true or false")),
        };
        let admin = site.get(ADMIN_ACL).map(|v| Acl::parse(v)).unwrap_or_else(Acl::everyone);
        let groups = site.get(GROUP_MAPPING).map(|v| parse_groups(v)).transpose()?.unwrap_or_default();
        Ok(Self { enabled, admin, groups })
    }

    pub fn groups_of(&self, user: &str) -> Vec<String> {
        self.groups.get(user).cloned().unwrap_or_else(|| vec![user.to_string()])
    }

    pub fn is_admin(&self, user: &str) -> bool {
        self.admin.allows(user, &self.groups_of(user))
    }

    /// YARN's submit check: the queue's (or an ancestor's) submit or administer ACL.
    pub fn may_submit(&self, sched: &dyn Scheduler, queue: &str, user: &str) -> bool {
        !self.enabled || sched.queue_access(queue, user, QueueAcl::SubmitApplications) != Some(false)
    }

    /// YARN's MODIFY_APP check: the admin, the owner, the application's own ACL, or an
    /// administrator of its queue.
    pub fn check_change(
        &self,
        sched: &dyn Scheduler,
        change: Change,
        app: &RmApp,
        caller: &str,
    ) -> Result<(), RmError> {
        if self.holds(sched, app, caller, "MODIFY_APP") {
            return Ok(());
        }
        Err(RmError::forbidden(format!(
            "Unauthorized attempt to {} application {} by remote user {caller}: only its owner {}, an administrator of queue {}, a user in its MODIFY_APP ACL or a cluster administrator (yarn.admin.acl) may",
            change.verb(),
            app.id,
            app.user,
            app.queue
        )))
    }

    /// The applications of `apps` that `caller` fails YARN's VIEW_APP check for
    /// (ApplicationACLsManager, then the queue's administer ACL): it still sees them, without
    /// their times, AM address and resources. Its groups are looked up once, and each
    /// queue's answer once, for the whole list.
    pub fn hidden<'a>(
        &self,
        sched: &dyn Scheduler,
        apps: impl Iterator<Item = &'a RmApp>,
        caller: &str,
    ) -> Vec<ApplicationId> {
        if !self.enabled {
            return Vec::new();
        }
        let groups = self.groups_of(caller);
        if self.admin.allows(caller, &groups) {
            return Vec::new();
        }
        let mut administers: HashMap<&str, bool> = HashMap::new();
        apps.filter(|app| {
            let queue_admin = *administers
                .entry(app.queue.as_str())
                .or_insert_with(|| sched.queue_access(&app.queue, caller, QueueAcl::AdministerQueue) == Some(true));
            !(queue_admin || self.owns_or_listed(app, caller, &groups, "VIEW_APP"))
        })
        .map(|app| app.id)
        .collect()
    }

    /// The owner, the cluster admin, the application's own `kind` ACL or an administrator
    /// of its queue; everyone with ACLs off.
    fn holds(&self, sched: &dyn Scheduler, app: &RmApp, caller: &str, kind: &str) -> bool {
        if !self.enabled {
            return true;
        }
        let groups = self.groups_of(caller);
        self.owns_or_listed(app, caller, &groups, kind)
            || self.admin.allows(caller, &groups)
            || sched.queue_access(&app.queue, caller, QueueAcl::AdministerQueue) == Some(true)
    }

    /// The owner, or a user the application's own `kind` ACL lists.
    fn owns_or_listed(&self, app: &RmApp, caller: &str, groups: &[String], kind: &str) -> bool {
        caller == app.user || app.sub.app_acl(kind).is_some_and(|a| Acl::parse(a).allows(caller, groups))
    }
}

fn parse_groups(text: &str) -> Result<BTreeMap<String, Vec<String>>, String> {
    let mut out = BTreeMap::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (user, groups) =
            part.split_once('=').ok_or_else(|| format!("{GROUP_MAPPING}: '{part}' is not user=group1,group2"))?;
        let groups = groups.split(',').map(str::trim).filter(|g| !g.is_empty()).map(String::from).collect();
        out.insert(user.trim().to_string(), groups);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_keys_and_yarn_defaults() {
        let p = AccessPolicy::from_site(&Properties::new()).unwrap();
        assert!(!p.enabled);
        assert!(p.is_admin("anyone"), "yarn.admin.acl defaults to *");
        let mut site = Properties::new();
        site.insert(ACL_ENABLE.into(), "true".into());
        site.insert(ADMIN_ACL.into(), "root ops".into());
        site.insert(GROUP_MAPPING.into(), "carol=ops,dev; dave=".into());
        let p = AccessPolicy::from_site(&site).unwrap();
        assert!(p.enabled);
        assert!(p.is_admin("root") && p.is_admin("carol"));
        assert!(!p.is_admin("dave"), "dave is mapped to no group");
        assert!(p.is_admin("ops"), "an unmapped user's one group is named after the user");
        assert_eq!(p.groups_of("dave"), Vec::<String>::new());
        assert_eq!(p.groups_of("erin"), vec!["erin".to_string()]);
        site.insert(ACL_ENABLE.into(), "yes".into());
        assert!(AccessPolicy::from_site(&site).unwrap_err().contains(ACL_ENABLE));
        site.insert(ACL_ENABLE.into(), "true".into());
        site.insert(GROUP_MAPPING.into(), "nogroups".into());
        assert!(AccessPolicy::from_site(&site).unwrap_err().contains("user=group1"));
    }
}
