//! The one pseudo-random generator of the fault and mutation tests: xorshift64* with a fixed
//! seed, so a failing case names its seed and reproduces. Not for anything but choosing cases.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`0` when `n` is 0), in the caller's integer type.
    pub fn below<N>(&mut self, n: N) -> N
    where
        N: TryInto<u64> + TryFrom<u64>,
    {
        let n: u64 = n.try_into().ok().expect("a count fits in u64");
        N::try_from(self.next() % n.max(1))
            .ok()
            .expect("below n fits in n's type")
    }
}
