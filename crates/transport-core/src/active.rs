use std::num::NonZeroU32;

/// How many inbound frames the consumer is ready for: the delivery mode set
/// with [`Transport::set_active`](crate::Transport::set_active).
///
/// Setting a mode **replaces** the outstanding grant count; it does not add to
/// it. Each delivered [`Frame`](crate::TransportEvent::Frame) uses up one grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Active {
    /// Deliver no frames (grants = 0). The default for a new transport.
    #[default]
    Paused,
    /// Deliver the next frame, then pause (grants = 1).
    Once,
    /// Deliver up to `n` more frames, then pause (grants = n).
    Many(NonZeroU32),
}

/// A grant counter, for transport implementations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Grants(u32);

impl Grants {
    /// Replaces the count according to `active`.
    pub fn set(&mut self, active: Active) {
        self.0 = match active {
            Active::Paused => 0,
            Active::Once => 1,
            Active::Many(n) => n.get(),
        };
    }

    /// True if at least one frame may be delivered.
    pub fn any(&self) -> bool {
        self.0 > 0
    }

    /// Uses up one grant; false (and no change) if there was none.
    pub fn take(&mut self) -> bool {
        if self.0 == 0 {
            return false;
        }
        self.0 -= 1;
        true
    }

    /// How many frames may still be delivered.
    pub fn remaining(&self) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_and_take_counts_down() {
        let mut g = Grants::default();
        assert!(!g.take());
        g.set(Active::Many(NonZeroU32::new(2).unwrap()));
        g.set(Active::Once);
        assert!(g.take());
        assert!(!g.take());
        g.set(Active::Many(NonZeroU32::new(3).unwrap()));
        g.set(Active::Paused);
        assert!(!g.any());
    }
}
