//! The NodeManager's `/metrics` (YARN's NodeManagerMetrics): containers launched, completed,
//! failed and killed, counted as they happen; running containers and allocated resources,
//! read from the container table when scraped.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use fairloom_protocol::ContainerState;

use crate::container::Table;

#[derive(Debug)]
pub struct NmMetrics {
    registry: Registry,
    pub launched: Counter,
    pub completed: Counter,
    pub failed: Counter,
    pub killed: Counter,
    running: Gauge,
    allocated_mb: Gauge,
    allocated_vcores: Gauge,
}

impl Default for NmMetrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("fairloom_nm");
        let m = Self {
            registry: Registry::default(),
            launched: Counter::default(),
            completed: Counter::default(),
            failed: Counter::default(),
            killed: Counter::default(),
            running: Gauge::default(),
            allocated_mb: Gauge::default(),
            allocated_vcores: Gauge::default(),
        };
        registry.register(
            "containers_launched",
            "Container processes started (ContainersLaunched)",
            m.launched.clone(),
        );
        registry.register(
            "containers_completed",
            "Containers that exited 0 (ContainersCompleted)",
            m.completed.clone(),
        );
        registry.register(
            "containers_failed",
            "Containers that failed to launch or exited non-zero unasked (ContainersFailed)",
            m.failed.clone(),
        );
        registry.register("containers_killed", "Containers killed on request (ContainersKilled)", m.killed.clone());
        registry.register("containers_running", "Containers running now (ContainersRunning)", m.running.clone());
        registry.register("allocated_mb", "Memory of the live containers (AllocatedGB, in MB)", m.allocated_mb.clone());
        registry.register(
            "allocated_vcores",
            "Vcores of the live containers (AllocatedVCores)",
            m.allocated_vcores.clone(),
        );
        Self { registry, ..m }
    }
}

impl NmMetrics {
    /// How a container ended: killed on request, exited 0, or failed.
    pub fn ended(&self, killed: bool, code: i32) {
        if killed {
            self.killed.inc();
        } else if code == 0 {
            self.completed.inc();
        } else {
            self.failed.inc();
        }
    }

    pub fn render(&self, table: &Table) -> String {
        if let Ok(t) = table.lock() {
            let live = t.values().filter(|c| c.state != ContainerState::Complete);
            let (n, mb, vc) =
                live.fold((0, 0, 0), |(n, mb, vc), c| (n + 1, mb + c.resource.memory, vc + c.resource.vcores));
            self.running.set(n);
            self.allocated_mb.set(mb);
            self.allocated_vcores.set(vc);
        }
        let mut out = String::new();
        let _ = encode(&mut out, &self.registry);
        out
    }
}
