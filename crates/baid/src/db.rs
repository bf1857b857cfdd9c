//! `baid db backup FILE` and `baid db restore FILE`: a consistent copy of the database while
//! the server runs, and putting one back while it is stopped. (For PostgreSQL, when bai
//! runs on it, `pg_dump` is the tool.)

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
        DbCmd::Backup { file, data_dir } => {
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
