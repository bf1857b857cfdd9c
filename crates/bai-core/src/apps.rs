//! Where a session's web apps answer, as the manager's proxy and the clients both need it.

/// Whether the kernel's runner serves `app` under the proxy's path (`/app/<session>/<app>/`)
/// itself: its own Jupyter, JupyterLab and TensorBoard, and the web terminal. Every other web
/// app (one an image brings a recipe for, a preopen port) answers at its root, as on a port
/// of its own: the proxy takes the prefix off its paths, and a tunnel's URL has none.
pub fn serves_under_prefix(app: &str) -> bool {
    matches!(app, "jupyter" | "jupyterlab" | "tensorboard" | "ttyd")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_runners_own_apps_serve_under_the_prefix() {
        assert!(super::serves_under_prefix("jupyterlab"));
        assert!(super::serves_under_prefix("ttyd"));
        assert!(!super::serves_under_prefix("code-server"));
        assert!(!super::serves_under_prefix("8080"));
    }
}
