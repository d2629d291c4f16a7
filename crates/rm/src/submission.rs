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

impl Submission {
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
}
