//! The fuzz targets, bounded, on stable: every corpus file under `fuzz/corpus/TARGET/`, then
//! `BAI_FUZZ_RUNS` (default 50,000) seeded mutations of them per target. A failing input is
//! written to `target/fuzz-failures/TARGET-N` and named in the panic, so it can be added to
//! the corpus once fixed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_fuzz::mutate::{Rng, input, seed_of};
use std::path::PathBuf;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<_> = std::fs::read_dir(corpus_dir(target))
        .unwrap_or_else(|e| panic!("the corpus of {target}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

fn run_one(target: &str, f: bai_fuzz::Target, i: usize, data: &[u8]) {
    if std::panic::catch_unwind(|| f(data)).is_err() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join(format!("{target}-{i}"));
        let _ = std::fs::write(&path, data);
        panic!(
            "fuzz target {target} failed on input {i} ({:?}), written to {}",
            String::from_utf8_lossy(data),
            path.display()
        );
    }
}

#[test]
fn every_target_survives_its_corpus_and_seeded_mutations() {
    let runs: usize = std::env::var("BAI_FUZZ_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    for (name, f) in bai_fuzz::TARGETS {
        let seeds = corpus(name);
        assert!(
            seeds.len() >= 3,
            "{name}: keep a corpus of real inputs in fuzz/corpus/{name}"
        );
        for (i, s) in seeds.iter().enumerate() {
            run_one(name, *f, i, s);
        }
        let mut rng = Rng::new(seed_of(name));
        for i in 0..runs {
            let data = input(&mut rng, &seeds);
            run_one(name, *f, seeds.len() + i, &data);
        }
        println!(
            "{name}: {} corpus inputs, {runs} mutations, 0 failures",
            seeds.len()
        );
    }
}
