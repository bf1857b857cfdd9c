//! Seeded mutations for the bounded runs on stable: the same seed gives the same inputs, so a
//! failure is reproducible from the test's output. A small xorshift generator; mutations
//! flip, insert, delete and repeat bytes, splice two corpus entries, and insert tokens that
//! parsers tend to trip on.

/// Tokens worth inserting.
const TOKENS: &[&str] = &[
    "..",
    "/",
    "\\",
    "\0",
    "=",
    ",",
    ":",
    ";",
    " ",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "$",
    "!",
    "\"",
    "'",
    "...",
    "@",
    "#",
    "-",
    ".",
    "e",
    "1e999",
    "-0",
    "inf",
    "NaN",
    "18446744073709551616",
    "9999999999999999999",
    "0.5",
    "h",
    "m",
    "s",
    "ms",
    "w",
    "d",
    "gib",
    "t",
    "query",
    "mutation",
    "fragment",
    "on",
    "__typename",
    "BackendAI",
    "signMethod=HMAC-SHA256",
    "credential=",
    "models:",
    "- name:",
    "service:",
    "port:",
    "start_command:",
    "\n",
    "\t",
    "é",
    "\u{feff}",
];

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// A seed from a name (FNV-1a), so each target has its own sequence.
pub fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One input: a corpus entry changed by one to four mutations.
pub fn input(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut v = if corpus.is_empty() {
        Vec::new()
    } else {
        corpus[rng.below(corpus.len())].clone()
    };
    for _ in 0..=rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => v.insert(at, rng.next_u64() as u8),
            2 if !v.is_empty() => {
                let end = (at + 1 + rng.below(8)).min(v.len());
                let start = at.min(end.saturating_sub(1));
                v.drain(start..end);
            }
            3 if !v.is_empty() => {
                let start = rng.below(v.len());
                let end = (start + 1 + rng.below(16)).min(v.len());
                let piece = v[start..end].to_vec();
                v.splice(at..at, piece);
            }
            4 if !corpus.is_empty() => {
                let other = &corpus[rng.below(corpus.len())];
                let cut = rng.below(other.len() + 1);
                v.truncate(at);
                v.extend_from_slice(&other[cut..]);
            }
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                v.splice(at..at, t.iter().copied());
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let corpus = vec![b"abc".to_vec(), b"1h30m".to_vec()];
        let a: Vec<_> = {
            let mut r = Rng::new(seed_of("units"));
            (0..100).map(|_| input(&mut r, &corpus)).collect()
        };
        let mut r = Rng::new(seed_of("units"));
        let b: Vec<_> = (0..100).map(|_| input(&mut r, &corpus)).collect();
        assert_eq!(a, b);
        assert!(
            a.iter().any(|x| !corpus.contains(x)),
            "mutations change inputs"
        );
    }
}
