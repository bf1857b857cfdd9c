//! Giving the system back the memory a burst of work freed.
//!
//! glibc's allocator keeps what a thread frees in that thread's arena and returns pages only
//! from the top of each heap, so after a burst (a walk through 100,000 ended sessions: SQLite's
//! pages, result rows, JSON) a process stays resident at its high-water mark long after the
//! memory is free. [`release`] asks glibc to hand every arena's free pages back;
//! [`Quiet`] says when: once after each burst, when the work has stopped.

/// Asks the allocator to give its free pages back to the system (glibc's `malloc_trim(0)`).
/// Live allocations are untouched. Returns whether anything was given back; elsewhere than
/// glibc it does nothing and returns false (those allocators return memory themselves).
///
/// It walks and locks each arena in turn: call it from a blocking thread once work is quiet.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release() -> bool {
    // SAFETY: malloc_trim takes no pointer and has no precondition; glibc serializes it with
    // every other allocator call.
    unsafe { libc::malloc_trim(0) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release() -> bool {
    false
}

/// Decides when to [`release`]: fed a counter of work done (store queries, requests) and the
/// resident size at a steady tick, it answers yes ([`Why`]) after at least `min_work` units since the
/// last release, once a tick saw less than `idle_below` units (the burst ended) or while the
/// process is resident past `high_water` bytes (a long burst). A burst's end is counted from
/// the last release at an end, so the releases in the middle of a long burst do not skip the
/// one after it. So an idle process (whose background loops still do a little) is not trimmed
/// over and over, and a busy one at most once a tick.
#[derive(Debug, Clone)]
pub struct Quiet {
    min_work: u64,
    idle_below: u64,
    high_water: u64,
    seen: u64,
    /// The work counter at the last release, and at the last one at a burst's end.
    released_at: u64,
    ended_at: u64,
}

/// Why [`Quiet::tick`] answers yes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The burst ended: the process is idle now, so caches its burst filled may go too.
    Ended,
    /// Still busy, but resident past the high water.
    HighWater,
}

impl Quiet {
    pub fn new(min_work: u64, idle_below: u64, high_water: u64) -> Self {
        Quiet {
            min_work,
            idle_below,
            high_water,
            seen: 0,
            released_at: 0,
            ended_at: 0,
        }
    }

    /// One tick with the work counter and the resident bytes as they are now: whether to
    /// release now, and why.
    pub fn tick(&mut self, work: u64, resident: Option<u64>) -> Option<Why> {
        let this_tick = work.saturating_sub(self.seen);
        self.seen = work;
        let why = if this_tick < self.idle_below {
            if work.saturating_sub(self.ended_at) < self.min_work {
                return None;
            }
            self.ended_at = work;
            Why::Ended
        } else if resident.is_none_or(|r| r < self.high_water)
            || work.saturating_sub(self.released_at) < self.min_work
        {
            return None;
        } else {
            Why::HighWater
        };
        self.released_at = work;
        Some(why)
    }
}

/// This process's resident memory in bytes (`VmRSS`), where /proc says it.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_once_after_a_burst_when_it_stops() {
        let low = Some(10);
        let mut q = Quiet::new(100, 10, 1000);
        assert_eq!(q.tick(0, low), None, "nothing done yet");
        assert_eq!(q.tick(50, low), None, "working");
        assert_eq!(q.tick(150, low), None, "still working");
        assert_eq!(
            q.tick(153, low),
            Some(Why::Ended),
            "the burst stopped (a little background work)"
        );
        assert_eq!(q.tick(155, low), None, "released already");
        assert_eq!(
            q.tick(160, low),
            None,
            "idle, too little since the last release"
        );
        assert_eq!(
            q.tick(165, low),
            None,
            "idle, too little since the last release"
        );
        assert_eq!(q.tick(400, low), None, "a second burst");
        assert_eq!(q.tick(400, low), Some(Why::Ended), "it stopped");
        assert_eq!(q.tick(600, low), None, "a third burst, small");
        assert_eq!(
            q.tick(800, Some(2000)),
            Some(Why::HighWater),
            "still busy, but past the high water"
        );
        assert_eq!(
            q.tick(850, Some(2000)),
            None,
            "too little since the last release"
        );
        assert_eq!(q.tick(900, None), None, "still busy, size unknown");
        assert_eq!(
            q.tick(905, low),
            Some(Why::Ended),
            "the burst ended: a release after the one in its middle"
        );
    }

    /// Every other block of many freed: the holes between the live ones cannot go back by
    /// themselves (only the top of a heap does), [`release`] hands their pages back.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn release_gives_freed_pages_back() {
        const BLOCKS: usize = 1024;
        const SIZE: usize = 64 * 1024;
        let worker = std::thread::spawn(|| {
            let mut blocks: Vec<Option<Vec<u8>>> = (0..BLOCKS)
                .map(|i| Some(std::hint::black_box(vec![i as u8 | 1; SIZE])))
                .collect();
            let before_free = resident_bytes().unwrap_or(0);
            for b in blocks.iter_mut().step_by(2) {
                *b = None;
            }
            let freed = resident_bytes().unwrap_or(0);
            let released = release();
            let after = resident_bytes().unwrap_or(0);
            let live: usize = blocks.iter().flatten().map(|b| b[SIZE - 1] as usize).sum();
            (
                before_free,
                freed,
                released,
                after,
                std::hint::black_box(live),
            )
        });
        let (before_free, freed, released, after, live) = worker.join().unwrap();
        assert!(live > 0);
        assert!(before_free > 0 && freed > 0 && after > 0, "no VmRSS");
        assert!(released, "nothing given back");
        assert!(
            freed.saturating_sub(after) > 16 << 20,
            "RSS {} MiB with the blocks, {} MiB once half were freed, {} MiB after release",
            before_free >> 20,
            freed >> 20,
            after >> 20
        );
    }
}
