//! The generator's random numbers: xorshift64*, seeded through splitmix64.
//!
//! Small, fast, and the same on every platform and every run, which is what the
//! generator's "same seed, same bytes" promise rests on: any change here changes every
//! generated log.

/// xorshift64*: small, fast, and the same everywhere.
pub(super) struct Rng(u64);

impl Rng {
    /// The generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        // splitmix64 of the seed, never zero.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// One of `xs`, which must not be empty.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    /// True `per_10k` times in 10,000.
    pub fn chance(&mut self, per_10k: u64) -> bool {
        self.below(10_000) < per_10k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(seed: u64, n: usize) -> Vec<u64> {
        let mut r = Rng::new(seed);
        (0..n).map(|_| r.next()).collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_numbers() {
        assert_eq!(first(5, 100), first(5, 100));
        assert_ne!(first(5, 100), first(6, 100));
        // Seed 0 is as good as any: splitmix64 keeps the state from being zero.
        assert!(first(0, 100).iter().all(|&x| x != 0));
    }

    #[test]
    fn the_numbers_are_pinned() {
        // Generated logs depend on these exact numbers: a change here is a change of
        // every generated file (and of the fixtures made from one).
        let mut r = Rng::new(1);
        let seq = [r.next(), r.next(), r.next()];
        assert_eq!(
            seq,
            [
                0x4b46_a55d_f361_1b9b,
                0xd7e1_f141_0e76_3ef4,
                0x5f14_ec66_975f_9b06
            ]
        );
    }

    #[test]
    fn below_pick_and_chance_stay_in_range() {
        let mut r = Rng::new(42);
        let mut seen = [false; 7];
        for _ in 0..10_000 {
            let x = r.below(7);
            assert!(x < 7);
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
        assert_eq!(r.below(0), 0);
        assert_eq!(r.below(1), 0);
        let xs = ["a", "b", "c"];
        for _ in 0..100 {
            assert!(xs.contains(r.pick(&xs)));
        }
        assert!((0..1000).all(|_| !r.chance(0)));
        assert!((0..1000).all(|_| r.chance(10_000)));
        let hits = (0..100_000).filter(|_| r.chance(2_500)).count();
        assert!((23_000..27_000).contains(&hits), "{hits}");
    }
}
