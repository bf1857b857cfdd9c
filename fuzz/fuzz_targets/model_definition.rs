#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bai_fuzz::model_definition(data));
