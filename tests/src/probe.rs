//! Dialling destinations from inside a kernel, for the egress tests: the Python a session
//! runs (`bai run -t SESSION -c CODE`) and what it answers for each target: `open`,
//! `refused`, or `failed: …` (a timeout, no route).

use std::collections::BTreeMap;

const PROBE: &str = "import json, socket\n\
res = {}\n\
for name, host, port in TARGETS:\n    try:\n        socket.create_connection((host, port), timeout=60).close(); res[name] = 'open'\n    except ConnectionRefusedError:\n        res[name] = 'refused'\n    except OSError as e:\n        res[name] = 'failed: %s' % (e,)\n\
print('PROBE' + json.dumps(res))\n";

/// The code that dials each of `targets`, a JSON list of `[name, host, port]`.
pub fn code(targets: &serde_json::Value) -> String {
    PROBE.replace("TARGETS", &targets.to_string())
}

/// What the code printed (its `PROBE` line), by target name.
pub fn answer(stdout: &str) -> Option<BTreeMap<String, String>> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("PROBE"))?;
    serde_json::from_str(line).ok()
}
