//! The official integration suite, its cases unmodified: `backend.ai test run-cli user` from
//! backend.ai-test 26.9.6 (wire reference §8 A). Its `user` package is `test_vfolder.py`: ten
//! pytest cases that drive the official `backend.ai` CLI through pexpect (create rw/ro folders on
//! `local:volume1`, list as JSON, rename, upload, ls, rename-file, download, mkdir -p/-e, mv,
//! delete, and same-named folders for two users). Each CLI command may take 120 s, not the
//! published 5 s (`tests/fixtures/official/bai_patience.py`); the cases are as published.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;

#[test]
fn official_run_cli_user_suite_passes() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    // The admin account doubles as the second user: it owns folders of its own.
    let run = bai_e2e::suite::run_cli(&s, "user", &s.user, &s.admin, &s.admin);
    run.assert_all_pass(10);
}
