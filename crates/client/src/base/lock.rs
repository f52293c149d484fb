//! The one way this crate takes a lock (as quinn's `mutex.rs`): std's
//! `Mutex` and `RwLock`, with poisoning ignored.
//!
//! Why ignoring poisoning is sound here: every critical section in this
//! crate is a single insert, remove, take or replace on a table or a slot,
//! which leaves the data valid even if a panic interrupts the thread between
//! two of them; no user code runs under a lock. A panic elsewhere (a user's
//! handler, a callback) must not turn every later call into a panic.

use std::sync::{MutexGuard, PoisonError, RwLockReadGuard, RwLockWriteGuard};

/// A mutex whose [`lock`](Self::lock) never fails.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::sync::Mutex::new(value))
    }

    /// Locks, waiting for the holder (every holder is brief).
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A read-write lock whose [`read`](Self::read) and [`write`](Self::write)
/// never fail.
#[derive(Debug, Default)]
pub(crate) struct RwLock<T>(std::sync::RwLock<T>);

impl<T> RwLock<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::sync::RwLock::new(value))
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, T> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}
