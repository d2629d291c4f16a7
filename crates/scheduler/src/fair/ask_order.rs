//! Where YARN keeps an application's asks, and in which order preemption reads them.
//!
//! YARN's `AppSchedulingInfo` holds one placement allocator per scheduler key (priority) in a
//! `ConcurrentHashMap`, and each allocator its asks by resource name (`*`, racks, hosts) in
//! another. `FSAppAttempt.getStarvedResourceRequests` walks both maps in their iteration order
//! and lets the first ask of a (priority, capability) hide the others at other locality levels
//! (`VisitedResourceRequestTracker`): `*` first hides every rack and host, a rack first hides
//! `*`. So which ask preemption serves, and therefore which node loses containers, follows the
//! maps' order: bucket of the key's hash, then insertion order within a bucket. Here every
//! name and key carries the number of its insertion (`stamp`), given in the order in which YARN
//! applies an `allocate` call: grouped by key and name in `HashMap`s, in those maps' order.

use fairloom_model::{Resource, ANY};

use super::state::RequestEntry;
use super::FairScheduler;
use crate::cluster::hash_order::{
    bucket, concurrent_map_capacity, hash_map_capacity, java_string_hash, request_key_hash,
};
use crate::driver::Ask;
use crate::ids::{AppId, LocationId, NodeId};

/// An application's asks in the order YARN applies one `allocate` call: its asks grouped by
/// priority in a `HashMap` (in that map's order), within a priority by name in another, a name
/// asked twice taking the place of its first ask and the value of its last.
pub(crate) fn batch_order(asks: &[Ask]) -> Vec<usize> {
    let mut keys: Vec<i32> = Vec::new();
    for ask in asks {
        if !keys.contains(&ask.priority) {
            keys.push(ask.priority);
        }
    }
    let mut out = Vec::with_capacity(asks.len());
    for priority in in_hash_map_order(&keys, |&p| request_key_hash(p)) {
        let mut names: Vec<&str> = Vec::new();
        for ask in asks.iter().filter(|a| a.priority == priority) {
            if !names.contains(&ask.resource_name.as_str()) {
                names.push(&ask.resource_name);
            }
        }
        for name in in_hash_map_order(&names, |n| java_string_hash(n)) {
            out.extend((0..asks.len()).filter(|&i| asks[i].priority == priority && asks[i].resource_name == name));
        }
    }
    out
}

/// Distinct keys, in the order a fresh `java.util.HashMap` they were put into in this order
/// iterates them (a resize keeps each bucket's order, so only the final size matters).
fn in_hash_map_order<K: Copy>(keys: &[K], hash: impl Fn(&K) -> i32) -> Vec<K> {
    let capacity = hash_map_capacity(keys.len());
    let mut ranked: Vec<(u32, usize)> = keys.iter().enumerate().map(|(i, k)| (bucket(hash(k), capacity), i)).collect();
    ranked.sort_unstable();
    ranked.into_iter().map(|(_, i)| keys[i]).collect()
}

/// One ask of a starved application as YARN's preemption reads it.
pub(crate) struct HeldAsk {
    pub priority: i32,
    pub capability: Resource,
    pub count: i32,
    pub relax: bool,
    /// `None` for `*`.
    pub location: Option<LocationId>,
}

impl FairScheduler {
    /// The stamp of YARN's placement allocator for `priority`, while YARN holds one (it goes
    /// when its `*` ask is set to nothing, or allocated down to nothing with no other name
    /// left).
    pub(crate) fn held_key_stamp(&self, app: AppId, priority: i32) -> Option<u32> {
        self.request_at(app, priority).filter(|e| e.holds_names()).map(|e| e.key_stamp)
    }

    /// The stamp a name at `priority` already has in YARN's map, if it is there (a `*`
    /// allocated down to nothing has left it).
    pub(crate) fn held_name_stamp(&self, app: AppId, priority: i32, location: Option<LocationId>) -> Option<u32> {
        let e = self.request_at(app, priority)?;
        match location {
            None => e.any.filter(|_| e.any_count() > 0).map(|a| a.stamp),
            Some(l) => e.locations.get(&l).map(|a| a.stamp),
        }
    }

    /// The app's asks at `priority` (one entry per priority, as YARN's scheduler key).
    fn request_at(&self, app: AppId, priority: i32) -> Option<&RequestEntry> {
        let a = &self.apps[app];
        a.request_index(priority).map(|i| &a.requests[i])
    }

    /// `getAllResourceRequests` as YARN iterates it: keys in their map's order, names within
    /// a key in theirs. A name set to 0 by the AM is still there; a `*` allocated to 0 is not.
    pub(crate) fn asks_in_yarn_order(&self, app: AppId) -> Vec<HeldAsk> {
        let a = &self.apps[app];
        // One entry per priority: the keys YARN holds are the entries holding a name.
        let held: Vec<&RequestEntry> = a.requests.iter().filter(|e| e.holds_names()).collect();
        let key_capacity = concurrent_map_capacity(held.len());
        let mut ranked: Vec<(u32, u32, &RequestEntry)> =
            held.into_iter().map(|e| (bucket(request_key_hash(e.priority), key_capacity), e.key_stamp, e)).collect();
        ranked.sort_unstable_by_key(|&(bucket, stamp, e)| (bucket, stamp, e.priority));
        let mut out = Vec::new();
        for (_, _, e) in ranked {
            let priority = e.priority;
            let mut names: Vec<(i32, u32, HeldAsk)> = Vec::new();
            if let Some(any) = e.any.filter(|any| any.count > 0) {
                let held =
                    HeldAsk { priority, capability: e.capability, count: any.count, relax: any.relax, location: None };
                names.push((java_string_hash(ANY), any.stamp, held));
            }
            for (&l, ask) in &e.locations {
                let held = HeldAsk {
                    priority,
                    capability: ask.capability,
                    count: ask.count,
                    relax: ask.relax,
                    location: Some(l),
                };
                names.push((java_string_hash(self.cluster.location_name(l)), ask.stamp, held));
            }
            let capacity = concurrent_map_capacity(names.len());
            names.sort_by_key(|(hash, stamp, _)| (bucket(*hash, capacity), *stamp));
            out.extend(names.into_iter().map(|(_, _, held)| held));
        }
        out
    }
}

/// YARN's `VisitedResourceRequestTracker` for one starved application: per (priority,
/// capability), `*` is seen only if no rack or host was, a rack only if neither `*` nor one
/// of its hosts was, a host only if neither `*` nor its rack was.
#[derive(Default)]
pub(crate) struct VisitedAsks {
    seen: Vec<((i32, Resource), Visited)>,
}

#[derive(Default)]
struct Visited {
    any: bool,
    racks: Vec<LocationId>,
    racks_with_hosts: Vec<LocationId>,
}

/// Where an ask's name points in the cluster now.
pub(crate) enum Place {
    Any,
    Host {
        node: NodeId,
        rack: LocationId,
    },
    Rack {
        rack: LocationId,
        nodes: Vec<NodeId>,
    },
    /// No live node or rack of that name: YARN logs it and skips the ask.
    Nowhere,
}

impl VisitedAsks {
    /// True the first time a locality level of this (priority, capability) is reached.
    pub fn visit(&mut self, priority: i32, capability: Resource, place: &Place) -> bool {
        let key = (priority, capability);
        let at = match self.seen.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                self.seen.push((key, Visited::default()));
                self.seen.len() - 1
            }
        };
        let v = &mut self.seen[at].1;
        match place {
            Place::Nowhere => false,
            Place::Any => {
                if v.racks.is_empty() && v.racks_with_hosts.is_empty() {
                    v.any = true;
                }
                v.any
            }
            Place::Host { rack, .. } => {
                if v.any || v.racks.contains(rack) {
                    return false;
                }
                v.racks_with_hosts.push(*rack);
                true
            }
            Place::Rack { rack, .. } => {
                if v.any || v.racks_with_hosts.contains(rack) {
                    return false;
                }
                v.racks.push(*rack);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(priority: i32, name: &str, n: i32) -> Ask {
        Ask {
            priority,
            resource_name: name.to_string(),
            capability: Resource::new(1024, 1),
            num_containers: n,
            relax_locality: true,
            node_label: None,
        }
    }

    #[test]
    fn an_allocate_call_is_applied_in_hash_map_order() {
        // Java's HashMap iterates "/r2", "h1", "*" put in this order as [h1, *, /r2]: "h1"
        // falls in bucket 9 of 16, "*" in 10, "/r2" in 15. The second "/r2" keeps the first's place.
        let asks = [ask(1, "/r2", 1), ask(1, "h1", 1), ask(1, "*", 2), ask(1, "/r2", 3)];
        assert_eq!(batch_order(&asks), vec![1, 2, 0, 3]);
    }

    #[test]
    fn request_key_hash_is_javas() {
        // SchedulerRequestKey.create(priority 1, allocationRequestId 0).hashCode() in Hadoop 3.4.2.
        assert_eq!(request_key_hash(0), 232_347_939);
        assert_eq!(request_key_hash(1), 232_348_900);
        assert_eq!(request_key_hash(3), 232_350_822);
    }
}
