//! Image commands: `bai images`, `bai image forget|purge` (your own images made from
//! sessions) and `bai admin image …` (aliases, forgetting general images, rescanning).

use clap::{Args, Subcommand};

#[derive(Args, Debug, Clone, Default)]
pub struct ImagesArgs {
    /// Only the images you made from sessions (convert-to-image).
    #[arg(long)]
    pub customized: bool,
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum ImageCmd {
    /// Same as `bai images`.
    #[command(visible_alias = "ls")]
    List(ImagesArgs),
    /// Hide one of your images made from a session (it no longer counts toward your quota);
    /// the agent keeps its layers.
    Forget {
        /// The image's id, reference or name (`NAME` of `convert-to-image`).
        image: String,
    },
    /// Delete one of your images made from a session from the agents that hold it.
    Purge {
        /// The image's id, reference or name.
        image: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum AdminImageCmd {
    /// Every image, with its agents and aliases.
    #[command(visible_alias = "ls")]
    List(ImagesArgs),
    /// Give an image a short name (`python` → `bai/python:3.11-bookworm`).
    Alias { alias: String, target: String },
    /// Remove an alias (an agent's next connect does not bring it back).
    Dealias { alias: String },
    /// Hide an image from the catalogue and from launches.
    Forget { image: String },
    /// Delete an image from every agent that holds it.
    Purge { image: String },
    /// Read every agent's images again.
    Rescan,
}
