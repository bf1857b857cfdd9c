//! The official admin suite, unmodified: `backend.ai test run-cli admin` from
//! backend.ai-test 26.9.6. Its 29 pytest cases drive the official `backend.ai` CLI as an
//! administrator through pexpect: domains (add with folder-host permissions and registries,
//! rename, purge), groups, images, keypairs (add for new users, update, list, and a deletion
//! refused while the keypair's session is queued), keypair resource policies, scaling groups
//! (driver and scheduler options), storage volumes and users (add with roles and statuses,
//! update, purge), all with `--output=json`. Its own binary, like the user suite.

use bai_e2e::Server;

#[test]
fn official_run_cli_admin_suite_passes() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let run = bai_e2e::suite::run_cli(&s, "admin", &s.user, &s.user2, &s.admin);
    run.assert_all_pass(29);
}
