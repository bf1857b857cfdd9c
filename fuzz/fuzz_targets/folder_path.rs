#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bai_fuzz::folder_path(data));
