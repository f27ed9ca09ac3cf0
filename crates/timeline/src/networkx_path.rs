//! The longest path of a [`CriticalPathGraph`] exactly as HTA finds it: networkx's
//! `dag_longest_path(G, weight="weight")` (networkx 3.x, `algorithms/dag.py`) over the
//! `DiGraph` HTA builds, whose nodes come in the order the edges first name them and whose
//! edges are added in the graph's edge order with their weight in µs, negative ones as 0.
//! Among equally long paths networkx picks by that order (its topological generations, the
//! first best predecessor, the first farthest node), so the path here is the one a
//! `networkx.DiGraph` of the same edges gives, without building one in Python.

use trace_model::FastMap;

use crate::critical_path::CriticalPathGraph;

impl CriticalPathGraph {
    /// networkx's `dag_longest_path` over the graph's edges (see the module doc): the
    /// path's nodes first to last and the positions in [`CriticalPathGraph::edges`] of its
    /// edges; None when the graph has no edge or a cycle (networkx raises there).
    pub fn networkx_path(&self) -> Option<(Vec<usize>, Vec<usize>)> {
        let edges: Vec<(usize, usize, f64)> = self
            .edges
            .iter()
            .map(|e| (e.begin, e.end, (e.weight as f64 / 1000.0).max(0.0)))
            .collect();
        networkx_longest_path(&edges)
    }
}

/// networkx's `dag_longest_path` of the `DiGraph` made by `add_edge(u, v, weight=w)` over
/// `edges` in order: (the path's nodes, the position in `edges` of each of its edges, the
/// last one added where an edge was added twice). None without edges or with a cycle.
pub(crate) fn networkx_longest_path(
    edges: &[(usize, usize, f64)],
) -> Option<(Vec<usize>, Vec<usize>)> {
    // The DiGraph: nodes in first-seen order; successors and predecessors in insertion
    // order (adding an edge again keeps its place and takes the new weight).
    let mut index: FastMap<usize, usize> = FastMap::default();
    let mut node: Vec<usize> = Vec::new();
    let mut id = |v: usize, node: &mut Vec<usize>| {
        *index.entry(v).or_insert_with(|| {
            node.push(v);
            node.len() - 1
        })
    };
    let mut slot: FastMap<(usize, usize), usize> = FastMap::default();
    let mut succ: Vec<Vec<usize>> = Vec::new();
    let mut pred: Vec<Vec<(usize, usize)>> = Vec::new();
    for (k, &(u, v, _)) in edges.iter().enumerate() {
        let (a, b) = (id(u, &mut node), id(v, &mut node));
        succ.resize(node.len(), Vec::new());
        pred.resize(node.len(), Vec::new());
        if slot.insert((a, b), k).is_some() {
            // Added again: the same place, the later edge's data.
            if let Some(p) = pred[b].iter_mut().find(|(from, _)| *from == a) {
                p.1 = k;
            }
            continue;
        }
        succ[a].push(b);
        pred[b].push((a, k));
    }
    let n = node.len();
    if n == 0 {
        return None;
    }
    // topological_sort: the generations of topological_generations, in order.
    let mut indeg: Vec<usize> = pred.iter().map(Vec::len).collect();
    let mut generation: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut topo = Vec::with_capacity(n);
    while !generation.is_empty() {
        let mut next = Vec::new();
        for &v in &generation {
            for &c in &succ[v] {
                indeg[c] -= 1;
                if indeg[c] == 0 {
                    next.push(c);
                }
            }
        }
        topo.append(&mut generation);
        generation = next;
    }
    if topo.len() != n {
        return None; // a cycle: networkx raises NetworkXUnfeasible
    }
    // dist[v] = (length, best predecessor or v itself, that edge's position).
    let mut dist: Vec<(f64, usize, Option<usize>)> = vec![(0.0, 0, None); n];
    for &v in &topo {
        let mut best: Option<(f64, usize, usize)> = None;
        for &(u, k) in &pred[v] {
            let d = dist[u].0 + edges[k].2;
            if best.is_none_or(|(b, ..)| d > b) {
                best = Some((d, u, k));
            }
        }
        dist[v] = match best {
            Some((d, u, k)) if d >= 0.0 => (d, u, Some(k)),
            _ => (0.0, v, None),
        };
    }
    let mut v = topo[0];
    for &w in &topo {
        if dist[w].0 > dist[v].0 {
            v = w;
        }
    }
    let (mut path, mut on) = (vec![node[v]], Vec::new());
    while let (_, u, Some(k)) = dist[v] {
        on.push(k);
        path.push(node[u]);
        v = u;
    }
    path.reverse();
    on.reverse();
    Some((path, on))
}

#[cfg(test)]
mod tests {
    use super::networkx_longest_path as nx;

    #[test]
    fn no_edge_and_cycles_have_no_path() {
        assert_eq!(nx(&[]), None);
        assert_eq!(nx(&[(1, 2, 1.0), (2, 1, 1.0)]), None);
        assert_eq!(nx(&[(0, 1, 1.0), (1, 2, 1.0), (2, 1, 1.0)]), None);
    }

    #[test]
    fn the_longest_path_wins_over_the_shorter_one() {
        // 0 → 1 → 3 is 5, 0 → 2 → 3 is 3.
        let e = [(0, 1, 2.0), (0, 2, 2.0), (1, 3, 3.0), (2, 3, 1.0)];
        assert_eq!(nx(&e), Some((vec![0, 1, 3], vec![0, 2])));
    }

    #[test]
    fn ties_go_as_in_networkx() {
        // Two equally long ways to 3: the first predecessor in insertion order wins
        // (networkx's `max` keeps the first of equals): 1 was added before 2.
        let e = [(0, 1, 1.0), (0, 2, 1.0), (2, 3, 1.0), (1, 3, 1.0)];
        // pred[3] = [2, 1] (edge order), so 2 is first.
        assert_eq!(nx(&e), Some((vec![0, 2, 3], vec![1, 2])));
        // Two sinks equally far: the first in topological order (generation by generation,
        // each in the order its nodes were reached) is the end. nx: [0, 1].
        let e = [(0, 1, 1.0), (0, 2, 1.0)];
        assert_eq!(nx(&e), Some((vec![0, 1], vec![0])));
        // The first generation is the nodes without predecessors in first-seen order:
        // 5 (seen first) and 0; both paths are 1 long; 5's successor 6 comes first.
        let e = [(5, 6, 1.0), (0, 1, 1.0)];
        assert_eq!(nx(&e), Some((vec![5, 6], vec![0])));
        // Zero weights: every node is at 0, the first node in topological order ends it.
        let e = [(3, 4, 0.0), (4, 5, 0.0)];
        assert_eq!(nx(&e), Some((vec![3], vec![])));
    }

    #[test]
    fn an_edge_added_twice_keeps_its_place_and_takes_the_new_weight() {
        let e = [(0, 1, 5.0), (0, 2, 1.0), (0, 1, 0.5)];
        // 0 → 2 (1.0) now beats 0 → 1 (0.5); the edge of 0 → 1 is the later one.
        assert_eq!(nx(&e), Some((vec![0, 2], vec![1])));
        let e = [(0, 1, 1.0), (0, 1, 7.0)];
        assert_eq!(nx(&e), Some((vec![0, 1], vec![1])));
    }
}
