//! The model the serving tests serve (`tests/fixtures/model-nb`): a naive Bayes text
//! classifier its replica trains from the folder's corpus as it starts.

use std::path::Path;

/// The fixture's files, in the order the tests upload them.
pub const FILES: [&str; 4] = [
    "model-definition.yaml",
    "train.py",
    "serve.py",
    "corpus.tsv",
];

/// Copies the fixture's files into `dir`, its `model-definition.yaml` changed by `edit`.
pub fn copy_to(dir: &Path, edit: impl Fn(String) -> String) -> std::io::Result<()> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/model-nb");
    for f in FILES {
        std::fs::copy(src.join(f), dir.join(f))?;
    }
    let def = dir.join("model-definition.yaml");
    let text = std::fs::read_to_string(&def)?;
    std::fs::write(&def, edit(text))
}
