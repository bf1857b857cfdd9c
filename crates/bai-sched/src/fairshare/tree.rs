//! The share tree (domain → project → user) and Slurm's classic fair-share factor.
//!
//! For each node, with `S` its raw shares and `ΣS` those of it and its siblings:
//! - normalized shares `s = s_parent × S / ΣS` (the root has 1);
//! - normalized usage `u = usage / usage of the whole tree`;
//! - effective usage `ue = u + (ue_parent − u) × S / ΣS`, so a node inherits part of its
//!   parent's over- or under-use (a domain, under the root: `ue = u`, as Slurm does);
//! - fair-share factor `F = 2^(−ue / s)`: 1 for no usage, 0.5 for a domain at exactly its
//!   share, towards 0 above it.

use std::collections::HashMap;

/// Who a session's usage is charged to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Account {
    pub domain: String,
    pub project: String,
    pub user: String,
}

impl Account {
    pub fn new(domain: &str, project: &str, user: &str) -> Account {
        Account {
            domain: domain.into(),
            project: project.into(),
            user: user.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Root,
    Domain,
    Project,
    User,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Root => "root",
            Level::Domain => "domain",
            Level::Project => "project",
            Level::User => "user",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        [Level::Domain, Level::Project, Level::User]
            .into_iter()
            .find(|l| l.as_str() == s)
    }
}

/// Shares set by administrators, by level and name (a user's by its id, in every project
/// it is in); a node not named has 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shares(pub HashMap<(Level, String), f64>);

impl Shares {
    pub fn of(&self, level: Level, name: &str) -> f64 {
        self.0
            .get(&(level, name.to_string()))
            .copied()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(1.0)
    }
}

/// One node of the tree, with what the factor is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub level: Level,
    pub name: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub raw_shares: f64,
    pub norm_shares: f64,
    /// Decayed weighted resource-seconds.
    pub usage: f64,
    pub norm_usage: f64,
    pub effective_usage: f64,
    pub factor: f64,
}

/// The tree of one resource group.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareTree {
    nodes: Vec<Node>,
    leaves: HashMap<Account, usize>,
}

impl Default for ShareTree {
    fn default() -> ShareTree {
        ShareTree::build(std::iter::empty(), &Shares::default())
    }
}

impl ShareTree {
    /// A tree with every account given (usage already decayed to now; an account given twice
    /// adds up) and their shares.
    pub fn build(accounts: impl IntoIterator<Item = (Account, f64)>, shares: &Shares) -> ShareTree {
        let mut t = ShareTree {
            nodes: vec![Node {
                level: Level::Root,
                name: String::new(),
                parent: None,
                children: Vec::new(),
                raw_shares: 1.0,
                norm_shares: 1.0,
                usage: 0.0,
                norm_usage: 0.0,
                effective_usage: 0.0,
                factor: 1.0,
            }],
            leaves: HashMap::new(),
        };
        let mut inner: HashMap<(usize, String), usize> = HashMap::new();
        for (a, usage) in accounts {
            let usage = if usage.is_finite() {
                usage.max(0.0)
            } else {
                0.0
            };
            let d = t.child(&mut inner, 0, Level::Domain, &a.domain, shares);
            let p = t.child(&mut inner, d, Level::Project, &a.project, shares);
            let u = t.child(&mut inner, p, Level::User, &a.user, shares);
            t.leaves.insert(a, u);
            for i in [0, d, p, u] {
                t.nodes[i].usage += usage;
            }
        }
        t.compute();
        t
    }

    fn child(
        &mut self,
        inner: &mut HashMap<(usize, String), usize>,
        parent: usize,
        level: Level,
        name: &str,
        shares: &Shares,
    ) -> usize {
        if let Some(&i) = inner.get(&(parent, name.to_string())) {
            return i;
        }
        let i = self.nodes.len();
        self.nodes.push(Node {
            level,
            name: name.to_string(),
            parent: Some(parent),
            children: Vec::new(),
            raw_shares: shares.of(level, name),
            norm_shares: 0.0,
            usage: 0.0,
            norm_usage: 0.0,
            effective_usage: 0.0,
            factor: 1.0,
        });
        self.nodes[parent].children.push(i);
        inner.insert((parent, name.to_string()), i);
        i
    }

    fn compute(&mut self) {
        let total = self.nodes[0].usage;
        let root_eff = if total > 0.0 { 1.0 } else { 0.0 };
        self.nodes[0].norm_usage = root_eff;
        self.nodes[0].effective_usage = root_eff;
        self.nodes[0].factor = factor(root_eff, 1.0);
        // Parents come before their children in `nodes`.
        for i in 1..self.nodes.len() {
            let Some(p) = self.nodes[i].parent else {
                continue;
            };
            let siblings: f64 = self.nodes[p]
                .children
                .iter()
                .map(|&c| self.nodes[c].raw_shares)
                .sum();
            let frac = if siblings > 0.0 {
                self.nodes[i].raw_shares / siblings
            } else {
                0.0
            };
            let nu = if total > 0.0 {
                self.nodes[i].usage / total
            } else {
                0.0
            };
            let (p_norm, p_eff) = (self.nodes[p].norm_shares, self.nodes[p].effective_usage);
            let n = &mut self.nodes[i];
            n.norm_shares = p_norm * frac;
            n.norm_usage = nu;
            n.effective_usage = if p == 0 { nu } else { nu + (p_eff - nu) * frac };
            n.factor = factor(n.effective_usage, n.norm_shares);
        }
    }

    /// The user node of `a`, if it is in the tree.
    pub fn leaf(&self, a: &Account) -> Option<&Node> {
        self.leaves.get(a).map(|&i| &self.nodes[i])
    }

    /// The fair-share factor of `a` (0.5 for an account the tree does not know: at its share).
    pub fn factor(&self, a: &Account) -> f64 {
        self.leaf(a).map_or(0.5, |n| n.factor)
    }

    /// The usage of the whole tree.
    pub fn total_usage(&self) -> f64 {
        self.nodes[0].usage
    }

    /// Every node but the root, depth first, each level's children by name, with its depth
    /// (1: domain).
    pub fn walk(&self) -> Vec<(usize, &Node)> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<(usize, usize)> = self.sorted_children(0).map(|c| (c, 1)).collect();
        stack.reverse();
        while let Some((i, depth)) = stack.pop() {
            out.push((depth, &self.nodes[i]));
            let mut kids: Vec<(usize, usize)> =
                self.sorted_children(i).map(|c| (c, depth + 1)).collect();
            kids.reverse();
            stack.extend(kids);
        }
        out
    }

    fn sorted_children(&self, i: usize) -> impl Iterator<Item = usize> {
        let mut kids = self.nodes[i].children.clone();
        kids.sort_by(|&a, &b| self.nodes[a].name.cmp(&self.nodes[b].name));
        kids.into_iter()
    }
}

/// `2^(−effective usage / normalized shares)` (0 for a node without shares).
pub fn factor(effective_usage: f64, norm_shares: f64) -> f64 {
    if norm_shares <= 0.0 {
        return 0.0;
    }
    (-effective_usage / norm_shares).exp2()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(d: &str, p: &str, u: &str) -> Account {
        Account::new(d, p, u)
    }

    #[test]
    fn no_usage_gives_everyone_one() {
        let t = ShareTree::build(
            [(a("d", "p", "x"), 0.0), (a("d", "q", "y"), 0.0)],
            &Shares::default(),
        );
        assert_eq!(t.factor(&a("d", "p", "x")), 1.0);
        assert_eq!(t.factor(&a("d", "q", "y")), 1.0);
    }

    #[test]
    fn heavy_usage_lowers_the_factor() {
        let t = ShareTree::build(
            [(a("d", "p", "heavy"), 900.0), (a("d", "p", "light"), 100.0)],
            &Shares::default(),
        );
        let (h, l) = (
            t.factor(&a("d", "p", "heavy")),
            t.factor(&a("d", "p", "light")),
        );
        assert!(h < l, "heavy {h} light {l}");
        // A domain at exactly its share has one half.
        let even = ShareTree::build(
            [(a("d", "p", "x"), 50.0), (a("e", "p", "y"), 50.0)],
            &Shares::default(),
        );
        let d = even.walk()[0].1;
        assert_eq!(d.name, "d");
        assert!((d.factor - 0.5).abs() < 1e-9);
        // Its users share its effective usage: equal users, equal factors.
        let even = ShareTree::build(
            [(a("d", "p", "x"), 50.0), (a("d", "p", "y"), 50.0)],
            &Shares::default(),
        );
        assert_eq!(
            even.factor(&a("d", "p", "x")),
            even.factor(&a("d", "p", "y"))
        );
    }

    #[test]
    fn shares_go_down_the_tree() {
        // Project big has twice the shares of small; each used the same.
        let shares = Shares(HashMap::from([((Level::Project, "big".to_string()), 2.0)]));
        let t = ShareTree::build(
            [(a("d", "big", "x"), 100.0), (a("d", "small", "y"), 100.0)],
            &shares,
        );
        let big = t.leaf(&a("d", "big", "x")).unwrap();
        let small = t.leaf(&a("d", "small", "y")).unwrap();
        assert!((big.norm_shares - 2.0 / 3.0).abs() < 1e-9);
        assert!((small.norm_shares - 1.0 / 3.0).abs() < 1e-9);
        assert!(big.factor > small.factor);
        // A project's usage counts for its users who used nothing: a user in the busy
        // project ranks below one in an idle project.
        let t = ShareTree::build(
            [
                (a("d", "busy", "x"), 1000.0),
                (a("d", "busy", "newcomer"), 0.0),
                (a("d", "idle", "y"), 0.0),
            ],
            &Shares::default(),
        );
        assert!(t.factor(&a("d", "busy", "newcomer")) < t.factor(&a("d", "idle", "y")));
    }

    #[test]
    fn the_walk_is_depth_first_by_name() {
        let t = ShareTree::build(
            [
                (a("d", "q", "z"), 1.0),
                (a("d", "p", "y"), 1.0),
                (a("d", "p", "x"), 1.0),
            ],
            &Shares::default(),
        );
        let names: Vec<(usize, &str)> = t
            .walk()
            .into_iter()
            .map(|(d, n)| (d, n.name.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![(1, "d"), (2, "p"), (3, "x"), (3, "y"), (2, "q"), (3, "z")]
        );
        assert_eq!(t.total_usage(), 3.0);
    }
}
