//! Allocated containers matched to pending requests: by host, then rack, then any host
//! (YarnAllocator's `handleAllocatedContainers`); what matches nothing is released.

use std::collections::BTreeMap;

use crate::plan::{PendingRequest, DEFAULT_RACK};

/// How a container was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchLevel {
    Host,
    Rack,
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Matching {
    /// (container index, pending request index, level)
    pub matched: Vec<(usize, usize, MatchLevel)>,
    /// Containers nobody asked for: release them.
    pub surplus: Vec<usize>,
}

/// Match containers (given by the host they run on) to pending requests. A request listing
/// hosts is registered at those hosts, at their racks, and at any host; a request with no
/// hosts only at any host. Each request is used once, the earliest first.
pub fn match_containers(
    containers: &[String],
    pending: &[PendingRequest],
    host_to_rack: &BTreeMap<String, String>,
) -> Matching {
    let rack = |h: &str| host_to_rack.get(h).map_or(DEFAULT_RACK, String::as_str);
    // Whether request `p` is registered at the location a container on `host` matches at `level`.
    let accepts = |level: MatchLevel, p: &PendingRequest, host: &str| match level {
        MatchLevel::Host => p.hosts.as_ref().is_some_and(|hs| hs.iter().any(|h| h == host)),
        MatchLevel::Rack => p.hosts.as_ref().is_some_and(|hs| hs.iter().any(|h| rack(h) == rack(host))),
        MatchLevel::Any => true,
    };
    let mut used = vec![false; pending.len()];
    let mut out = Matching::default();
    let mut remaining: Vec<usize> = (0..containers.len()).collect();
    for level in [MatchLevel::Host, MatchLevel::Rack, MatchLevel::Any] {
        let mut next = Vec::new();
        for c in remaining {
            match (0..pending.len()).find(|&i| !used[i] && accepts(level, &pending[i], &containers[c])) {
                Some(i) => {
                    used[i] = true;
                    out.matched.push((c, i, level));
                }
                None => next.push(c),
            }
        }
        remaining = next;
    }
    out.surplus = remaining;
    out
}
