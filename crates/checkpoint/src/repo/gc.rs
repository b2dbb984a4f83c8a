//! Dropping checkpoints and keeping the shadow repository under its size
//! cap (git's garbage collection).

use std::sync::atomic::Ordering;

use tracing::{info, warn};

use crate::error::{CheckpointError, Result};
use crate::meta;

use super::{GcReport, REF_PREFIX, ShadowRepo};

impl ShadowRepo {
    /// Drops checkpoints by id (unknown ids are ignored).
    pub fn delete(&self, ids: &[String]) -> Result<()> {
        let mut input = String::new();
        for id in ids {
            if !meta::valid_id(id) {
                return Err(CheckpointError::InvalidId(id.clone()));
            }
            input.push_str(&format!("delete {REF_PREFIX}{id}\n"));
        }
        if !input.is_empty() {
            self.git
                .run_input(["update-ref", "--stdin"], input.as_bytes())?;
        }
        Ok(())
    }

    /// The shadow repository's size on disk (objects and packs).
    pub fn size_bytes(&self) -> Result<u64> {
        let out = self.git.text(["count-objects", "-v"])?;
        let kib: u64 = out
            .lines()
            .filter_map(|l| l.split_once(": "))
            .filter(|(k, _)| matches!(*k, "size" | "size-pack" | "size-garbage"))
            .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
            .sum();
        self.unmeasured_bytes.store(0, Ordering::Relaxed);
        Ok(kib * 1024)
    }

    /// Collects garbage when needed: more than `max_checkpoints` drops the
    /// oldest; when the repository may have outgrown `max_total_bytes`, it
    /// is measured and, if over, the oldest half of the checkpoints is
    /// dropped and `git gc` run, until it fits or one checkpoint is left.
    pub fn maybe_gc(&self) -> Result<GcReport> {
        let check_size = self.unmeasured_bytes.load(Ordering::Relaxed)
            >= (self.config.max_total_bytes / 16).max(1);
        let _guard = self.lock();
        self.gc_locked(check_size)
    }

    /// [`Self::maybe_gc`], measuring the size whatever was hashed since.
    pub fn gc(&self) -> Result<GcReport> {
        let _guard = self.lock();
        self.gc_locked(true)
    }

    fn gc_locked(&self, check_size: bool) -> Result<GcReport> {
        let mut report = GcReport::default();
        let mut list = self.list()?;
        if list.len() > self.config.max_checkpoints {
            let old: Vec<String> = list
                .split_off(self.config.max_checkpoints)
                .into_iter()
                .rev()
                .map(|c| c.id)
                .collect();
            self.delete(&old)?;
            report.dropped.extend(old);
        }
        if !check_size {
            return Ok(report);
        }
        let mut size = self.size_bytes()?;
        while size > self.config.max_total_bytes {
            let keep = (list.len() / 2).max(1);
            let old: Vec<String> = list
                .split_off(keep.min(list.len()))
                .into_iter()
                .rev()
                .map(|c| c.id)
                .collect();
            self.delete(&old)?;
            report.dropped.extend(old.iter().cloned());
            self.git.run([
                "gc",
                "--quiet",
                &format!("--prune={}", self.config.prune_grace),
            ])?;
            report.collected = true;
            size = self.size_bytes()?;
            info!(size, dropped = old.len(), "checkpoint repository collected");
            if list.len() <= 1 {
                break;
            }
        }
        if size > self.config.max_total_bytes {
            warn!(
                size,
                cap = self.config.max_total_bytes,
                "the checkpoint repository is still over its size cap"
            );
        }
        report.size_bytes = Some(size);
        Ok(report)
    }
}
