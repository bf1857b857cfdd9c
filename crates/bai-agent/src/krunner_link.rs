//! How the kernel runner's file is linked. The runner is the first program of every kernel and
//! runs inside the kernel's image, so it must load nothing from it: `scripts/build-krunner.sh`
//! links it statically. A plain `cargo build` links it against this machine's glibc, and such
//! a runner cannot start in an image whose glibc is older (Ubuntu 20.04, Debian 11), in a musl
//! image (Alpine) or in one with no C library; the agent says so when it starts.

use std::path::Path;

/// ELF's program header type of the interpreter (`PT_INTERP`): the dynamic loader a program
/// needs.
const PT_INTERP: u32 = 3;

/// The dynamic loader an ELF64 little-endian program names (`/lib64/ld-linux-x86-64.so.2`),
/// `None` for a static one or for anything this cannot read as such a program.
pub(crate) fn interpreter(elf: &[u8]) -> Option<String> {
    if elf.get(..4)? != b"\x7fELF" || *elf.get(4)? != 2 || *elf.get(5)? != 1 {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| {
        let v = u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?);
        usize::try_from(v).ok()
    };
    let table = u64_at(0x20)?;
    let entry = usize::from(u16_at(0x36)?);
    let count = usize::from(u16_at(0x38)?);
    (0..count).find_map(|i| {
        let header = table.checked_add(i.checked_mul(entry)?)?;
        if u32_at(header)? != PT_INTERP {
            return None;
        }
        let offset = u64_at(header + 0x08)?;
        let size = u64_at(header + 0x20)?;
        let name = elf.get(offset..offset.checked_add(size)?)?;
        let name = name.split(|b| *b == 0).next()?;
        Some(String::from_utf8_lossy(name).into_owned())
    })
}

/// The runner's file at `path` made absolute, or `None` where there is no such file; a
/// runner that needs a dynamic loader is warned of. Both backends check theirs with it when
/// they start (each says in its own words what is missing).
pub(crate) fn runner_file(path: &Path) -> Option<std::path::PathBuf> {
    let path = std::fs::canonicalize(path).ok().filter(|p| p.is_file())?;
    warn_if_dynamic(&path);
    Some(path)
}

/// Logs a warning when the runner at `path` needs a dynamic loader (read errors are the
/// caller's: it checked the file is there).
fn warn_if_dynamic(path: &Path) {
    let Ok(elf) = std::fs::read(path) else {
        return;
    };
    if let Some(loader) = interpreter(&elf) {
        tracing::warn!(
            krunner = %path.display(),
            loader,
            "the kernel runner is dynamically linked: images whose C library is older than \
             this machine's, musl or absent cannot start it; build it with \
             scripts/build-krunner.sh (make build does)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::interpreter;

    /// An ELF64 header with program headers at 64, one per `(type, bytes)`, each entry's
    /// bytes placed after the table.
    fn elf(headers: &[(u32, &[u8])]) -> Vec<u8> {
        let mut out = vec![0u8; 64];
        out[..4].copy_from_slice(b"\x7fELF");
        out[4] = 2;
        out[5] = 1;
        out[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        out[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        out[0x38..0x3a].copy_from_slice(&(headers.len() as u16).to_le_bytes());
        let mut data = 64 + 56 * headers.len();
        let mut blobs = Vec::new();
        for (kind, bytes) in headers {
            let mut h = vec![0u8; 56];
            h[..4].copy_from_slice(&kind.to_le_bytes());
            h[0x08..0x10].copy_from_slice(&(data as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend(h);
            blobs.extend_from_slice(bytes);
            data += bytes.len();
        }
        out.extend(blobs);
        out
    }

    #[test]
    fn a_dynamic_program_names_its_loader() {
        let program = elf(&[(6, b""), (3, b"/lib64/ld-linux-x86-64.so.2\0"), (1, b"")]);
        assert_eq!(
            interpreter(&program).as_deref(),
            Some("/lib64/ld-linux-x86-64.so.2")
        );
    }

    #[test]
    fn a_static_program_names_none() {
        assert_eq!(interpreter(&elf(&[(6, b""), (1, b"")])), None);
    }

    #[test]
    fn what_is_not_such_a_program_names_none() {
        assert_eq!(interpreter(b"#!/bin/sh\necho hi\n"), None);
        let mut cut = elf(&[(3, b"/lib64/ld-linux-x86-64.so.2\0")]);
        cut.truncate(100);
        assert_eq!(interpreter(&cut), None);
        let mut big_endian = elf(&[(3, b"/x\0")]);
        big_endian[5] = 2;
        assert_eq!(interpreter(&big_endian), None);
    }

    /// This test binary itself: built by cargo, dynamically linked against glibc.
    #[test]
    fn reads_a_real_program() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let loader = interpreter(&me);
        assert!(
            loader.as_deref().is_some_and(|l| l.contains("ld-linux")),
            "{loader:?}"
        );
    }
}
