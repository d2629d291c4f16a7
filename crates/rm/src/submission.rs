//! The body of `POST /ws/v1/cluster/apps` (YARN's ApplicationSubmissionContextInfo), in the
//! REST API's own spelling, and what the RM keeps of it.

use serde::{Deserialize, Serialize};

use fairloom_protocol::{LaunchContext, LocalResource, Res};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry<V> {
    pub key: String,
    pub value: V,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "V: Deserialize<'de>"))]
pub struct Entries<V> {
    #[serde(default = "Vec::new", deserialize_with = "one_or_many")]
    pub entry: Vec<Entry<V>>,
}

/// XML-derived JSON writes a one-element list as the element itself; accept both.
fn one_or_many<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany<T> {
        Many(Vec<T>),
        One(T),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::Many(v) => v,
        OneOrMany::One(t) => vec![t],
    })
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LocalResourceInfo {
    pub resource: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub visibility: Option<String>,
    #[serde(default)]
    pub size: Option<i64>,
    #[serde(default)]
    pub timestamp: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Commands {
    #[serde(default)]
    pub command: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AmContainerSpec {
    #[serde(rename = "local-resources", default)]
    pub local_resources: Option<Entries<LocalResourceInfo>>,
    #[serde(default)]
    pub environment: Option<Entries<String>>,
    #[serde(default)]
    pub commands: Option<Commands>,
    /// `VIEW_APP` / `MODIFY_APP`: who else may see or change the application.
    #[serde(rename = "application-acls", default, skip_serializing_if = "Option::is_none")]
    pub application_acls: Option<Entries<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tags {
    #[serde(default = "Vec::new", deserialize_with = "one_or_many")]
    pub tag: Vec<String>,
}

/// YARN's submission body. Fields fairloom does not act on are still accepted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Submission {
    pub application_id: String,
    #[serde(default)]
    pub application_name: Option<String>,
    #[serde(default)]
    pub queue: Option<String>,
    #[serde(default)]
    pub priority: Option<i32>,
    #[serde(rename = "am-container-spec", default)]
    pub am_container_spec: AmContainerSpec,
    #[serde(rename = "unmanaged-AM", default)]
    pub unmanaged_am: Option<bool>,
    #[serde(default)]
    pub max_app_attempts: Option<u32>,
    #[serde(default)]
    pub resource: Option<ResourceBody>,
    #[serde(default)]
    pub application_type: Option<String>,
    #[serde(default)]
    pub keep_containers_across_application_attempts: Option<bool>,
    #[serde(default)]
    pub application_tags: Option<Tags>,
}

/// `resource` in the body: `{"memory": MB, "vCores": N}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceBody {
    #[serde(default)]
    pub memory: Option<i64>,
    #[serde(rename = "vCores", default)]
    pub vcores: Option<i64>,
}

/// YARN's bounds on tags (`YarnConfiguration.APPLICATION_MAX_TAGS`, `…_MAX_TAG_LENGTH`) and
/// the type's length, past which YARN's ClientRMService cuts it.
pub const MAX_TAGS: usize = 10;
pub const MAX_TAG_LENGTH: usize = 100;
pub const APPLICATION_TYPE_LENGTH: usize = 20;
/// fairloom's own bounds, where YARN has none but every name is kept for the application's
/// life and shown on every listing: generous for names built from a query's text.
pub const MAX_NAME_LENGTH: usize = 4096;
pub const MAX_QUEUE_LENGTH: usize = 1024;

impl Submission {
    /// What YARN does to a submission before it is accepted: the type cut to 20 characters,
    /// tags checked (YARN's messages); and fairloom's bounds on the name and queue.
    pub fn normalize(&mut self) -> Result<(), String> {
        if let Some(t) = &mut self.application_type {
            if let Some((cut, _)) = t.char_indices().nth(APPLICATION_TYPE_LENGTH) {
                t.truncate(cut);
            }
        }
        let tags = self.application_tags.as_ref().map_or(&[][..], |t| &t.tag[..]);
        if tags.len() > MAX_TAGS {
            return Err(format!("Too many applicationTags, a maximum of only {MAX_TAGS} are allowed!"));
        }
        for tag in tags {
            if tag.chars().count() > MAX_TAG_LENGTH {
                return Err(format!("Tag {tag} is too long, maximum allowed length of a tag is {MAX_TAG_LENGTH}"));
            }
            if !tag.chars().all(|c| c.is_ascii() && !c.is_ascii_control()) {
                return Err(format!("A tag can only have ASCII characters! Invalid tag - {}", tag.escape_debug()));
            }
        }
        // A queue name becomes a queue for good (and a label on /metrics, a line in the
        // logs): no control characters in it.
        let breaks_lines = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
        if let Some(q) = self.queue.as_deref().filter(|q| q.chars().any(breaks_lines)) {
            return Err(format!("queue '{}' contains a control character", q.escape_debug()));
        }
        // Nor in an application's name, shown on every listing and written in the logs (a
        // line break there could forge a log line).
        if let Some(n) = self.application_name.as_deref().filter(|n| n.chars().any(breaks_lines)) {
            return Err(format!("application-name '{}' contains a control character", n.escape_debug()));
        }
        for (what, value, limit) in [
            ("application-name", self.application_name.as_deref(), MAX_NAME_LENGTH),
            ("queue", self.queue.as_deref(), MAX_QUEUE_LENGTH),
        ] {
            let n = value.map_or(0, |v| v.chars().count());
            if n > limit {
                return Err(format!("{what} is {n} characters long; the limit is {limit}"));
            }
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        self.application_name.as_deref().unwrap_or("N/A")
    }

    pub fn app_type(&self) -> &str {
        self.application_type.as_deref().unwrap_or("YARN")
    }

    pub fn tags(&self) -> Vec<String> {
        self.application_tags.as_ref().map(|t| t.tag.clone()).unwrap_or_default()
    }

    /// The AM container's size; YARN's default is 1024 MB and 1 vcore.
    pub fn am_resource(&self) -> Res {
        let r = self.resource.unwrap_or_default();
        Res::new(r.memory.unwrap_or(1024), r.vcores.unwrap_or(1))
    }

    pub fn unmanaged(&self) -> bool {
        self.unmanaged_am.unwrap_or(false)
    }

    /// The AM container's launch context.
    /// The application's own ACL of `kind` (`VIEW_APP`, `MODIFY_APP`), when it gave one.
    pub fn app_acl(&self, kind: &str) -> Option<&str> {
        let acls = self.am_container_spec.application_acls.as_ref()?;
        acls.entry.iter().find(|e| e.key.eq_ignore_ascii_case(kind)).map(|e| e.value.as_str())
    }

    pub fn launch_context(&self) -> LaunchContext {
        let spec = &self.am_container_spec;
        LaunchContext {
            commands: spec.commands.iter().map(|c| c.command.clone()).filter(|c| !c.is_empty()).collect(),
            environment: spec
                .environment
                .iter()
                .flat_map(|e| e.entry.iter())
                .map(|e| (e.key.clone(), e.value.clone()))
                .collect(),
            local_resources: spec
                .local_resources
                .iter()
                .flat_map(|e| e.entry.iter())
                .map(|e| LocalResource {
                    key: e.key.clone(),
                    resource: e.value.resource.clone(),
                    kind: e.value.kind.clone().unwrap_or_else(|| "FILE".to_string()),
                    visibility: e.value.visibility.clone().unwrap_or_else(|| "APPLICATION".to_string()),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_yarns_documented_body() {
        let body = r#"{
          "application-id":"application_1404203615263_0001",
          "application-name":"test",
          "am-container-spec":{
            "local-resources":{"entry":[{"key":"AppMaster.jar","value":{"resource":"file:///tmp/a.jar","type":"FILE","visibility":"APPLICATION","size":43004,"timestamp":1405452071209}}]},
            "commands":{"command":"{{JAVA_HOME}}/bin/java -Xmx10m Main 1><LOG_DIR>/AppMaster.stdout"},
            "environment":{"entry":[{"key":"DISTRIBUTEDSHELLSCRIPTTIMESTAMP","value":"1405459400754"}]}
          },
          "unmanaged-AM":false,
          "max-app-attempts":2,
          "resource":{"memory":1024,"vCores":1},
          "application-type":"YARN",
          "keep-containers-across-application-attempts":false,
          "application-tags":{"tag":["a","b"]}
        }"#;
        let s: Submission = serde_json::from_str(body).unwrap();
        assert_eq!(s.name(), "test");
        assert_eq!(s.am_resource(), Res::new(1024, 1));
        assert_eq!(s.tags(), vec!["a", "b"]);
        let l = s.launch_context();
        assert_eq!(l.local_resources[0].key, "AppMaster.jar");
        assert_eq!(l.environment[0].0, "DISTRIBUTEDSHELLSCRIPTTIMESTAMP");
        assert!(l.commands[0].contains("<LOG_DIR>"));
    }

    #[test]
    fn a_single_entry_may_be_an_object() {
        let body = r#"{"application-id":"application_1_0001","am-container-spec":{"environment":{"entry":{"key":"A","value":"1"}}},"application-tags":{"tag":"x"}}"#;
        let s: Submission = serde_json::from_str(body).unwrap();
        assert_eq!(s.launch_context().environment, vec![("A".to_string(), "1".to_string())]);
        assert_eq!(s.tags(), vec!["x"]);
    }

    #[test]
    fn yarn_bounds_on_type_and_tags_and_ours_on_names() {
        let mut s = Submission { application_type: Some("SPARK-ON-A-VERY-LONG-TYPE".into()), ..Default::default() };
        s.normalize().unwrap();
        assert_eq!(s.app_type(), "SPARK-ON-A-VERY-LONG", "cut to 20 as ClientRMService does");
        let tagged =
            |tags: Vec<String>| Submission { application_tags: Some(Tags { tag: tags }), ..Default::default() };
        assert!(tagged((0..10).map(|i| format!("t{i}")).collect()).normalize().is_ok());
        let e = tagged((0..11).map(|i| format!("t{i}")).collect()).normalize().unwrap_err();
        assert!(e.contains("Too many applicationTags, a maximum of only 10"), "{e}");
        let e = tagged(vec!["x".repeat(101)]).normalize().unwrap_err();
        assert!(e.contains("is too long, maximum allowed length of a tag is 100"), "{e}");
        let e = tagged(vec!["caf\u{e9}".into()]).normalize().unwrap_err();
        assert!(e.contains("ASCII characters"), "{e}");
        let e = tagged(vec!["a\nb".into()]).normalize().unwrap_err();
        assert!(e.contains("a\\nb"), "{e}");
        let mut named = Submission { application_name: Some("n".repeat(MAX_NAME_LENGTH)), ..Default::default() };
        assert!(named.normalize().is_ok());
        named.application_name = Some("n".repeat(MAX_NAME_LENGTH + 1));
        let e = named.normalize().unwrap_err();
        assert!(e.contains("application-name is 4097 characters long; the limit is 4096"), "{e}");
        let mut queued = Submission { queue: Some("q".repeat(MAX_QUEUE_LENGTH + 1)), ..Default::default() };
        assert!(queued.normalize().unwrap_err().contains("queue is 1025 characters"));
        queued.queue = Some("root.a\rb".into());
        assert!(queued.normalize().unwrap_err().contains("queue 'root.a\\rb' contains a control character"));
        named.application_name = Some("report\n2026-11-27 INFO forged".into());
        let e = named.normalize().unwrap_err();
        assert!(e.contains("application-name 'report\\n2026-11-27 INFO forged' contains a control character"), "{e}");
        named.application_name = Some("caf\u{e9} report: \"Q4\"".into());
        assert!(named.normalize().is_ok(), "any printable text is a name");
    }
}
