//! `java.util.PriorityQueue`'s binary heap, step for step, for the places where YARN's order
//! comes out of one whose comparator has ties or is not an order at all (the Fair Scheduler's
//! starved applications, its merge of waiting applications by start time). There the element
//! served first depends on how the heap happened to sift, which no sort reproduces.

use std::cmp::Ordering;

/// The heap array, as Java lays it out.
#[derive(Debug, Clone, Default)]
pub(crate) struct JavaHeap<T> {
    heap: Vec<T>,
}

impl<T: Copy + PartialEq> JavaHeap<T> {
    pub(crate) fn peek(&self) -> Option<T> {
        self.heap.first().copied()
    }

    pub(crate) fn contains(&self, x: &T) -> bool {
        self.heap.contains(x)
    }

    /// `offer`: `siftUp` from the end, climbing while `x` compares below its parent.
    pub(crate) fn offer(&mut self, x: T, cmp: impl Fn(&T, &T) -> Ordering) {
        let mut k = self.heap.len();
        self.heap.push(x);
        while k > 0 {
            let parent = (k - 1) / 2;
            if cmp(&x, &self.heap[parent]) != Ordering::Less {
                break;
            }
            self.heap[k] = self.heap[parent];
            k = parent;
        }
        self.heap[k] = x;
    }

    /// `poll`: the head; the last element sifts down from the root.
    pub(crate) fn poll(&mut self, cmp: impl Fn(&T, &T) -> Ordering) -> Option<T> {
        let head = self.peek()?;
        let x = self.heap.pop().expect("a heap with a head is not empty");
        let n = self.heap.len();
        if n > 0 {
            let mut k = 0;
            while k < n / 2 {
                let mut child = 2 * k + 1;
                let right = child + 1;
                if right < n && cmp(&self.heap[child], &self.heap[right]) == Ordering::Greater {
                    child = right;
                }
                if cmp(&x, &self.heap[child]) != Ordering::Greater {
                    break;
                }
                self.heap[k] = self.heap[child];
                k = child;
            }
            self.heap[k] = x;
        }
        Some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ties come out in the order Java's heap gives them: for keys (time, label) compared by
    /// time only, Java 17's PriorityQueue printed this order for these offers.
    #[test]
    fn ties_follow_javas_heap() {
        let items = [(5, 'a'), (3, 'b'), (5, 'c'), (3, 'd'), (1, 'e'), (5, 'f'), (3, 'g')];
        let cmp = |x: &(i32, char), y: &(i32, char)| x.0.cmp(&y.0);
        let mut heap = JavaHeap::default();
        for item in items {
            heap.offer(item, cmp);
        }
        let mut out = String::new();
        while let Some((_, label)) = heap.poll(cmp) {
            out.push(label);
        }
        assert_eq!(out, "ebdgacf");
    }
}
