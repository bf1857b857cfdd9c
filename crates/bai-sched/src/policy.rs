//! A resource group's scheduling choices: how agents are picked and in which order queued
//! sessions are tried.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Spread load: the agent with the most free slots.
    #[default]
    Dispersed,
    /// Pack: the agent with the fewest free slots that still fits (bin packing).
    Concentrated,
    /// Take turns over the fitting agents in id order.
    RoundRobin,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [
        Strategy::Dispersed,
        Strategy::Concentrated,
        Strategy::RoundRobin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Dispersed => "dispersed",
            Strategy::Concentrated => "concentrated",
            Strategy::RoundRobin => "round-robin",
        }
    }

    pub fn parse(s: &str) -> Option<Strategy> {
        let s = if s == "roundrobin" { "round-robin" } else { s };
        Strategy::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sequencer {
    /// First come, first served.
    #[default]
    Fifo,
    /// Last come, first served.
    Lifo,
    /// Dominant resource fairness across owners.
    Drf,
    /// Usage-decayed fair share (Slurm's multifactor priority, `fairshare` module).
    FairShare,
}

impl Sequencer {
    pub const ALL: [Sequencer; 4] = [
        Sequencer::Fifo,
        Sequencer::Lifo,
        Sequencer::Drf,
        Sequencer::FairShare,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Sequencer::Fifo => "fifo",
            Sequencer::Lifo => "lifo",
            Sequencer::Drf => "drf",
            Sequencer::FairShare => "fairshare",
        }
    }

    pub fn parse(s: &str) -> Option<Sequencer> {
        Sequencer::ALL.into_iter().find(|x| x.as_str() == s)
    }
}
