//! A random queue tree, shared by both schedulers' configurations.

use super::{between, chance, pick};
use crate::load::rng::Rng;

/// At most this many queues besides root: single letters name them, and a larger tree only
/// makes the file longer without reaching new corners.
const MAX_QUEUES: usize = 20;

#[derive(Debug, Clone)]
pub(super) struct Queue {
    /// The last path component.
    pub name: String,
    /// The full path, `root.a.b`.
    pub path: String,
    /// Indices of the children in `Tree::queues`; empty for a leaf.
    pub children: Vec<usize>,
}

impl Queue {
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// The path without `root.`, as clients often write it.
    pub fn short_path(&self) -> &str {
        self.path.strip_prefix("root.").unwrap_or(&self.path)
    }
}

/// Queues in pre-order; index 0 is root.
#[derive(Debug, Clone)]
pub(super) struct Tree {
    pub queues: Vec<Queue>,
}

impl Tree {
    /// Root with 2–4 children; a child at depth 1 or 2 is a parent of 2–4 more with falling
    /// probability, so the deepest leaves sit at depth 3. Names are letters, unique over the
    /// whole tree so that a leaf's short name is never ambiguous (the Capacity Scheduler
    /// rejects an ambiguous one). `first` renames the first child of root (e.g. `default`).
    pub fn random(rng: &mut Rng, first: Option<&str>) -> Self {
        let mut tree = Tree { queues: vec![Queue { name: "root".into(), path: "root".into(), children: vec![] }] };
        let mut letters = (b'a'..=b'z').map(|c| (c as char).to_string());
        tree.grow(rng, 0, 1, &mut letters);
        if let (Some(first), Some(&i)) = (first, tree.queues[0].children.first()) {
            if tree.queues[i].is_leaf() {
                tree.queues[i].name = first.to_string();
                tree.queues[i].path = format!("root.{first}");
            }
        }
        tree
    }

    fn grow(&mut self, rng: &mut Rng, parent: usize, depth: usize, letters: &mut impl Iterator<Item = String>) {
        let count = between(rng, 2, 4) as usize;
        for _ in 0..count {
            if self.queues.len() > MAX_QUEUES {
                break;
            }
            let name = letters.next().expect("fewer queues than letters");
            let path = format!("{}.{name}", self.queues[parent].path);
            let index = self.queues.len();
            self.queues.push(Queue { name, path, children: vec![] });
            self.queues[parent].children.push(index);
            let parent_chance = match depth {
                1 => 0.4,
                2 => 0.25,
                _ => 0.0,
            };
            if chance(rng, parent_chance) && self.queues.len() + 2 <= MAX_QUEUES {
                self.grow(rng, index, depth + 1, letters);
            }
        }
    }

    /// The leaves reachable from root, in pre-order.
    pub fn leaves(&self) -> Vec<&Queue> {
        self.leaf_indices().into_iter().map(|i| &self.queues[i]).collect()
    }

    /// The indices of the leaves reachable from root, in pre-order.
    pub fn leaf_indices(&self) -> Vec<usize> {
        self.reachable().into_iter().filter(|&i| self.queues[i].is_leaf()).collect()
    }

    /// Whether queue `i` is `ancestor` or beneath it.
    pub fn is_within(&self, i: usize, ancestor: usize) -> bool {
        let (path, top) = (&self.queues[i].path, &self.queues[ancestor].path);
        path == top || path.starts_with(&format!("{top}."))
    }

    /// The parents reachable from root, root excluded.
    pub fn inner_parents(&self) -> Vec<&Queue> {
        self.reachable().into_iter().skip(1).map(|i| &self.queues[i]).filter(|q| !q.is_leaf()).collect()
    }

    /// The path of a parent below root drawn at random, or `root` when there is none (a
    /// submission or move target that is not a leaf).
    pub fn pick_parent(&self, rng: &mut Rng) -> String {
        let parents = self.inner_parents();
        if parents.is_empty() {
            "root".to_string()
        } else {
            pick(rng, &parents).path.clone()
        }
    }

    /// Add a leaf under root with the next unused letter (a reload that grows the tree).
    pub fn add_root_leaf(&mut self) {
        let used: Vec<&str> = self.queues.iter().map(|q| q.name.as_str()).collect();
        let Some(name) = (b'a'..=b'z').map(|c| (c as char).to_string()).find(|n| !used.contains(&n.as_str())) else {
            return;
        };
        let index = self.queues.len();
        self.queues.push(Queue { path: format!("root.{name}"), name, children: vec![] });
        self.queues[0].children.push(index);
    }

    /// Remove root's last child when it is a leaf and root keeps two or more.
    pub fn remove_root_leaf(&mut self) {
        let Some(&last) = self.queues[0].children.last() else { return };
        if self.queues[0].children.len() > 2 && self.queues[last].is_leaf() {
            self.queues[0].children.pop();
            // Keep indices stable: the queue stays in the vector, unreachable from root.
        }
    }

    /// Walk the queues reachable from root in pre-order (skips removed ones).
    pub fn reachable(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![0];
        while let Some(i) = stack.pop() {
            out.push(i);
            stack.extend(self.queues[i].children.iter().rev());
        }
        out
    }
}
