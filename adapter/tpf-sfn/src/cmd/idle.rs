//! The pause between polling passes of the long-running commands: short while there is work,
//! doubling while there is none, so an idle relay or `dev` loop costs few calls.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Idle {
    base: Duration,
    max: Duration,
    next: Duration,
}

impl Idle {
    /// Pauses of `base` while busy, growing to `max` while idle (never below `base`).
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max: max.max(base),
            next: base,
        }
    }

    /// The pause after a pass that found work: back to the base.
    pub fn busy(&mut self) -> Duration {
        self.next = self.base;
        self.base
    }

    /// The pause after a pass that found nothing: this one, and the next one doubled.
    pub fn idle(&mut self) -> Duration {
        let pause = self.next;
        let doubled = if self.next.is_zero() {
            Duration::from_millis(100)
        } else {
            self.next.saturating_mul(2)
        };
        self.next = doubled.min(self.max);
        pause
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn idle_passes_double_the_pause_up_to_the_max_and_work_resets_it() {
        let mut idle = Idle::new(ms(250), ms(2000));
        let pauses: Vec<_> = (0..6).map(|_| idle.idle()).collect();
        assert_eq!(
            pauses,
            [ms(250), ms(500), ms(1000), ms(2000), ms(2000), ms(2000)]
        );
        assert_eq!(idle.busy(), ms(250));
        assert_eq!(idle.idle(), ms(250));
    }

    #[test]
    fn a_max_at_the_base_means_no_back_off() {
        let mut idle = Idle::new(ms(1000), ms(1000));
        assert!((0..4).all(|_| idle.idle() == ms(1000)));
        let mut from_zero = Idle::new(Duration::ZERO, ms(300));
        let pauses: Vec<_> = (0..4).map(|_| from_zero.idle()).collect();
        assert_eq!(pauses, [Duration::ZERO, ms(100), ms(200), ms(300)]);
    }
}
