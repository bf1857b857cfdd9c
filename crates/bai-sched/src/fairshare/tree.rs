//! The share tree (domain → project → user) and a level-wise fair-share factor.
//!
//! For each node, with `S` its raw shares and `ΣS` those of it and its siblings:
//! - normalized shares `s = s_parent × S / ΣS` (the root has 1), shown as Slurm shows them;
//! - normalized usage `u = usage / usage of the whole tree`;
//! - at its own level, the share among its siblings `ls = S / ΣS`, the usage among them
//!   `lu = usage / usage of the parent` (0 when the parent has none) and their ratio
//!   `r = lu / ls` (1: its siblings and it used the parent's usage as their shares say);
//! - fair-share factor `F = 2^(−mean r)`, the mean over the levels from the domain down to
//!   it where the node on its path has siblings (a node alone under its parent says nothing:
//!   its `r` is 1, or 0 with the parent unused; every level when none has siblings): 1 for no
//!   usage, 0.5 when every level on its path is exactly at its share, towards 0 above; 0
//!   under a node without shares. Effective usage is `ue = s × mean r`, so `F = 2^(−ue / s)`
//!   as in Slurm's printout (for a domain, `ue = u`, as in Slurm's classic factor).
//!
//! Siblings share every term above their own level, so their factors are equal exactly when
//! their usage is split as their shares: under a scheduler that starts the highest factor,
//! siblings converge to their share ratio at any depth. Slurm's classic factor
//! (`ue = u + (ue_parent − u) × S / ΣS`) is not kept: it lets a project inherit part of its
//! domain's usage, and three projects with shares 2:1:1 in one domain then balance at
//! 60/20/20 % instead of 50/25/25 % (bench/fairshare.sh measured 56.9/21.2/21.9 %; the bias that
//! made Slurm add its Fair Tree algorithm).

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
    /// Its shares among its siblings (`S / ΣS`).
    pub local_shares: f64,
    /// Its usage among its siblings' (`usage / usage of the parent`; 0 when that is 0).
    pub local_usage: f64,
    /// `local_usage / local_shares` (0 without usage, infinite with usage and no shares).
    pub level_ratio: f64,
    /// `norm_shares × mean level_ratio` down its path.
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
                local_shares: 1.0,
                local_usage: 0.0,
                level_ratio: 0.0,
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
            local_shares: 0.0,
            local_usage: 0.0,
            level_ratio: 0.0,
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
        self.nodes[0].local_usage = root_eff;
        // Down each node's path: the level ratios of the levels where it has siblings, their
        // count, and those of every level and their count.
        let mut sums = vec![Sums::default(); self.nodes.len()];
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
            let ls = if siblings > 0.0 {
                self.nodes[i].raw_shares / siblings
            } else {
                0.0
            };
            let alone = self.nodes[p].children.len() == 1;
            let (p_norm, p_usage) = (self.nodes[p].norm_shares, self.nodes[p].usage);
            let n = &mut self.nodes[i];
            n.norm_shares = p_norm * ls;
            n.norm_usage = if total > 0.0 { n.usage / total } else { 0.0 };
            n.local_shares = ls;
            n.local_usage = if p_usage > 0.0 {
                n.usage / p_usage
            } else {
                0.0
            };
            n.level_ratio = ratio(n.local_usage, ls);
            sums[i] = sums[p].add(n.level_ratio, alone);
            let mean = sums[i].mean();
            n.effective_usage = if n.norm_shares > 0.0 {
                n.norm_shares * mean
            } else {
                0.0
            };
            n.factor = level_factor(mean, n.norm_shares);
        }
    }

    /// The factor of `a` as if `extra` more usage were charged to it and to each node above
    /// it, each level's added fraction taken against `max(the parent's usage, floor)` (the
    /// burst penalty: the other accounts' usage does not move). An account the tree does not
    /// know counts as at its share with the extra against `max(total usage, floor)`.
    pub fn factor_with(&self, a: &Account, extra: f64, floor: f64) -> f64 {
        let extra = if extra.is_finite() {
            extra.max(0.0)
        } else {
            0.0
        };
        let Some(&leaf) = self.leaves.get(a) else {
            let denom = self.total_usage().max(floor);
            let add = if denom > 0.0 { extra / denom } else { 0.0 };
            return level_factor(1.0 + add, 1.0);
        };
        let mut sums = Sums::default();
        let mut at = leaf;
        while let Some(p) = self.nodes[at].parent {
            let n = &self.nodes[at];
            let denom = self.nodes[p].usage.max(floor);
            let lu = if denom > 0.0 {
                n.local_usage + extra / denom
            } else {
                n.local_usage
            };
            sums = sums.add(ratio(lu, n.local_shares), self.nodes[p].children.len() == 1);
            at = p;
        }
        level_factor(sums.mean(), self.nodes[leaf].norm_shares)
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

/// Level ratios summed down a path.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    /// Over the levels where the node has siblings.
    shared: f64,
    shared_n: usize,
    /// Over every level.
    all: f64,
    all_n: usize,
}

impl Sums {
    fn add(self, ratio: f64, alone: bool) -> Sums {
        let (shared, shared_n) = if alone {
            (self.shared, self.shared_n)
        } else {
            (self.shared + ratio, self.shared_n + 1)
        };
        Sums {
            shared,
            shared_n,
            all: self.all + ratio,
            all_n: self.all_n + 1,
        }
    }

    /// The mean over the levels where the node has siblings (a node alone under its parent
    /// is always at its share there, 1, or unused with it, 0: nothing to compare), or over
    /// every level when it has none.
    fn mean(self) -> f64 {
        if self.shared_n > 0 {
            self.shared / self.shared_n as f64
        } else if self.all_n > 0 {
            self.all / self.all_n as f64
        } else {
            0.0
        }
    }
}

/// A level's usage fraction against its share fraction.
fn ratio(local_usage: f64, local_shares: f64) -> f64 {
    if local_usage <= 0.0 {
        0.0
    } else if local_shares <= 0.0 {
        f64::INFINITY
    } else {
        local_usage / local_shares
    }
}

/// `2^(−mean level ratio)` (0 under a node without shares).
fn level_factor(mean_ratio: f64, norm_shares: f64) -> f64 {
    if norm_shares <= 0.0 || !mean_ratio.is_finite() {
        return 0.0;
    }
    (-mean_ratio).exp2()
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
        // Equal users in one project, equal factors.
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
    fn siblings_meet_at_their_share_ratio() {
        // Shares 2:1:1 on three projects of one domain. Slurm's classic factor gives these
        // 2^-1.5 and 2^-1.75 (the big one inherits less of the domain's usage) and balances
        // at 60/20/20 instead.
        let shares = Shares(HashMap::from([((Level::Project, "big".to_string()), 2.0)]));
        let build = |big: f64, small: f64| {
            ShareTree::build(
                [
                    (a("d", "big", "x"), big),
                    (a("d", "p", "y"), small),
                    (a("d", "q", "z"), small),
                ],
                &shares,
            )
        };
        let t = build(50.0, 25.0);
        let (big, p, q) = (
            t.factor(&a("d", "big", "x")),
            t.factor(&a("d", "p", "y")),
            t.factor(&a("d", "q", "z")),
        );
        assert!(
            (big - p).abs() < 1e-12 && (p - q).abs() < 1e-12,
            "{big} {p} {q}"
        );
        // Every level at its share: one half.
        assert!((big - 0.5).abs() < 1e-12, "{big}");
        let x = t.leaf(&a("d", "big", "x")).unwrap();
        assert!((factor(x.effective_usage, x.norm_shares) - x.factor).abs() < 1e-12);
        let t = build(60.0, 20.0);
        assert!(t.factor(&a("d", "big", "x")) < t.factor(&a("d", "p", "y")));
        // The same one level down: users with shares 2:1:1 in one project.
        let shares = Shares(HashMap::from([((Level::User, "x".to_string()), 2.0)]));
        let t = ShareTree::build(
            [
                (a("d", "p", "x"), 50.0),
                (a("d", "p", "y"), 25.0),
                (a("d", "p", "z"), 25.0),
                (a("e", "q", "w"), 100.0),
            ],
            &shares,
        );
        let (x, y) = (t.factor(&a("d", "p", "x")), t.factor(&a("d", "p", "y")));
        assert!((x - y).abs() < 1e-12, "{x} {y}");
    }

    #[test]
    fn extra_usage_lowers_the_factor_like_usage() {
        let t = ShareTree::build(
            [(a("d", "p", "x"), 100.0), (a("d", "p", "y"), 100.0)],
            &Shares::default(),
        );
        let x = a("d", "p", "x");
        assert_eq!(t.factor_with(&x, 0.0, 0.0), t.factor(&x));
        // 100 more charged to x, against the parents' usage as it stands (200): x's
        // fraction of its project goes 0.5 → 1.0, ratio 2 (the project and the domain are
        // alone at their levels and do not count).
        let got = t.factor_with(&x, 100.0, 0.0);
        assert!((got - 0.25).abs() < 1e-12, "{got}");
        // With a sibling project, that level counts too: 1.0 → 1.5 of the domain's usage.
        let t2 = ShareTree::build(
            [
                (a("d", "p", "x"), 100.0),
                (a("d", "p", "y"), 100.0),
                (a("d", "q", "z"), 0.0),
            ],
            &Shares::default(),
        );
        let got2 = t2.factor_with(&x, 100.0, 0.0);
        assert!(
            (got2 - (-(3.0 + 2.0) / 2.0f64).exp2()).abs() < 1e-12,
            "{got2}"
        );
        // A floor above the usage makes the same extra weigh less.
        assert!(t.factor_with(&x, 100.0, 1.0e6) > got);
        // An unknown account: at its share, then lower.
        let n = a("d", "p", "new");
        assert_eq!(t.factor_with(&n, 0.0, 0.0), 0.5);
        assert!(t.factor_with(&n, 100.0, 0.0) < 0.5);
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
