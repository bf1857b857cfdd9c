//! SQLite's migrations 1 to 21: the baseline, the schema `schema/postgres.sql` is for
//! PostgreSQL (`tests/engines.rs` compares the two).

pub(super) const BASELINE: [&str; super::super::PG_BASELINE as usize] = [
    // 1: users, keypairs, sessions, history, events, image aliases
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        password_hash TEXT,
        created_at TEXT NOT NULL
    );
    CREATE TABLE keypairs (
        access_key TEXT PRIMARY KEY,
        secret_key TEXT NOT NULL,
        user_id TEXT NOT NULL REFERENCES users(id),
        is_admin INTEGER NOT NULL,
        is_active INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL
    );
    CREATE TABLE image_aliases (alias TEXT PRIMARY KEY, image TEXT NOT NULL);
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        access_key TEXT NOT NULL,
        user_id TEXT NOT NULL,
        domain_name TEXT NOT NULL,
        group_name TEXT NOT NULL,
        scaling_group TEXT NOT NULL,
        type TEXT NOT NULL,
        image TEXT NOT NULL,
        tag TEXT,
        priority INTEGER NOT NULL DEFAULT 10,
        status TEXT NOT NULL,
        status_info TEXT,
        status_changed TEXT NOT NULL,
        status_history TEXT NOT NULL DEFAULT '{}',
        result TEXT NOT NULL DEFAULT 'UNDEFINED',
        exit_code INTEGER,
        created_at TEXT NOT NULL,
        terminated_at TEXT,
        starts_at TEXT,
        batch_timeout INTEGER,
        startup_command TEXT,
        bootstrap_script TEXT,
        environ TEXT NOT NULL,
        requested_slots TEXT NOT NULL,
        shmem INTEGER NOT NULL,
        agent_id TEXT,
        main_kernel_id TEXT NOT NULL,
        container_id TEXT,
        logs TEXT
    );
    CREATE INDEX sessions_by_status ON sessions(status, priority, created_at);
    CREATE INDEX sessions_by_owner ON sessions(access_key, status_changed);
    CREATE INDEX sessions_by_name ON sessions(access_key, name);
    CREATE TABLE scheduling_history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        phase TEXT NOT NULL,
        result TEXT NOT NULL,
        from_status TEXT,
        to_status TEXT,
        error_code TEXT,
        message TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX history_by_session ON scheduling_history(session_id, id);
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        session_id TEXT NOT NULL,
        session_name TEXT NOT NULL,
        access_key TEXT NOT NULL,
        reason TEXT NOT NULL,
        exit_code INTEGER,
        kernel_id TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX events_by_session ON events(session_id, seq);
    "#,
    // 2: resource groups, presets, keypair resource policies; history sub-steps; sessions'
    // designated agent and dependencies
    r#"
    CREATE TABLE resource_groups (
        name TEXT PRIMARY KEY,
        description TEXT NOT NULL DEFAULT '',
        is_public INTEGER NOT NULL DEFAULT 1,
        scheduler TEXT NOT NULL DEFAULT 'fifo',
        selector TEXT NOT NULL DEFAULT 'dispersed',
        starvation_secs INTEGER NOT NULL DEFAULT 300,
        pending_timeout_secs INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    );
    INSERT INTO resource_groups(name, description, created_at)
        VALUES ('default', 'the default resource group', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
    CREATE TABLE resource_group_access (
        group_name TEXT NOT NULL REFERENCES resource_groups(name) ON DELETE CASCADE,
        access_key TEXT NOT NULL,
        PRIMARY KEY (group_name, access_key)
    );
    CREATE TABLE resource_presets (
        name TEXT PRIMARY KEY,
        slots TEXT NOT NULL,
        shmem INTEGER,
        created_at TEXT NOT NULL
    );
    CREATE TABLE resource_policies (
        name TEXT PRIMARY KEY,
        max_concurrent_sessions INTEGER,
        max_pending_sessions INTEGER,
        total_slots TEXT,
        max_session_lifetime INTEGER NOT NULL DEFAULT 0,
        idle_timeout INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    );
    INSERT INTO resource_policies(name, created_at)
        VALUES ('default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
    ALTER TABLE keypairs ADD COLUMN resource_policy TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE scheduling_history ADD COLUMN sub_steps TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE sessions ADD COLUMN designated_agent TEXT;
    ALTER TABLE sessions ADD COLUMN dependencies TEXT NOT NULL DEFAULT '[]';
    "#,
    // 3: projects, their members, and resource groups opened to projects
    r#"
    CREATE TABLE projects (
        name TEXT PRIMARY KEY,
        description TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    );
    INSERT INTO projects(name, description, created_at)
        VALUES ('default', 'the default project', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
    CREATE TABLE project_members (
        project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        PRIMARY KEY (project, user_id)
    );
    INSERT INTO project_members(project, user_id) SELECT 'default', id FROM users;
    CREATE TABLE resource_group_projects (
        group_name TEXT NOT NULL REFERENCES resource_groups(name) ON DELETE CASCADE,
        project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
        PRIMARY KEY (group_name, project)
    );
    "#,
    // 4: data folders; the folders a session mounts
    r#"
    CREATE TABLE vfolders (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        host TEXT NOT NULL,
        user_id TEXT NOT NULL,
        permission TEXT NOT NULL,
        usage_mode TEXT NOT NULL DEFAULT 'general',
        status TEXT NOT NULL DEFAULT 'ready',
        quota_bytes INTEGER,
        created_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX vfolders_by_owner_name ON vfolders(user_id, name);
    ALTER TABLE sessions ADD COLUMN mounts TEXT NOT NULL DEFAULT '[]';
    "#,
    // 5: project folders (owned by a project; user_id is their creator); names are unique per
    // owning user among user folders and per project among project folders
    r#"
    ALTER TABLE vfolders ADD COLUMN project TEXT;
    DROP INDEX vfolders_by_owner_name;
    CREATE UNIQUE INDEX vfolders_user_name ON vfolders(user_id, name) WHERE project IS NULL;
    CREATE UNIQUE INDEX vfolders_project_name ON vfolders(project, name) WHERE project IS NOT NULL;
    "#,
    // 6: the container ports a session opens as apps (preopen ports)
    r#"
    ALTER TABLE sessions ADD COLUMN preopen_ports TEXT NOT NULL DEFAULT '[]';
    "#,
    // 7: the last resource and traffic counters of an ended session (`last_stat`)
    r#"
    ALTER TABLE sessions ADD COLUMN last_stat TEXT;
    "#,
    // 8: join tokens of remote agents (only the secret's hash), and the agents the manager
    // knows (remote ones by their credential's hash; drained flags of every agent)
    r#"
    CREATE TABLE agent_tokens (
        id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL,
        scaling_group TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        token_id TEXT,
        credential_hash TEXT,
        scaling_group TEXT NOT NULL,
        address TEXT NOT NULL DEFAULT '',
        info TEXT,
        drained INTEGER NOT NULL DEFAULT 0,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL
    );
    "#,
    // 9: cluster sessions: their mode and size, their sub kernels (main1 is the session row's
    // own kernel), and the policy limit on kernels per session
    r#"
    ALTER TABLE sessions ADD COLUMN cluster_mode TEXT NOT NULL DEFAULT 'single-node';
    ALTER TABLE sessions ADD COLUMN cluster_size INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE kernels (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        agent_id TEXT,
        container_id TEXT,
        exit_code INTEGER,
        logs TEXT
    );
    CREATE INDEX kernels_by_session ON kernels(session_id, idx);
    ALTER TABLE resource_policies ADD COLUMN max_containers_per_session INTEGER;
    "#,
    // 10: multi-node sessions: the overlay slot (subnet and VXLAN id) a session holds while
    // it is not ended
    r#"
    ALTER TABLE sessions ADD COLUMN overlay_slot INTEGER;
    "#,
    // 11: model serving: services (endpoints), their routes (one inference session each) and
    // the tokens issued for them
    r#"
    CREATE TABLE endpoints (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        access_key TEXT NOT NULL,
        user_id TEXT NOT NULL,
        created_user TEXT NOT NULL,
        domain_name TEXT NOT NULL,
        project TEXT NOT NULL,
        scaling_group TEXT NOT NULL,
        image TEXT NOT NULL,
        model_id TEXT NOT NULL,
        model_mount TEXT NOT NULL,
        model_definition_path TEXT,
        replicas INTEGER NOT NULL,
        spec TEXT NOT NULL,
        open_to_public INTEGER NOT NULL,
        runtime_variant TEXT NOT NULL,
        url TEXT,
        port INTEGER,
        lifecycle TEXT NOT NULL DEFAULT 'created',
        retries INTEGER NOT NULL DEFAULT 0,
        token_secret TEXT NOT NULL,
        created_at TEXT NOT NULL,
        destroyed_at TEXT
    );
    CREATE UNIQUE INDEX endpoints_live_name ON endpoints(access_key, name)
        WHERE lifecycle != 'destroyed';
    CREATE TABLE routes (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        session_id TEXT,
        status TEXT NOT NULL,
        traffic_ratio REAL NOT NULL DEFAULT 1.0,
        error TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX routes_by_endpoint ON routes(endpoint_id);
    CREATE TABLE endpoint_tokens (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        valid_until TEXT NOT NULL
    );
    "#,
    // 12: services' auto-scaling rules (the rule as JSON) and the record of every decision
    r#"
    CREATE TABLE endpoint_rules (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        rule TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_triggered_at TEXT
    );
    CREATE INDEX endpoint_rules_by_endpoint ON endpoint_rules(endpoint_id);
    CREATE TABLE endpoint_decisions (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        at TEXT NOT NULL,
        decision TEXT NOT NULL
    );
    CREATE INDEX endpoint_decisions_by_endpoint ON endpoint_decisions(endpoint_id, at);
    "#,
    // 13: images users made from their sessions (convert to image), images an admin forgot,
    // and aliases an admin removed (so an agent's next connect does not bring them back).
    r#"
    CREATE TABLE customized_images (
        id TEXT PRIMARY KEY,
        reference TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        owner_user_id TEXT NOT NULL,
        owner_email TEXT NOT NULL,
        base_image TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        size_bytes INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    );
    CREATE INDEX customized_images_by_owner ON customized_images(owner_user_id, name);
    CREATE TABLE forgotten_images (reference TEXT PRIMARY KEY, forgotten_at TEXT NOT NULL);
    CREATE TABLE removed_image_aliases (alias TEXT PRIMARY KEY);
    "#,
    // 14: user resource policies (Backend.AI's per-user limits), `default` for every user
    r#"
    CREATE TABLE user_resource_policies (
        name TEXT PRIMARY KEY,
        max_vfolder_count INTEGER NOT NULL DEFAULT 0,
        max_quota_scope_size INTEGER NOT NULL DEFAULT -1,
        max_session_count_per_model_session INTEGER NOT NULL DEFAULT 16,
        max_customized_image_count INTEGER NOT NULL DEFAULT 3,
        created_at TEXT NOT NULL
    );
    INSERT INTO user_resource_policies(name, created_at) VALUES ('default', '1970-01-01T00:00:00Z');
    ALTER TABLE users ADD COLUMN resource_policy TEXT NOT NULL DEFAULT 'default';
    "#,
    // 15: per-keypair request rate limits (Backend.AI's `rate_limit`, requests per 15 min),
    // idempotency keys of session creates, the audit log of who did what, and what the web
    // UI keeps per user (the launcher's Recent History).
    r#"
    ALTER TABLE keypairs ADD COLUMN rate_limit INTEGER NOT NULL DEFAULT 10000;
    CREATE TABLE idempotency_keys (
        access_key TEXT NOT NULL,
        key TEXT NOT NULL,
        digest TEXT NOT NULL,
        session_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (access_key, key)
    );
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        access_key TEXT,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX audit_log_by_at ON audit_log(at);
    CREATE TABLE user_settings (
        user_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (user_id, key)
    );
    "#,
    // 16: Backend.AI's domain → project → user tree and the admin fields its GraphQL carries:
    // domains, users' profile and status, projects' ids (the `gid` of `modify_group`), the
    // resource groups' activity, driver and session types, the keypair policies' extra limits.
    r#"
    CREATE TABLE domains (
        name TEXT PRIMARY KEY,
        description TEXT NOT NULL DEFAULT '',
        is_active INTEGER NOT NULL DEFAULT 1,
        total_resource_slots TEXT NOT NULL DEFAULT '{}',
        allowed_vfolder_hosts TEXT NOT NULL DEFAULT '{}',
        allowed_docker_registries TEXT NOT NULL DEFAULT '[]',
        integration_id TEXT,
        created_at TEXT NOT NULL
    );
    INSERT INTO domains(name, description, created_at)
        VALUES ('default', 'the default domain', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
    ALTER TABLE users ADD COLUMN username TEXT NOT NULL DEFAULT '';
    UPDATE users SET username = CASE WHEN instr(email, '@') > 1
        THEN substr(email, 1, instr(email, '@') - 1) ELSE email END;
    ALTER TABLE users ADD COLUMN full_name TEXT NOT NULL DEFAULT '';
    ALTER TABLE users ADD COLUMN description TEXT NOT NULL DEFAULT '';
    ALTER TABLE users ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
    ALTER TABLE users ADD COLUMN need_password_change INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE users ADD COLUMN domain_name TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE projects ADD COLUMN id TEXT;
    ALTER TABLE projects ADD COLUMN is_active INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE projects ADD COLUMN domain_name TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE projects ADD COLUMN total_resource_slots TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE projects ADD COLUMN allowed_vfolder_hosts TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE projects ADD COLUMN integration_id TEXT;
    ALTER TABLE resource_groups ADD COLUMN is_active INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE resource_groups ADD COLUMN driver TEXT NOT NULL DEFAULT 'static';
    ALTER TABLE resource_groups ADD COLUMN driver_opts TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE resource_groups ADD COLUMN use_host_network INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE resource_groups ADD COLUMN wsproxy_addr TEXT;
    ALTER TABLE resource_groups ADD COLUMN allowed_session_types TEXT NOT NULL
        DEFAULT '["interactive","batch","inference"]';
    ALTER TABLE resource_policies ADD COLUMN allowed_vfolder_hosts TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE resource_policies ADD COLUMN max_concurrent_sftp_sessions INTEGER NOT NULL
        DEFAULT 1;
    ALTER TABLE resource_policies ADD COLUMN default_for_unspecified TEXT NOT NULL
        DEFAULT 'UNLIMITED';
    "#,
    // 17: session templates (Backend.AI's task templates): a stored session request that a
    // session is created from, its fields overridden by the create call's.
    r#"
    CREATE TABLE session_templates (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        access_key TEXT NOT NULL,
        project TEXT,
        domain_name TEXT NOT NULL DEFAULT 'default',
        template TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX session_templates_by_user ON session_templates(user_id);
    "#,
    // 18: folder sharing: a user's own folder shared by invitation (accepted invitations make
    // shares), and per-user permissions overriding a project folder's for its members.
    r#"
    CREATE TABLE vfolder_shares (
        vfolder_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        permission TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (vfolder_id, user_id)
    );
    CREATE INDEX vfolder_shares_by_user ON vfolder_shares(user_id);
    CREATE TABLE vfolder_invitations (
        id TEXT PRIMARY KEY,
        vfolder_id TEXT NOT NULL,
        inviter_id TEXT NOT NULL,
        invitee_id TEXT NOT NULL,
        permission TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        created_at TEXT NOT NULL,
        modified_at TEXT
    );
    CREATE INDEX vfolder_invitations_by_invitee ON vfolder_invitations(invitee_id, state);
    "#,
    // 19: egress policies: a resource group's (JSON of bai_core::egress::EgressPolicy; the
    // closed-by-default policy for every group, old ones included) and the one each session
    // was started under (set at its launch).
    r#"
    ALTER TABLE resource_groups ADD COLUMN egress TEXT NOT NULL DEFAULT '{"mode":"default"}';
    ALTER TABLE sessions ADD COLUMN egress TEXT;
    "#,
    // 20: scheduling history records are known by a UUID (Backend.AI's ids); the integer id
    // stays their order. Records made before get a random (version 4) one.
    r#"
    ALTER TABLE scheduling_history ADD COLUMN uuid TEXT;
    UPDATE scheduling_history SET uuid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2)))
        || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
        || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2)
        || '-' || lower(hex(randomblob(6)));
    CREATE UNIQUE INDEX scheduling_history_by_uuid ON scheduling_history(uuid);
    "#,
    // 21: a user's dotfiles (bai_core::dotfile), written into every session they start.
    r#"
    CREATE TABLE dotfiles (
        user_id TEXT NOT NULL,
        path TEXT NOT NULL,
        mode INTEGER NOT NULL,
        data TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (user_id, path)
    );
    "#,
];
