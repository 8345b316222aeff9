//! Shared by the RTL tests: a small deterministic generator (xorshift64).
#![allow(dead_code)]

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn u32(&mut self) -> u32 {
        (self.next() >> 16) as u32
    }
}
