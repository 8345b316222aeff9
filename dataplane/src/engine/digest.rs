//! The body digest that tells an identical duplicate from a changed
//! retransmission under the same Packet ID.
//!
//! NH (the universal hash of UMAC): each pair of 32-bit words, offset by its
//! own key word, is multiplied into a 64-bit product, and the products are
//! summed in four lanes; the range and length are mixed in at the end. A
//! changed pair collides with probability about 2^-32, and the inner loop is
//! one multiply per eight bytes, which AVX2 does four at a time. Keys are
//! fixed pseudo-random words, so the digest is the same on every machine and
//! in both implementations (the tests compare them).

use std::sync::OnceLock;

/// Key words: enough for the largest body (MTU 9000) rounded up to a block.
const KEY_WORDS: usize = 9000 / 4 + 8;
const BLOCK: usize = 32;

fn keys() -> &'static [u32; KEY_WORDS] {
    static KEYS: OnceLock<[u32; KEY_WORDS]> = OnceLock::new();
    KEYS.get_or_init(|| {
        // splitmix64: fixed seed, so every build has the same keys.
        let mut s = 0x5052_4953_4d5f_4e48u64;
        let mut k = [0u32; KEY_WORDS];
        for w in k.iter_mut() {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *w = (z ^ (z >> 31)) as u32;
        }
        k
    })
}

/// The digest of a packet's range and body.
pub fn digest(first: u64, end: u64, body: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX2: OnceLock<bool> = OnceLock::new();
        // PRISM_ARITH_SCALAR=1 forces the scalar twin, as in prism-arith.
        let avx2 = *AVX2.get_or_init(|| std::is_x86_feature_detected!("avx2") && std::env::var_os("PRISM_ARITH_SCALAR").is_none());
        if avx2 && body.len() <= (KEY_WORDS - 8) * 4 {
            // SAFETY: AVX2 is present (checked above).
            return finish(first, end, body.len(), unsafe { lanes_avx2(body) });
        }
    }
    finish(first, end, body.len(), lanes_scalar(body))
}

/// The scalar twin (and the path for other targets and oversized bodies).
pub fn digest_scalar(first: u64, end: u64, body: &[u8]) -> u64 {
    finish(first, end, body.len(), lanes_scalar(body))
}

fn finish(first: u64, end: u64, len: usize, lanes: [u64; 4]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (first.wrapping_mul(K) ^ end).rotate_left(29) ^ len as u64;
    for l in lanes {
        h = (h ^ l).wrapping_mul(K).rotate_left(31);
    }
    h ^ (h >> 29)
}

/// One 32-byte block as eight little-endian words (zero-padded at the end).
fn words(block: &[u8]) -> [u32; 8] {
    let mut b = [0u8; BLOCK];
    b[..block.len()].copy_from_slice(block);
    let mut w = [0u32; 8];
    for (i, x) in w.iter_mut().enumerate() {
        *x = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    }
    w
}

fn lanes_scalar(body: &[u8]) -> [u64; 4] {
    let k = keys();
    let mut acc = [0u64; 4];
    for (b, block) in body.chunks(BLOCK).enumerate() {
        let w = words(block);
        // Past the key table (bodies above MTU 9000) the keys wrap around.
        let base = (b * 8) % (KEY_WORDS - 7);
        for (j, a) in acc.iter_mut().enumerate() {
            let x = w[2 * j].wrapping_add(k[base + 2 * j]) as u64;
            let y = w[2 * j + 1].wrapping_add(k[base + 2 * j + 1]) as u64;
            *a = a.wrapping_add(x * y);
        }
    }
    acc
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_avx2(body: &[u8]) -> [u64; 4] {
    use std::arch::x86_64::*;
    let k = keys();
    let full = body.len() / BLOCK;
    // One block's NH products: each 64-bit lane is (low word + key) * (high
    // word + key), both as unsigned 32-bit.
    macro_rules! nh {
        ($x:expr, $key:expr) => {{
            let s = _mm256_add_epi32($x, $key);
            _mm256_mul_epu32(s, _mm256_srli_epi64::<32>(s))
        }};
    }
    // Four blocks a step into two sums (fewer loop steps; the adds of one
    // block do not wait for the other's).
    let (mut a0, mut a1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    let (bp, kp) = (body.as_ptr() as *const __m256i, k.as_ptr() as *const __m256i);
    let mut b = 0;
    while b + 4 <= full {
        // SAFETY: blocks b..b + 4 lie inside body (b + 4 <= full); the key
        // words 8b..8b+32 lie inside the table (callers keep bodies within
        // it); unaligned loads.
        unsafe {
            a0 = _mm256_add_epi64(a0, nh!(_mm256_loadu_si256(bp.add(b)), _mm256_loadu_si256(kp.add(b))));
            a1 = _mm256_add_epi64(a1, nh!(_mm256_loadu_si256(bp.add(b + 1)), _mm256_loadu_si256(kp.add(b + 1))));
            a0 = _mm256_add_epi64(a0, nh!(_mm256_loadu_si256(bp.add(b + 2)), _mm256_loadu_si256(kp.add(b + 2))));
            a1 = _mm256_add_epi64(a1, nh!(_mm256_loadu_si256(bp.add(b + 3)), _mm256_loadu_si256(kp.add(b + 3))));
        }
        b += 4;
    }
    while b < full {
        // SAFETY: as above, for the one block b < full.
        unsafe { a0 = _mm256_add_epi64(a0, nh!(_mm256_loadu_si256(bp.add(b)), _mm256_loadu_si256(kp.add(b)))) };
        b += 1;
    }
    let tail = body.len() - full * BLOCK;
    if tail > 0 && tail.is_multiple_of(4) {
        // Whole words left (a DATA body always): a masked load gives them with
        // zeros after, the same block the scalar twin pads.
        let words = _mm256_set1_epi32((tail / 4) as i32);
        let mask = _mm256_cmpgt_epi32(words, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        // SAFETY: the mask reads only the tail's words, inside body; the key
        // block `full` lies inside the table as above.
        unsafe { a1 = _mm256_add_epi64(a1, nh!(_mm256_maskload_epi32(body.as_ptr().add(full * BLOCK) as *const i32, mask), _mm256_loadu_si256(kp.add(full)))) };
    }
    let mut out = [0u64; 4];
    // SAFETY: out holds exactly 32 bytes.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, _mm256_add_epi64(a0, a1)) };
    if !tail.is_multiple_of(4) {
        let w = words(&body[full * BLOCK..]);
        let base = full * 8;
        for (j, a) in out.iter_mut().enumerate() {
            let x = w[2 * j].wrapping_add(k[base + 2 * j]) as u64;
            let y = w[2 * j + 1].wrapping_add(k[base + 2 * j + 1]) as u64;
            *a = a.wrapping_add(x * y);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect()
    }

    #[test]
    fn simd_equals_scalar_on_every_length() {
        for n in (0..400).chain([1452, 1456, 1458, 8952, 8958]) {
            let b = bytes(n, n as u64 + 1);
            assert_eq!(digest(3, 3 + n as u64, &b), digest_scalar(3, 3 + n as u64, &b), "length {n}");
        }
    }

    #[test]
    fn every_single_byte_change_and_range_change_is_seen() {
        for n in [1usize, 7, 32, 33, 363 * 4 + 4] {
            let b = bytes(n, 9);
            let d = digest(10, 20, &b);
            for i in 0..n {
                for bit in [0, 3, 7] {
                    let mut c = b.clone();
                    c[i] ^= 1 << bit;
                    assert_ne!(digest(10, 20, &c), d, "byte {i} bit {bit} of {n}");
                }
            }
            assert_ne!(digest(11, 20, &b), d);
            assert_ne!(digest(10, 21, &b), d);
        }
        // Swapped words and blocks are other bodies too.
        let b = bytes(128, 5);
        let mut c = b.clone();
        c[..32].copy_from_slice(&b[32..64]);
        c[32..64].copy_from_slice(&b[..32]);
        assert_ne!(digest(0, 1, &b), digest(0, 1, &c));
        // Trailing zeros change the length, which is mixed in.
        let mut z = b.clone();
        z.push(0);
        assert_ne!(digest(0, 1, &b), digest(0, 1, &z));
    }
}
