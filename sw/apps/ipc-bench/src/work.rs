//! The server's work per request. `Matmul4` is the published setting: a 4x4 u64 matrix
//! multiply; `Heavy` is an 8x8 one (8x the multiply-adds); `None` only echoes. The matrices
//! come from the request's seed, and the reply carries two words of the product, so the
//! client can check every reply against a table it computed beforehand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    None = 1,
    Matmul4 = 2,
    Heavy = 3,
}

pub const ALL: [Work; 3] = [Work::None, Work::Matmul4, Work::Heavy];
/// Seeds cycle through this many values (the client's table of expected results).
pub const SEEDS: usize = 16;

impl Work {
    pub fn from_label(l: usize) -> Option<Work> {
        ALL.iter().copied().find(|w| *w as usize == l)
    }

    pub fn name(self) -> &'static str {
        match self {
            Work::None => "none",
            Work::Matmul4 => "matmul4",
            Work::Heavy => "heavy",
        }
    }

    /// The two result words for `seed`.
    pub fn run(self, seed: u64) -> [u64; 2] {
        match self {
            Work::None => [seed, 0],
            Work::Matmul4 => matmul::<4>(seed),
            Work::Heavy => matmul::<8>(seed),
        }
    }
}

/// C = A x B with A[i][j] = seed + N i + j and B[i][j] = (seed ^ (N j + i)) * 3 + 1 (wrapping);
/// returns (sum of C's entries, C[N-1][0]), wrapping.
#[allow(clippy::needless_range_loop)] // the indices are the textbook product's
pub fn matmul<const N: usize>(seed: u64) -> [u64; 2] {
    let mut a = [[0u64; N]; N];
    let mut b = [[0u64; N]; N];
    for (i, (ra, rb)) in a.iter_mut().zip(b.iter_mut()).enumerate() {
        for (j, (x, y)) in ra.iter_mut().zip(rb.iter_mut()).enumerate() {
            *x = seed.wrapping_add((N * i + j) as u64);
            *y = (seed ^ (N * j + i) as u64).wrapping_mul(3).wrapping_add(1);
        }
    }
    let (mut sum, mut corner) = (0u64, 0u64);
    for i in 0..N {
        for j in 0..N {
            let mut c = 0u64;
            for k in 0..N {
                c = c.wrapping_add(a[i][k].wrapping_mul(b[k][j]));
            }
            sum = sum.wrapping_add(c);
            if i == N - 1 && j == 0 {
                corner = c;
            }
        }
    }
    [sum, corner]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a direct computation of one entry and of the sum by a different order.
    #[test]
    fn matmul_matches_a_reference() {
        for seed in [0u64, 1, 7, 1 << 40, u64::MAX] {
            let n = 4usize;
            let a = |i: usize, j: usize| seed.wrapping_add((n * i + j) as u64);
            let b = |i: usize, j: usize| (seed ^ (n * j + i) as u64).wrapping_mul(3).wrapping_add(1);
            let mut sum = 0u64;
            // sum_ij C_ij = sum_k (sum_i A_ik)(sum_j B_kj)
            for k in 0..n {
                let col: u64 = (0..n).fold(0, |s, i| s.wrapping_add(a(i, k)));
                let row: u64 = (0..n).fold(0, |s, j| s.wrapping_add(b(k, j)));
                sum = sum.wrapping_add(col.wrapping_mul(row));
            }
            let corner = (0..n).fold(0u64, |s, k| s.wrapping_add(a(n - 1, k).wrapping_mul(b(k, 0))));
            assert_eq!(matmul::<4>(seed), [sum, corner], "seed {seed}");
        }
    }

    #[test]
    fn work_kinds_differ_and_round_trip() {
        for w in ALL {
            assert_eq!(Work::from_label(w as usize), Some(w));
        }
        assert_eq!(Work::from_label(0), None);
        assert_ne!(Work::Matmul4.run(5), Work::Heavy.run(5));
        assert_eq!(Work::None.run(9), [9, 0]);
    }
}
