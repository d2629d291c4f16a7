//! Hadoop access control lists: `"user1,user2 group1,group2"`, `*` for everyone, `" "` for nobody.

/// An access control list as Hadoop's `AccessControlList` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Acl {
    pub all: bool,
    pub users: Vec<String>,
    pub groups: Vec<String>,
}

fn names(part: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in part.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

impl Acl {
    pub fn everyone() -> Self {
        Self { all: true, users: Vec::new(), groups: Vec::new() }
    }

    pub fn nobody() -> Self {
        Self::default()
    }

    pub fn parse(text: &str) -> Self {
        if text.trim() == "*" {
            return Self::everyone();
        }
        let (users, groups) = text.split_once(' ').unwrap_or((text, ""));
        Self { all: false, users: names(users), groups: names(groups) }
    }

    pub fn allows(&self, user: &str, groups: &[String]) -> bool {
        self.all || self.users.iter().any(|u| u == user) || self.groups.iter().any(|g| groups.contains(g))
    }
}

impl std::fmt::Display for Acl {
    /// Hadoop's `getAclString()`: `*`, or users and groups separated by one space.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.all {
            f.write_str("*")
        } else {
            write!(f, "{} {}", self.users.join(","), self.groups.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_render() {
        assert!(Acl::parse(" * ").all);
        let nobody = Acl::parse(" ");
        assert!(!nobody.allows("alice", &[]));
        assert_eq!(nobody.to_string(), " ");
        let acl = Acl::parse("alice,bob admins");
        assert!(acl.allows("bob", &[]));
        assert!(acl.allows("carol", &["admins".to_string()]));
        assert!(!acl.allows("carol", &["users".to_string()]));
        assert_eq!(acl.to_string(), "alice,bob admins");
    }
}
