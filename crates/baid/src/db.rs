//! `baid db backup FILE` and `baid db restore FILE`: a consistent copy of the database while
//! the server runs, and putting one back while it is stopped (SQLite; for PostgreSQL,
//! `pg_dump` is the tool). `baid db migrate --from A --to B`: an installation moved from one
//! database to another (SQLite to PostgreSQL), every table compared afterwards.

use anyhow::{Result, bail};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct DbArgs {
    #[command(subcommand)]
    cmd: DbCmd,
}

#[derive(clap::Subcommand)]
enum DbCmd {
    /// Copy the database to FILE (a new file), consistent as of one moment; the server may
    /// keep running.
    Backup {
        /// The new file.
        file: PathBuf,
        /// The data dir whose database is copied.
        #[arg(long, env = "BAI_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The database, when it is not the data dir's (`baid up --database`).
        #[arg(long, env = "BAI_DATABASE", hide_env_values = true, value_name = "URL")]
        database: Option<String>,
    },
    /// Move an installation to another database: every table of FROM copied into TO (a new,
    /// empty database), then compared. Stop the managers first.
    Migrate {
        /// The database moved: `sqlite:PATH` (default: the data dir's bai.db) or a
        /// PostgreSQL URL.
        #[arg(long, value_name = "URL")]
        from: Option<String>,
        /// Where it goes: `postgres://USER@HOST/DB` (the database must exist and hold no
        /// installation yet) or `sqlite:PATH`.
        #[arg(long, value_name = "URL")]
        to: String,
        /// The data dir whose bai.db is moved when --from is not given.
        #[arg(long, env = "BAI_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Put the backup FILE in place of the data dir's database. The server must be stopped.
    Restore {
        /// A file made by `baid db backup`.
        file: PathBuf,
        /// The data dir to restore into.
        #[arg(long, env = "BAI_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Replace a database the data dir already has.
        #[arg(long)]
        replace: bool,
    },
}

pub fn run(args: DbArgs) -> Result<()> {
    match args.cmd {
        DbCmd::Backup {
            database: Some(url),
            ..
        } if bai_store::db::is_postgres_url(&url) => {
            bail!(
                "a PostgreSQL database is backed up with PostgreSQL's tools: pg_dump --format=custom --file=FILE '{}' (restore with pg_restore)",
                bai_store::db::redact(&url)
            );
        }
        DbCmd::Migrate { from, to, data_dir } => migrate(from, &to, data_dir)?,
        DbCmd::Backup { file, data_dir, .. } => {
            let data_dir = data_dir.unwrap_or_else(crate::default_data_dir);
            let info = bai_store::backup::backup(&data_dir.join("bai.db"), &file)?;
            println!(
                "backed up {} (schema {}, {} sessions) to {}",
                data_dir.join("bai.db").display(),
                info.schema_version,
                info.sessions,
                file.display()
            );
        }
        DbCmd::Restore {
            file,
            data_dir,
            replace,
        } => {
            let data_dir = data_dir.unwrap_or_else(crate::default_data_dir);
            std::fs::create_dir_all(&data_dir)?;
            let Some(_lock) = crate::lock::try_take(&data_dir)? else {
                bail!(
                    "a baid is running on {}; stop it before restoring",
                    data_dir.display()
                );
            };
            let db = data_dir.join("bai.db");
            if db.exists() && !replace {
                bail!(
                    "{} already has a database; add --replace to put the backup in its place",
                    data_dir.display()
                );
            }
            let info = bai_store::backup::restore(&file, &db)?;
            println!(
                "restored {} (schema {}, {} sessions) into {}",
                file.display(),
                info.schema_version,
                info.sessions,
                db.display()
            );
        }
    }
    Ok(())
}

/// `baid db migrate`: opens both (migrating each to this build's schema), copies, compares.
fn migrate(from: Option<String>, to: &str, data_dir: Option<PathBuf>) -> Result<()> {
    let data_dir = data_dir.unwrap_or_else(crate::default_data_dir);
    let own = data_dir.join("bai.db");
    let from = from.unwrap_or_else(|| format!("sqlite:{}", own.display()));
    // A baid on the data dir would go on writing to the database being moved.
    let _lock = if from.strip_prefix("sqlite:").map(std::path::Path::new) == Some(own.as_path()) {
        match crate::lock::try_take(&data_dir)? {
            Some(lock) => Some(lock),
            None => bail!(
                "a baid is running on {}; stop it before moving its database",
                data_dir.display()
            ),
        }
    } else {
        None
    };
    if let Some(path) = from.strip_prefix("sqlite:")
        && !std::path::Path::new(path).exists()
    {
        bail!("there is no database at {path}");
    }
    let source = bai_store::Store::open_database(&from)?;
    let dest = bai_store::Store::open_database(to)?;
    let copied = bai_store::copy::copy(&source, &dest)?;
    let rows: usize = copied.iter().map(|c| c.rows).sum();
    for c in copied.iter().filter(|c| c.rows > 0) {
        println!("  {:<28} {:>8} rows", c.table, c.rows);
    }
    let diff = bai_store::copy::differences(&source, &dest)?;
    if !diff.is_empty() {
        bail!("the copy differs from the source: {}", diff.join("; "));
    }
    println!(
        "moved {rows} rows of {} tables from {} to {}; every table compared equal",
        copied.len(),
        bai_store::db::redact(&from),
        bai_store::db::redact(to)
    );
    Ok(())
}
