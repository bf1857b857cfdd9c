//! What the agent's side of the link remembers from one link to the next: the answers to
//! recent calls that changed something, so that a call the manager sends again after a
//! reconnect (same request id) gets the first answer instead of being carried out twice,
//! and the parts of uploads too big for one message.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use uuid::Uuid;

/// How long an answer and a staged upload are kept (far longer than the manager goes on
/// sending a call again).
pub const KEEP: Duration = Duration::from_secs(600);
/// The most answers kept; past it the oldest finished ones go first.
pub const MAX_ANSWERS: usize = 4096;

/// An answer as it will be sent (encoded), `None` while the call is still being carried out.
type Answer = watch::Receiver<Option<Vec<u8>>>;

/// Whether a request id is new.
pub enum Seen {
    /// First time: carry the call out, then give its answer to [`Pending::done`].
    New(Pending),
    /// Asked before: [`first_answer`] resolves to the answer the first time got (once the
    /// first time has finished, if it is still running).
    Again(Answer),
}

/// A call being carried out for the first time.
pub struct Pending {
    tx: watch::Sender<Option<Vec<u8>>>,
}

impl Pending {
    pub fn done(self, answer: Vec<u8>) {
        self.tx.send_replace(Some(answer));
    }
}

/// The first answer to a repeated call; `None` if the first time never finished (its task
/// ended without an answer).
pub async fn first_answer(mut rx: Answer) -> Option<Vec<u8>> {
    rx.wait_for(|a| a.is_some())
        .await
        .ok()
        .and_then(|a| a.clone())
}

/// The parts of one upload: files by index, each its bytes so far.
type Staged = HashMap<u32, (String, Vec<u8>)>;

#[derive(Default)]
pub struct Memory {
    answers: Mutex<HashMap<Uuid, (Instant, Answer)>>,
    staged: Mutex<HashMap<Uuid, (Instant, Staged)>>,
}

fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

impl Memory {
    /// Looks `id` up, and remembers it when it is new.
    pub fn seen(&self, id: Uuid) -> Seen {
        let mut answers = lock(&self.answers);
        if let Some((_, rx)) = answers.get(&id) {
            return Seen::Again(rx.clone());
        }
        let now = Instant::now();
        if answers.len() >= MAX_ANSWERS {
            answers.retain(|_, (at, rx)| now.duration_since(*at) < KEEP || rx.borrow().is_none());
        }
        while answers.len() >= MAX_ANSWERS {
            let oldest = answers
                .iter()
                .filter(|(_, (_, rx))| rx.borrow().is_some())
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| *k);
            match oldest {
                Some(k) => answers.remove(&k),
                // Every one still running: keep them all.
                None => break,
            };
        }
        let (tx, rx) = watch::channel(None);
        answers.insert(id, (now, rx));
        Seen::New(Pending { tx })
    }

    /// How many answers are kept.
    pub fn answers(&self) -> usize {
        lock(&self.answers).len()
    }

    /// Appends `part` to file `index` (named `path`) of `upload`.
    pub fn stage(&self, upload: Uuid, index: u32, path: String, part: &[u8]) {
        let mut staged = lock(&self.staged);
        let now = Instant::now();
        staged.retain(|_, (at, _)| now.duration_since(*at) < KEEP);
        let (at, files) = staged.entry(upload).or_insert_with(|| (now, Staged::new()));
        *at = now;
        files
            .entry(index)
            .or_insert_with(|| (path, Vec::new()))
            .1
            .extend_from_slice(part);
    }

    /// Takes `upload`'s files, in index order, if they have exactly the sizes the manager
    /// sent (parts are lost when the agent restarts in between).
    pub fn take_staged(
        &self,
        upload: Uuid,
        sizes: &[u64],
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let (_, files) = lock(&self.staged)
            .remove(&upload)
            .ok_or_else(|| "the agent holds no parts of this upload".to_string())?;
        let mut files: Vec<_> = files.into_iter().collect();
        files.sort_by_key(|(i, _)| *i);
        let got: Vec<u64> = files.iter().map(|(_, (_, b))| b.len() as u64).collect();
        if got != sizes {
            return Err(format!(
                "parts of the upload were lost on the way (sizes {got:?}, expected {sizes:?})"
            ));
        }
        Ok(files.into_iter().map(|(_, f)| f).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_repeated_id_gets_the_first_answer_even_while_it_runs() {
        let lock = Memory::default();
        let id = Uuid::new_v4();
        let Seen::New(first) = lock.seen(id) else {
            panic!("a new id")
        };
        let Seen::Again(again) = lock.seen(id) else {
            panic!("a known id")
        };
        let waiter = tokio::spawn(first_answer(again));
        first.done(b"created".to_vec());
        assert_eq!(waiter.await.unwrap().as_deref(), Some(&b"created"[..]));
        let Seen::Again(later) = lock.seen(id) else {
            panic!("still known")
        };
        assert_eq!(first_answer(later).await.as_deref(), Some(&b"created"[..]));
        // A first time that ended without an answer is not waited for forever.
        let lost = Uuid::new_v4();
        let Seen::New(p) = lock.seen(lost) else {
            panic!()
        };
        drop(p);
        let Seen::Again(rx) = lock.seen(lost) else {
            panic!()
        };
        assert_eq!(first_answer(rx).await, None);
    }

    #[test]
    fn the_memory_stays_bounded() {
        let lock = Memory::default();
        for _ in 0..MAX_ANSWERS + 10 {
            if let Seen::New(p) = lock.seen(Uuid::new_v4()) {
                p.done(vec![]);
            }
        }
        assert_eq!(lock.answers(), MAX_ANSWERS);
    }

    #[test]
    fn staged_parts_are_joined_in_order_and_checked() {
        let lock = Memory::default();
        let up = Uuid::new_v4();
        lock.stage(up, 1, "b".into(), b"xy");
        lock.stage(up, 0, "a".into(), b"12");
        lock.stage(up, 0, "a".into(), b"34");
        let files = lock.take_staged(up, &[4, 2]).unwrap();
        assert_eq!(
            files,
            vec![("a".into(), b"1234".to_vec()), ("b".into(), b"xy".to_vec())]
        );
        assert!(lock.take_staged(up, &[4, 2]).is_err(), "taken once");
        let short = Uuid::new_v4();
        lock.stage(short, 0, "a".into(), b"12");
        let e = lock.take_staged(short, &[4]).unwrap_err();
        assert!(e.contains("lost"), "{e}");
    }
}
